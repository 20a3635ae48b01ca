/**
 * The contraction view: a report's `contractions` section (docs/explorer-protocol.md) drawn
 * from the data alone, so it works in a saved notebook with no kernel. Applying a rule follows
 * an edge of the precomputed rewrite graph; undo pops the view's own stack. Text goes in
 * through textContent only (dom.ts).
 */

import { clear, fmt, h, s } from './dom';
import { asArray, str } from './types';

export interface IStep {
  rule: string;
  position: number;
  param: number | null;
}

export interface IContractionTerm {
  id: number;
  text: string;
  order: string[];
  loops: string[];
  views: string[];
  nest: string;
  parallel: boolean;
  parallel_reason: string | null;
  derivation: IStep[];
}

export interface IContractionEdge extends IStep {
  source: number;
  target: number;
  equation: string;
}

export interface IContractionRefusal extends IStep {
  term: number;
  reason: string;
  message: string;
}

export interface IContractionTimings {
  numpy_seconds: number;
  repeat: number;
  records: { term: number; loops: string[]; serial_seconds: number; parallel_seconds: number | null }[];
}

export interface IContraction {
  n?: number;
  instructions?: number[];
  output?: string;
  operands?: string[];
  subscripts: string;
  shapes: number[][];
  dtype: string;
  start: number;
  complete: boolean;
  terms: IContractionTerm[];
  edges: IContractionEdge[];
  refusals: IContractionRefusal[];
  timings: IContractionTimings | null;
}

/** `map-rnz exchange at level 1` (`by 16` for a subdivision), as the Python view says it. */
export function stepLabel(st: IStep): string {
  const by = st.param === null || st.param === undefined ? '' : ` by ${fmt(st.param)}`;
  return `${str(st.rule)} at level ${fmt(st.position)}${by}`;
}

/** `C = einsum("ij,jk->ik", A, B): A 4x32, B 32x5, float64`. */
export function contractionTitle(c: IContraction): string {
  const ops = asArray<string>(c.operands);
  const [a, b] = [str(ops[0] ?? 'A'), str(ops[1] ?? 'B')];
  const shapes = asArray<number[]>(c.shapes).map(x => asArray<number>(x).map(fmt).join('x'));
  const many = asArray<number>(c.instructions);
  const where = many.length > 1 ? `instructions ${many.map(fmt).join(', ')}: `
    : typeof c.n === 'number' ? `instruction ${fmt(c.n)}: ` : '';
  return `${where}${str(c.output ?? 'C')} = einsum("${str(c.subscripts)}", ${a}, ${b}): ` +
    `${a} ${shapes[0] ?? ''}, ${b} ${shapes[1] ?? ''}, ${str(c.dtype)}`;
}

function loopsText(t: IContractionTerm | undefined): string {
  return asArray<string>(t?.loops).map(str).join(' ');
}

/** One contraction's view: current term, rule buttons, undo, refusals, derivation, nest, chart. */
export class ContractionView {
  readonly node: HTMLDivElement;
  private path: number[];
  private steps: IContractionEdge[] = [];

  constructor(private data: IContraction) {
    const start = Number(data.start) || 0;
    this.path = [this.term(start) ? start : 0];
    this.node = h('div', 'fl-contraction', { 'data-fl-section': 'contraction' });
    this.render();
  }

  get current(): number {
    return this.path[this.path.length - 1];
  }

  private term(k: number): IContractionTerm | undefined {
    return asArray<IContractionTerm>(this.data.terms).find(t => Number(t.id) === k);
  }

  /** Follow the edge (a rule application) to its target term. */
  apply(edge: IContractionEdge): void {
    if (!this.term(Number(edge.target))) {
      return;
    }
    this.path.push(Number(edge.target));
    this.steps.push(edge);
    this.render();
  }

  undo(): void {
    if (this.steps.length) {
      this.path.pop();
      this.steps.pop();
      this.render();
    }
  }

  reset(): void {
    this.path = this.path.slice(0, 1);
    this.steps = [];
    this.render();
  }

  private render(): void {
    const root = this.node;
    clear(root);
    const k = this.current;
    const t = this.term(k);
    root.setAttribute('data-fl-term', String(k));
    root.setAttribute('data-fl-loops', loopsText(t));
    root.appendChild(h('div', 'fl-pane-title', {}, contractionTitle(this.data)));
    const par = t?.parallel ? 'parallel over its outermost map' : `serial only: ${str(t?.parallel_reason)}`;
    root.appendChild(h('pre', 'fl-term-text', { 'data-fl-part': 'term' }, str(t?.text)));
    root.appendChild(h('div', 'fl-term-info', {},
      `term ${fmt(k)} of ${asArray(this.data.terms).length} · HoF order `,
      h('b', '', { 'data-fl-part': 'order' }, asArray<string>(t?.order).map(str).join(' ')),
      ' · loops ', h('code', '', { 'data-fl-part': 'loops' }, loopsText(t)), ` · ${par}`));
    root.appendChild(h('div', 'fl-term-info', {}, `layouts: ${asArray<string>(t?.views).map(str).join(' ; ')}`));

    const edges = asArray<IContractionEdge>(this.data.edges).filter(e => Number(e.source) === k);
    const buttons = edges.map(e => {
      const b = h('button', 'fl-button fl-rule', {
        type: 'button', title: `eq. ${str(e.equation)}`, 'data-fl-rule': str(e.rule),
        'data-fl-position': fmt(e.position), 'data-fl-param': e.param === null ? '' : fmt(e.param)
      }, stepLabel(e));
      b.addEventListener('click', () => this.apply(e));
      return b;
    });
    const undo = h('button', 'fl-button', { type: 'button', 'data-fl-action': 'undo', disabled: !this.steps.length },
      'undo');
    undo.addEventListener('click', () => this.undo());
    const reset = h('button', 'fl-button', { type: 'button', 'data-fl-action': 'start', disabled: !this.steps.length },
      'back to the start');
    reset.addEventListener('click', () => this.reset());
    root.appendChild(h('div', 'fl-rules', {}, h('b', '', {}, 'rules that apply here: '), ...buttons, ' ', undo, reset));

    const refusals = asArray<IContractionRefusal>(this.data.refusals).filter(r => Number(r.term) === k);
    root.appendChild(h('details', 'fl-refusals', {},
      h('summary', '', {}, `refused here (${refusals.length})`),
      h('ul', '', {}, ...refusals.map(r => h('li', '', { 'data-fl-reason': str(r.reason) },
        `${stepLabel(r)}: ${str(r.message)}`)))));

    const chain = [h('li', '', {}, 'start: ', h('code', '', {}, loopsText(this.term(this.path[0]))))];
    this.steps.forEach((st, i) => chain.push(h('li', '', {}, `${stepLabel(st)} (eq. ${str(st.equation)}) → `,
      h('code', '', {}, loopsText(this.term(this.path[i + 1]))))));
    const shortest = asArray<IStep>(t?.derivation).map(stepLabel).join(' ; ') || '(the start term)';
    root.appendChild(h('div', 'fl-derivation', { 'data-fl-part': 'derivation' }, h('b', '', {}, 'derivation'),
      h('ol', '', {}, ...chain), h('div', '', {}, `shortest from the start: ${shortest}`)));
    root.appendChild(h('div', 'fl-pane-title', {}, 'loop nest (Numba)'));
    root.appendChild(h('pre', 'fl-code', { 'data-fl-part': 'nest' }, str(t?.nest)));
    const chart = this.chart(k);
    if (chart) {
      root.appendChild(chart);
    }
  }

  /** Bars of every arrangement's best time (log scale), NumPy's as a red line; the current one highlighted. */
  private chart(current: number): Element | null {
    const tm = this.data.timings;
    if (!tm || !Array.isArray(tm.records) || !tm.records.length) {
      return null;
    }
    const best = (r: IContractionTimings['records'][0]) =>
      Math.min(Number(r.serial_seconds), r.parallel_seconds === null ? Infinity : Number(r.parallel_seconds));
    const recs = [...tm.records].filter(r => isFinite(best(r)) && best(r) > 0).sort((a, b) => best(a) - best(b));
    const all = recs.map(best).concat([Number(tm.numpy_seconds)]).filter(x => x > 0);
    if (!recs.length || !all.length) {
      return null;
    }
    const lo = Math.log10(Math.min(...all)) - 0.2;
    const hi = Math.log10(Math.max(...all)) + 0.1;
    const [left, width, row] = [150, 420, 14];
    const x = (v: number) => left + ((Math.log10(v) - lo) / (hi - lo)) * width;
    const svg = s('svg', { width: left + width + 70, height: row * recs.length + 30, class: 'fl-contraction-chart',
      'data-fl-part': 'chart' });
    recs.forEach((r, i) => {
      const y = 4 + i * row;
      const cls = Number(r.term) === current ? 'fl-bar fl-bar-current' : 'fl-bar';
      svg.appendChild(s('text', { x: left - 4, y: y + 10, 'text-anchor': 'end', 'font-size': 10 },
        asArray<string>(r.loops).map(str).join(' ')));
      svg.appendChild(s('rect', { x: left, y, width: Math.max(1, x(best(r)) - left), height: row - 3, class: cls,
        fill: Number(r.term) === current ? '#f59e0b' : '#2563eb' }));
      svg.appendChild(s('text', { x: x(best(r)) + 3, y: y + 10, 'font-size': 9 }, `${fmt(best(r) * 1e3)} ms`));
    });
    const nx = x(Number(tm.numpy_seconds));
    const bottom = row * recs.length + 6;
    svg.appendChild(s('line', { x1: nx, x2: nx, y1: 0, y2: bottom, stroke: '#dc2626', 'stroke-width': 1.5 }));
    svg.appendChild(s('text', { x: nx, y: bottom + 14, 'font-size': 10, fill: '#dc2626', 'text-anchor': 'middle' },
      `NumPy ${fmt(Number(tm.numpy_seconds) * 1e3)} ms`));
    return h('div', 'fl-contraction-timings', {}, h('div', 'fl-pane-title', {},
      `every arrangement's best median time of ${fmt(tm.repeat)} runs (log scale)`), svg);
  }
}

/** The report's contractions: a chooser and the view of the chosen one (views keep their state). */
export function contractionsSection(entries: unknown): HTMLElement | null {
  const list = asArray<IContraction>(entries).filter(c => c && typeof c === 'object' && Array.isArray(c.terms)
    && c.terms.length > 0);
  if (!list.length) {
    return null;
  }
  const views = list.map(c => new ContractionView(c));
  const slot = h('div', 'fl-contraction-slot', {}, views[0].node);
  const pick = h('select', 'fl-select', { 'data-fl-control': 'contraction', 'aria-label': 'contraction' },
    ...list.map((c, i) => h('option', '', { value: i }, contractionTitle(c))));
  pick.addEventListener('change', () => {
    clear(slot);
    slot.appendChild(views[Number(pick.value)].node);
  });
  return h('details', 'fl-section', { open: true, 'data-fl-section': 'contractions' },
    h('summary', '', {}, `Contractions (${list.length}): rewrite rules of paper 003, applied one by one`),
    list.length > 1 ? h('label', '', {}, 'contraction ', pick) : null, slot);
}

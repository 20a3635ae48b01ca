/**
 * The branch-and-bound search tree of the optimal algorithm (the paper's Fig. 10), with
 * step controls to replay the search in the order it ran. Nodes are coloured by outcome,
 * pruned ones greyed, each new best marked; a large tree is drawn to a depth limit with
 * the number of hidden nodes under each cut-off node, and counted, not drawn whole.
 */

import { clear, fmt, h, s } from './dom';
import { asArray, ITrace, ITraceNode, str } from './types';

const OUTCOMES = ['branched', 'new_best', 'pruned', 'infeasible', 'unexplored'];
const MAX_DRAWN = 150;
const DX = 20;
const DY = 34;
const R = 5;

export class TreeView {
  readonly node: HTMLDivElement;
  private nodes: ITraceNode[];
  private children = new Map<number, number[]>();
  private index = new Map<number, number>();
  private step: number;
  private depthLimit: number;
  private chosen: number | null = null;
  private timer: number | null = null;
  private slider: HTMLInputElement;
  private depthInput: HTMLInputElement;
  private stepLabel: HTMLSpanElement;
  private counts: HTMLDivElement;
  private canvas: HTMLDivElement;
  private detail: HTMLDivElement;
  private playButton: HTMLButtonElement;

  constructor(trace: ITrace, private describeEdge: (k: number) => string) {
    this.nodes = asArray<ITraceNode>(trace.nodes).filter(n => n && typeof n.id === 'number');
    this.nodes.forEach((n, k) => {
      this.index.set(n.id, k);
      if (n.parent !== null && n.parent !== undefined) {
        const list = this.children.get(n.parent) || [];
        list.push(n.id);
        this.children.set(n.parent, list);
      }
    });
    this.step = this.nodes.length;
    this.depthLimit = this.autoDepth();

    this.node = h('div', 'fl-trace', { 'data-fl-section': 'trace' });
    const button = (label: string, title: string, action: string, fn: () => void) => {
      const b = h('button', 'fl-button', { type: 'button', title, 'data-fl-action': action }, label);
      b.addEventListener('click', fn);
      return b;
    };
    this.slider = h('input', 'fl-slider', {
      type: 'range', min: 0, max: this.nodes.length, value: this.step, 'data-fl-control': 'step',
      'aria-label': 'search step'
    });
    this.slider.addEventListener('input', () => this.setStep(Number(this.slider.value)));
    this.depthInput = h('input', 'fl-depth', {
      type: 'number', min: 1, max: this.maxDepth(), value: this.depthLimit, 'data-fl-control': 'depth',
      'aria-label': 'depth limit'
    });
    this.depthInput.addEventListener('change', () => {
      const d = Math.max(1, Math.min(this.maxDepth(), Number(this.depthInput.value) || 1));
      this.depthLimit = d;
      this.render();
    });
    this.playButton = button('replay', 'replay the search', 'play', () => this.togglePlay());
    this.stepLabel = h('span', 'fl-step-label');
    this.counts = h('div', 'fl-trace-counts');
    this.canvas = h('div', 'fl-tree');
    this.detail = h('div', 'fl-tree-detail');

    const seeds = Object.keys(trace.seed_costs || {})
      .map(k => `${k} ${fmt((trace.seed_costs || {})[k])}`)
      .join(', ');
    this.node.append(
      h('div', 'fl-trace-head', {},
        `Branch and bound under ${str(trace.cost_model)}: ${fmt(trace.explored)} nodes explored`,
        trace.truncated ? `, the first ${fmt(trace.recorded)} recorded` : '',
        trace.stopped ? ` (stopped: ${str(trace.stopped)})` : '',
        seeds ? `; seeded with ${seeds}` : ''),
      h('div', 'fl-trace-controls', {},
        button('|◀', 'first step', 'first', () => this.setStep(0)),
        button('◀', 'previous step', 'prev', () => this.setStep(this.step - 1)),
        button('▶', 'next step', 'next', () => this.setStep(this.step + 1)),
        button('▶|', 'last step', 'last', () => this.setStep(this.nodes.length)),
        this.playButton,
        this.slider,
        this.stepLabel,
        h('label', 'fl-depth-label', {}, 'depth limit ', this.depthInput)),
      this.counts,
      this.canvas,
      this.detail,
      h('div', 'fl-legend', {}, ...OUTCOMES.map(o => h('span', `fl-legend-item fl-o-${o}`, {},
        h('span', 'fl-dot'), o.replace(/_/g, ' '))))
    );
    this.render();
  }

  dispose(): void {
    this.stop();
  }

  private maxDepth(): number {
    return Math.max(1, ...this.nodes.map(n => n.depth || 0));
  }

  /** The deepest limit that draws at most MAX_DRAWN nodes. */
  private autoDepth(): number {
    const perDepth = new Map<number, number>();
    for (const n of this.nodes) {
      perDepth.set(n.depth, (perDepth.get(n.depth) || 0) + 1);
    }
    let total = 0;
    let limit = 1;
    for (let d = 0; d <= this.maxDepth(); d++) {
      total += perDepth.get(d) || 0;
      if (total > MAX_DRAWN && d > 0) {
        break;
      }
      limit = Math.max(1, d);
    }
    return limit;
  }

  setStep(step: number): void {
    this.step = Math.max(0, Math.min(this.nodes.length, step));
    if (this.step >= this.nodes.length) {
      this.stop();
    }
    this.render();
  }

  private togglePlay(): void {
    if (this.timer !== null) {
      this.stop();
      return;
    }
    if (this.step >= this.nodes.length) {
      this.step = 0;
    }
    const perTick = Math.max(1, Math.ceil(this.nodes.length / 200));
    this.playButton.classList.add('fl-active');
    this.timer = window.setInterval(() => this.setStep(this.step + perTick), 60);
  }

  private stop(): void {
    if (this.timer !== null) {
      window.clearInterval(this.timer);
      this.timer = null;
    }
    this.playButton?.classList.remove('fl-active');
  }

  private render(): void {
    const revealed = this.nodes.slice(0, this.step);
    const shown = new Set(revealed.filter(n => n.depth <= this.depthLimit).map(n => n.id));
    this.slider.value = String(this.step);
    const current = this.step > 0 ? this.nodes[this.step - 1] : null;
    this.stepLabel.textContent = `step ${this.step} of ${this.nodes.length}`;
    this.node.setAttribute('data-fl-step', String(this.step));

    // counts per outcome of the revealed nodes, and what the depth limit hides
    clear(this.counts);
    const byOutcome = new Map<string, number>();
    for (const n of revealed) {
      byOutcome.set(n.outcome, (byOutcome.get(n.outcome) || 0) + 1);
    }
    const hidden = revealed.length - shown.size;
    this.counts.append(
      ...OUTCOMES.filter(o => byOutcome.get(o)).map(o =>
        h('span', `fl-count fl-o-${o}`, { 'data-outcome': o }, h('span', 'fl-dot'), `${o.replace(/_/g, ' ')} ${byOutcome.get(o)}`)));
    if (hidden > 0) {
      this.counts.append(h('span', 'fl-count fl-hidden-count', {}, `${hidden} deeper than ${this.depthLimit} not drawn`));
    }

    // layout: leaves left to right in search order, parents centred over their children
    const x = new Map<number, number>();
    let next = 0;
    const place = (id: number): number => {
      const kids = (this.children.get(id) || []).filter(c => shown.has(c));
      if (!kids.length) {
        x.set(id, next++);
      } else {
        const xs = kids.map(place);
        x.set(id, (xs[0] + xs[xs.length - 1]) / 2);
      }
      return x.get(id)!;
    };
    const roots = revealed.filter(n => shown.has(n.id) && (n.parent === null || !shown.has(n.parent)));
    roots.forEach(r => place(r.id));
    const depth = Math.min(this.depthLimit, Math.max(0, ...revealed.map(n => n.depth)));
    const width = Math.max(1, next) * DX + 2 * DX;
    const height = (depth + 1) * DY + DY;
    const svg = s('svg', {
      class: 'fl-tree-svg', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
      'aria-label': 'search tree'
    });
    const px = (id: number) => DX + x.get(id)! * DX;
    const py = (d: number) => DY / 2 + d * DY;
    const edges = s('g', { class: 'fl-tree-edges' });
    const dots = s('g', { class: 'fl-tree-nodes' });
    for (const n of revealed) {
      if (!shown.has(n.id)) {
        continue;
      }
      if (n.parent !== null && shown.has(n.parent)) {
        const p = this.nodes[this.index.get(n.parent)!];
        edges.appendChild(s('line', {
          x1: px(p.id), y1: py(p.depth), x2: px(n.id), y2: py(n.depth),
          class: `fl-tree-edge fl-o-${safeClass(n.outcome)}`
        }));
      }
      const cls = ['fl-tree-node', `fl-o-${safeClass(n.outcome)}`];
      if (current && current.id === n.id) {
        cls.push('fl-current');
      }
      if (this.chosen === n.id) {
        cls.push('fl-chosen');
      }
      const g = s('g', {
        class: cls.join(' '), 'data-node': n.id, 'data-outcome': n.outcome,
        transform: `translate(${px(n.id)},${py(n.depth)})`
      });
      g.appendChild(s('title', {}, this.describe(n)));
      g.appendChild(s('circle', { r: n.outcome === 'new_best' ? R + 2 : R }));
      if (n.outcome === 'new_best') {
        g.appendChild(s('text', { class: 'fl-star', y: -R - 4, 'text-anchor': 'middle' }, '★'));
      }
      const deeper = n.depth === this.depthLimit ? this.countHidden(n.id, shown) : 0;
      if (deeper > 0) {
        g.appendChild(s('text', { class: 'fl-more', y: R + 11, 'text-anchor': 'middle' }, `+${deeper}`));
      }
      g.addEventListener('click', () => {
        this.chosen = n.id;
        this.render();
      });
      dots.appendChild(g);
    }
    svg.append(edges, dots);
    clear(this.canvas);
    this.canvas.appendChild(svg);

    clear(this.detail);
    const focus = this.chosen !== null && this.index.has(this.chosen) && this.index.get(this.chosen)! < this.step
      ? this.nodes[this.index.get(this.chosen)!] : current;
    if (focus) {
      this.detail.append(h('span', `fl-o-${safeClass(focus.outcome)}`, {}, h('span', 'fl-dot')), this.describe(focus));
    } else {
      this.detail.textContent = 'The search has not started: step forward to replay it.';
    }
  }

  private countHidden(id: number, shown: Set<number>): number {
    let count = 0;
    const stack = [...(this.children.get(id) || [])];
    while (stack.length) {
      const c = stack.pop()!;
      const k = this.index.get(c);
      if (k === undefined || k >= this.step) {
        continue;
      }
      if (!shown.has(c)) {
        count += 1;
      }
      stack.push(...(this.children.get(c) || []));
    }
    return shown.has(id) ? count : 0;
  }

  private describe(n: ITraceNode): string {
    const parts = [`node ${n.id}`, `depth ${n.depth}`, `cost ${fmt(n.cost)}`, n.outcome.replace(/_/g, ' ')];
    if (n.legal) {
      parts.push('legal');
    } else if (n.violation) {
      parts.push(`illegal: ${n.violation}`);
    }
    const cut = asArray<number>(n.cut).map(this.describeEdge);
    const kept = asArray<number>(n.kept).map(this.describeEdge);
    if (cut.length) {
      parts.push(`cut ${cut.join(', ')}`);
    }
    if (kept.length) {
      parts.push(`kept ${kept.join(', ')}`);
    }
    return parts.join(' · ');
  }
}

/** A class-name-safe form of a data value. */
export function safeClass(value: unknown): string {
  return str(value).replace(/[^A-Za-z0-9_-]/g, '_');
}

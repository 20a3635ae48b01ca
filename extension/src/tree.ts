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
/** Cut and kept edges listed in a node's detail before "show all". */
const FIRST_EDGES = 5;
const DX = 20;
const DY_WIDE = 30;
const DY_DENSE = 20;
const R = 5;

export class TreeView {
  readonly node: HTMLDivElement;
  private nodes: ITraceNode[];
  private children = new Map<number, number[]>();
  private index = new Map<number, number>();
  private step: number;
  private depthLimit: number;
  private chosen: number | null = null;
  private showAll = false;
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
        `Branch and bound under ${str(trace.cost_model)}: ${fmt(trace.explored)} ${trace.explored === 1 ? 'node' : 'nodes'} explored`,
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

    // compact layout: a run of nodes with one child each is one chain, drawn once (its
    // length marked); rows are chains, not depths, so a deep narrow search stays short;
    // leaves left to right in search order, parents centred over their children
    const kids = (id: number) => (this.children.get(id) || []).filter(c => shown.has(c));
    interface IChain { members: ITraceNode[]; children: IChain[]; row: number; x: number }
    const chains: IChain[] = [];
    const makeChain = (head: number, row: number): IChain => {
      const members = [this.nodes[this.index.get(head)!]];
      let cur = head;
      let next = kids(cur);
      while (next.length === 1) {
        cur = next[0];
        members.push(this.nodes[this.index.get(cur)!]);
        next = kids(cur);
      }
      const chain: IChain = { members, children: [], row, x: 0 };
      chains.push(chain);
      chain.children = next.map(c => makeChain(c, row + 1));
      return chain;
    };
    let leaves = 0;
    const place = (c: IChain): number => {
      if (!c.children.length) {
        c.x = leaves++;
      } else {
        const xs = c.children.map(place);
        c.x = (xs[0] + xs[xs.length - 1]) / 2;
      }
      return c.x;
    };
    const roots = revealed.filter(n => shown.has(n.id) && (n.parent === null || !shown.has(n.parent)));
    for (const r of roots) {
      place(makeChain(r.id, 0));
    }
    const rows = Math.max(0, ...chains.map(c => c.row));
    // many rows: closer together
    const DY = rows > 20 ? DY_DENSE : DY_WIDE;
    const width = Math.max(1, leaves) * DX + 2 * DX;
    const height = (rows + 1) * DY + DY;
    const svg = s('svg', {
      class: 'fl-tree-svg', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img',
      'aria-label': 'search tree'
    });
    const px = (c: IChain) => DX + c.x * DX;
    const py = (c: IChain) => DY / 2 + c.row * DY;
    const edges = s('g', { class: 'fl-tree-edges' });
    const dots = s('g', { class: 'fl-tree-nodes' });
    const currentId = current ? current.id : null;
    for (const c of chains) {
      for (const k of c.children) {
        edges.appendChild(s('line', {
          x1: px(c), y1: py(c), x2: px(k), y2: py(k),
          class: `fl-tree-edge fl-o-${safeClass(k.members[0].outcome)}`
        }));
      }
      const tail = c.members[c.members.length - 1];
      const ids = c.members.map(m => m.id);
      const best = c.members.find(m => m.outcome === 'new_best');
      const cls = ['fl-tree-node', `fl-o-${safeClass(best ? best.outcome : tail.outcome)}`];
      if (c.members.length > 1) {
        cls.push('fl-chain');
      }
      if (currentId !== null && ids.includes(currentId)) {
        cls.push('fl-current');
      }
      if (this.chosen !== null && ids.includes(this.chosen)) {
        cls.push('fl-chosen');
      }
      const g = s('g', {
        class: cls.join(' '), 'data-node': c.members[0].id, 'data-nodes': c.members.length,
        'data-members': ids.join(' '), 'data-outcome': tail.outcome,
        transform: `translate(${px(c)},${py(c)})`
      });
      g.appendChild(s('title', {}, c.members.length > 1
        ? `${c.members.length} nodes, depth ${c.members[0].depth}–${tail.depth}, one child each; last: ${this.summary(tail)}`
        : this.summary(tail)));
      // the whole mark and its labels take the click, not only the dot
      g.appendChild(s('rect', { class: 'fl-hit', x: -R - 4, y: -R - 14, width: 2 * R + 34, height: 2 * R + 26 }));
      if (c.members.length > 1) {
        g.appendChild(s('rect', { class: 'fl-chain-mark', x: -R - 2, y: -R, width: 2 * R + 4, height: 2 * R, rx: R }));
        g.appendChild(s('text', { class: 'fl-chain-count', x: R + 4, y: 4 }, `×${c.members.length}`));
      } else {
        g.appendChild(s('circle', { r: tail.outcome === 'new_best' ? R + 2 : R }));
      }
      if (best) {
        g.appendChild(s('text', { class: 'fl-star', y: -R - 4, 'text-anchor': 'middle' }, '★'));
      }
      const deeper = tail.depth === this.depthLimit ? this.countHidden(tail.id, shown) : 0;
      if (deeper > 0) {
        g.appendChild(s('text', { class: 'fl-more', y: R + 11, 'text-anchor': 'middle' }, `+${deeper}`));
      }
      g.addEventListener('click', () => {
        // a chain shows its current node when the replay is inside it, else its last
        this.chosen = currentId !== null && ids.includes(currentId) ? currentId : (best ? best.id : tail.id);
        this.showAll = false;
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
      this.renderDetail(focus);
    } else {
      this.detail.textContent = 'The search has not started: step forward to replay it.';
    }
  }

  /** A node's detail: what it is, then its cut and kept edges summarised (the first few, "show all"). */
  private renderDetail(n: ITraceNode): void {
    this.detail.setAttribute('data-node', String(n.id));
    this.detail.append(h('div', 'fl-tree-summary', {},
      h('span', `fl-o-${safeClass(n.outcome)}`, {}, h('span', 'fl-dot')), this.summary(n)));
    for (const [label, list] of [['cut', asArray<number>(n.cut)], ['kept', asArray<number>(n.kept)]] as [string, number[]][]) {
      if (!list.length) {
        continue;
      }
      const all = this.showAll || list.length <= FIRST_EDGES;
      const shownEdges = all ? list : list.slice(0, FIRST_EDGES);
      const row = h('div', `fl-tree-edges-list fl-${label}`, { 'data-fl-list': label, 'data-count': list.length },
        `${label} ${list.length} edge${list.length === 1 ? '' : 's'}: `, shownEdges.map(this.describeEdge).join(', '));
      if (!all) {
        const more = h('button', 'fl-button fl-link', { type: 'button', 'data-fl-action': 'show-all-edges' },
          `… show all ${list.length}`);
        more.addEventListener('click', () => {
          this.showAll = true;
          this.render();
        });
        row.append(' ', more);
      }
      this.detail.appendChild(row);
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

  /** One line: node, depth, cost, outcome, legality and how many edges it cut and kept. */
  private summary(n: ITraceNode): string {
    const parts = [`node ${n.id}`, `depth ${n.depth}`, `cost ${fmt(n.cost)}`, str(n.outcome).replace(/_/g, ' ')];
    if (n.legal) {
      parts.push('legal');
    } else if (n.violation) {
      parts.push(`illegal: ${str(n.violation)}`);
    }
    parts.push(`${asArray(n.cut).length} cut, ${asArray(n.kept).length} kept`);
    return parts.join(' · ');
  }
}

/** A class-name-safe form of a data value. */
export function safeClass(value: unknown): string {
  return str(value).replace(/[^A-Za-z0-9_-]/g, '_');
}

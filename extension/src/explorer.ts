/**
 * The explorer view of one report: bytecode listing coloured by block, the WSP graph,
 * the block detail with its generated code, the cost table, the search tree and timings.
 * Everything is built with createElement / createElementNS and textContent.
 */

import { clear, fmt, fmtSeconds, h } from './dom';
import { annotateSvg, layout, sanitizeSvg } from './graph';
import { safeClass, TreeView } from './tree';
import { asArray, ICode, IInstruction, IPartition, IReport, ITraceEdge, str } from './types';

/** Number of block colours (fl-c0 ... fl-c7 in the style sheet). */
export const COLOURS = 8;

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/g;
/** Graphs with more edges are laid out only on request. */
const MAX_AUTO_EDGES = 2000;

function key(blocks: number[]): string {
  return [...blocks].sort((a, b) => a - b).join(',');
}

export class Explorer {
  readonly node: HTMLDivElement;
  private report: IReport | null = null;
  private algorithm = '';
  private costModel = '';
  private hover: number | null = null;
  private actualSize = false;
  private layoutLarge = false;
  private block: number | null = null;
  private renderToken = 0;
  private tree: TreeView | null = null;
  private blockOf = new Map<number, number>();
  // parts rebuilt on selection
  private algorithmSelect!: HTMLSelectElement;
  private costSelect!: HTMLSelectElement;
  private status!: HTMLDivElement;
  private listing!: HTMLTableSectionElement;
  private graph!: HTMLDivElement;
  private detail!: HTMLDivElement;
  private costs!: HTMLTableElement;

  constructor() {
    this.node = h('div', 'fl-explorer', { 'data-fl-state': 'empty' });
  }

  dispose(): void {
    this.tree?.dispose();
    this.tree = null;
    this.renderToken += 1;
  }

  /** Show `report` (a new report resets the selection to the report's own). */
  setReport(data: unknown): void {
    this.dispose();
    clear(this.node);
    const report = data as IReport;
    if (!report || typeof report !== 'object' || !report.program || !Array.isArray(report.partitions)) {
      this.node.setAttribute('data-fl-state', 'invalid');
      this.node.appendChild(h('div', 'fl-error', {}, 'This output is not a fusionlab explorer report.'));
      return;
    }
    this.report = report;
    const sel = report.selected || { algorithm: '', cost_model: '' };
    this.algorithm = str(sel.algorithm);
    this.costModel = str(sel.cost_model);
    if (!this.partition() && report.partitions.length) {
      this.algorithm = str(report.partitions[0].algorithm);
      this.costModel = str(report.partitions[0].cost_model);
    }
    this.hover = null;
    this.block = null;
    this.build();
    this.node.setAttribute('data-fl-state', 'ready');
  }

  private instructions(): IInstruction[] {
    return asArray<IInstruction>(this.report?.program?.instructions);
  }

  private partition(algorithm = this.algorithm, costModel = this.costModel): IPartition | undefined {
    return asArray<IPartition>(this.report?.partitions).find(
      p => p.algorithm === algorithm && p.cost_model === costModel);
  }

  private selectedPartition(): IPartition | undefined {
    const sel = this.report?.selected;
    return sel ? this.partition(sel.algorithm, sel.cost_model) : undefined;
  }

  private names(kind: 'algorithm' | 'cost_model'): string[] {
    const out: string[] = [];
    const listed = kind === 'algorithm' ? this.report?.algorithms : this.report?.cost_models;
    for (const n of asArray<string>(listed)) {
      if (!out.includes(str(n))) {
        out.push(str(n));
      }
    }
    for (const p of asArray<IPartition>(this.report?.partitions)) {
      const n = str(p[kind]);
      if (!out.includes(n)) {
        out.push(n);
      }
    }
    return out;
  }

  // ---------------------------------------------------------------- layout

  private build(): void {
    const report = this.report!;
    const root = this.node;
    const n = this.instructions().length;

    // header: name, batch, notices
    const batches = asArray<{ index: number; instructions: number; same_as: number | null }>(report.batches);
    const batch = batches.find(b => b.index === report.batch);
    const head = h('div', 'fl-head', {},
      h('span', 'fl-title', {}, 'fusion explorer'),
      report.name ? h('span', 'fl-name', {}, str(report.name)) : null,
      h('span', 'fl-meta', {}, `${n} instructions`),
      batches.length > 1 ? h('span', 'fl-meta', {}, `batch ${fmt(Number(report.batch) + 1)} of ${batches.length}`) : null,
      batch && typeof batch.same_as === 'number'
        ? h('span', 'fl-meta', {}, `same as batch ${fmt(batch.same_as + 1)}: partitions from the merge cache`) : null);
    root.appendChild(head);
    const notices = asArray<{ kind: string; message: string; line?: number | null }>(report.notices);
    if (notices.length) {
      root.appendChild(h('ul', 'fl-notices', {}, ...notices.map(x =>
        h('li', `fl-notice fl-notice-${safeClass(x.kind)}`, {},
          `${str(x.kind)}${x.line ? ` (line ${fmt(x.line)})` : ''}: ${str(x.message)}`))));
    }

    // controls
    this.algorithmSelect = this.makeSelect('algorithm', this.names('algorithm'), this.algorithm);
    this.costSelect = this.makeSelect('cost_model', this.names('cost_model'), this.costModel);
    this.algorithmSelect.addEventListener('change', () => this.select(this.algorithmSelect.value, this.costModel));
    this.costSelect.addEventListener('change', () => this.select(this.algorithm, this.costSelect.value));
    this.status = h('div', 'fl-status');
    root.appendChild(h('div', 'fl-controls', {},
      h('label', '', {}, 'algorithm ', this.algorithmSelect),
      h('label', '', {}, 'cost model ', this.costSelect),
      this.status));

    // listing and graph side by side
    this.listing = h('tbody');
    const table = h('table', 'fl-listing', {}, this.listing);
    this.graph = h('div', 'fl-graph', { 'data-fl-graph-state': 'none' });
    const zoom = h('button', 'fl-button fl-zoom', { type: 'button', 'data-fl-action': 'zoom', title: 'fit the pane or show at 100%' }, '100%');
    zoom.addEventListener('click', () => {
      this.actualSize = !this.actualSize;
      zoom.textContent = this.actualSize ? 'fit' : '100%';
      this.applyZoom();
    });
    root.appendChild(h('div', 'fl-panes', {},
      h('div', 'fl-pane fl-listing-pane', {},
        h('div', 'fl-pane-title', {}, 'Bytecode', h('span', 'fl-hint', {}, ' · ',
          h('span', 'fl-contracted', {}, 'A'), ' contracted array (never allocated) · click a block for its code')),
        table),
      h('div', 'fl-pane fl-graph-pane', {},
        h('div', 'fl-pane-title', {}, 'WSP graph', h('span', 'fl-hint', {},
          ' · solid: dependency · dashed: fuse-preventing · dotted: weight edge (saving) '), zoom),
        this.graph)));
    root.addEventListener('mouseleave', () => this.setHover(null));

    this.detail = h('div', 'fl-block-detail', { 'data-fl-section': 'block' });
    root.appendChild(this.detail);

    this.costs = h('table', 'fl-costs', { 'data-fl-section': 'costs' });
    root.appendChild(h('details', 'fl-section', { open: true },
      h('summary', '', {}, 'Costs of every algorithm × cost model'), this.costs));

    const trace = report.trace;
    if (trace && typeof trace === 'object' && Array.isArray(trace.nodes) && trace.nodes.length) {
      this.tree = new TreeView(trace, k => this.describeTraceEdge(k));
      root.appendChild(h('details', 'fl-section', { open: true },
        h('summary', '', {}, 'Search tree (optimal algorithm)'), this.tree.node));
    }

    const timings = report.timings;
    if (timings && Array.isArray(timings.records) && timings.records.length) {
      root.appendChild(h('details', 'fl-section', { open: true },
        h('summary', '', {}, `Timings (median of ${fmt(timings.repeat)})`), this.buildTimings()));
    }
    this.update();
  }

  private makeSelect(name: string, values: string[], current: string): HTMLSelectElement {
    const sel = h('select', 'fl-select', { 'data-fl-control': name, 'aria-label': name.replace(/_/g, ' ') });
    for (const v of values) {
      sel.appendChild(h('option', '', { value: v }, v.replace(/_/g, ' ')));
    }
    sel.value = current;
    return sel;
  }

  private describeTraceEdge(k: number): string {
    const e = asArray<ITraceEdge>(this.report?.trace?.edges)[k];
    if (!e) {
      return `#${k}`;
    }
    return `{${asArray<number>(e.a).join(',')}}–{${asArray<number>(e.b).join(',')}}`;
  }

  // ---------------------------------------------------------------- selection

  select(algorithm: string, costModel: string): void {
    this.algorithm = algorithm;
    this.costModel = costModel;
    this.block = null;
    this.update();
  }

  private update(): void {
    const p = this.partition();
    this.algorithmSelect.value = this.algorithm;
    this.costSelect.value = this.costModel;
    this.node.setAttribute('data-fl-algorithm', this.algorithm);
    this.node.setAttribute('data-fl-cost-model', this.costModel);
    this.blockOf.clear();
    if (p) {
      asArray<number[]>(p.blocks).forEach((b, k) => asArray<number>(b).forEach(i => this.blockOf.set(i, k + 1)));
    }
    this.renderStatus(p);
    this.renderListing(p);
    this.renderCosts();
    this.renderDetail();
    void this.renderGraph(p);
  }

  private renderStatus(p: IPartition | undefined): void {
    clear(this.status);
    if (!p) {
      this.status.append(h('span', 'fl-warning', {}, `${this.algorithm} × ${this.costModel} was not computed`));
      return;
    }
    const selected = this.selectedPartition() === p;
    const blocks = asArray(p.blocks).length;
    this.status.append(
      h('span', 'fl-cost', { 'data-fl-cost': p.cost }, `cost ${fmt(p.cost)} ${str(p.unit)}`),
      h('span', '', {}, `${blocks} block${blocks === 1 ? '' : 's'}, ${fmt(p.kernels)} kernel${p.kernels === 1 ? '' : 's'}`),
      h('span', p.legal ? 'fl-legal' : 'fl-illegal', { 'data-fl-legal': String(!!p.legal) },
        p.legal ? 'legal' : 'illegal'),
      h('span', 'fl-meta', {}, fmtSeconds(p.seconds)));
    if (p.proven_optimal) {
      this.status.append(h('span', 'fl-optimal', {}, 'proven optimal'));
    }
    if (p.cache_hit) {
      this.status.append(h('span', 'fl-meta', {}, 'from the merge cache'));
    }
    if (selected) {
      this.status.append(h('span', 'fl-meta', {}, 'selected in the kernel'));
    }
    for (const note of [...asArray<string>(p.notes), ...asArray<string>(p.problems)]) {
      this.status.append(h('span', 'fl-note', {}, str(note)));
    }
  }

  private renderListing(p: IPartition | undefined): void {
    clear(this.listing);
    for (const ins of this.instructions()) {
      const n = Number(ins.n);
      const b = this.blockOf.get(n);
      const contracted = new Set(b && p ? asArray<string>(asArray<string[]>(p.contracted)[b - 1]) : []);
      const row = h('tr', `fl-ins${b ? ` fl-c${(b - 1) % COLOURS}` : ''}${ins.system ? ' fl-system' : ''}`, {
        'data-instruction': n, 'data-block': b ?? null
      },
      h('td', 'fl-swatch'),
      h('td', 'fl-n', {}, String(n)),
      h('td', 'fl-blk', {}, b ? `b${b}` : ''),
      h('td', 'fl-text', {}, ...this.tokens(str(ins.text), contracted)));
      row.addEventListener('mouseenter', () => this.setHover(n));
      row.addEventListener('click', () => b && this.selectBlock(b));
      this.listing.appendChild(row);
    }
  }

  /** The instruction text with every contracted array name marked. */
  private tokens(text: string, contracted: Set<string>): (Node | string)[] {
    if (!contracted.size) {
      return [text];
    }
    const out: (Node | string)[] = [];
    let last = 0;
    const opcodeEnd = text.search(/\s/);
    for (const m of text.matchAll(IDENT)) {
      const at = m.index ?? 0;
      if (at < opcodeEnd || !contracted.has(m[0])) {
        continue;
      }
      out.push(text.slice(last, at));
      out.push(h('span', 'fl-contracted', { 'data-array': m[0], title: 'contracted: never allocated' }, m[0]));
      last = at + m[0].length;
    }
    out.push(text.slice(last));
    return out;
  }

  private renderCosts(): void {
    clear(this.costs);
    const algorithms = this.names('algorithm');
    const models = this.names('cost_model');
    const head = h('tr', '', {}, h('th', '', {}, 'algorithm'));
    for (const m of models) {
      const unit = asArray<IPartition>(this.report?.partitions).find(p => p.cost_model === m)?.unit;
      head.appendChild(h('th', '', {}, m.replace(/_/g, ' '), unit ? h('div', 'fl-unit', {}, str(unit)) : null));
    }
    this.costs.appendChild(h('thead', '', {}, head));
    const best = new Map<string, number>();
    for (const m of models) {
      const legal = asArray<IPartition>(this.report?.partitions)
        .filter(p => p.cost_model === m && p.legal && typeof p.cost === 'number');
      if (legal.length) {
        best.set(m, Math.min(...legal.map(p => p.cost)));
      }
    }
    const body = h('tbody');
    for (const a of algorithms) {
      const row = h('tr', '', {}, h('th', '', {}, a));
      for (const m of models) {
        const p = this.partition(a, m);
        if (!p) {
          row.appendChild(h('td', 'fl-missing', {}, '—'));
          continue;
        }
        const cls = ['fl-cost-cell'];
        if (a === this.algorithm && m === this.costModel) {
          cls.push('fl-current');
        }
        if (p.legal && best.get(m) === p.cost) {
          cls.push('fl-best');
        }
        if (!p.legal) {
          cls.push('fl-illegal');
        }
        const cell = h('td', cls.join(' '), {
          'data-algorithm': a, 'data-cost-model': m, tabindex: 0,
          title: `${a} × ${m}: ${fmt(p.cost)} ${str(p.unit)}, ${asArray(p.blocks).length} blocks` +
            `${p.legal ? '' : ', illegal'}${p.proven_optimal ? ', proven optimal' : ''}`
        }, fmt(p.cost), p.legal ? '' : ' ✗', p.proven_optimal ? ' ✓' : '');
        cell.addEventListener('click', () => this.select(a, m));
        cell.addEventListener('keydown', ev => {
          if (ev.key === 'Enter' || ev.key === ' ') {
            ev.preventDefault();
            this.select(a, m);
          }
        });
        row.appendChild(cell);
      }
      body.appendChild(row);
    }
    this.costs.appendChild(body);
    this.costs.appendChild(h('caption', '', {},
      'Click a cell to show that partition · bold: the lowest legal cost · ✓ proven optimal · ✗ illegal'));
  }

  private buildTimings(): HTMLTableElement {
    const t = this.report!.timings!;
    const cols = ['algorithm', 'cost model', 'blocks', 'kernels', 'compile', 'median', 'min', 'speed-up', 'max error'];
    const table = h('table', 'fl-timings', { 'data-fl-section': 'timings' },
      h('thead', '', {}, h('tr', '', {}, ...cols.map(c => h('th', '', {}, c)))));
    const body = h('tbody');
    for (const r of asArray<any>(t.records)) {
      body.appendChild(h('tr', '', {},
        h('td', '', {}, str(r.algorithm)), h('td', '', {}, str(r.cost_model)),
        h('td', '', {}, fmt(r.blocks)), h('td', '', {}, fmt(r.kernels)),
        h('td', '', {}, fmtSeconds(r.compile_seconds)), h('td', '', {}, fmtSeconds(r.median_seconds)),
        h('td', '', {}, fmtSeconds(r.min_seconds)), h('td', '', {}, `${fmt(r.speedup)}×`),
        h('td', '', {}, r.max_abs_error === null || r.max_abs_error === undefined ? '' : Number(r.max_abs_error).toExponential(1))));
    }
    table.appendChild(body);
    return table;
  }

  // ---------------------------------------------------------------- graph

  private async renderGraph(p: IPartition | undefined): Promise<void> {
    const token = ++this.renderToken;
    const graph = this.graph;
    const dots = asArray<string>(this.report?.dots);
    const dot = p && typeof p.dot === 'number' ? dots[p.dot] : undefined;
    if (typeof dot !== 'string') {
      clear(graph);
      graph.setAttribute('data-fl-graph-state', 'none');
      graph.appendChild(h('div', 'fl-message', {}, p
        ? `No graph stored for this partition (${this.instructions().length} instructions is too many to draw); ` +
          'the listing shows its blocks.'
        : 'No partition to draw.'));
      return;
    }
    const edges = dot.split('->').length - 1;
    if (edges > MAX_AUTO_EDGES && !this.layoutLarge) {
      // Graphviz runs on the page's thread: a dense graph could freeze it for a long time
      clear(graph);
      graph.setAttribute('data-fl-graph-state', 'deferred');
      const go = h('button', 'fl-button', { type: 'button', 'data-fl-action': 'layout' }, 'Lay it out anyway');
      go.addEventListener('click', () => {
        this.layoutLarge = true;
        void this.renderGraph(p);
      });
      graph.appendChild(h('div', 'fl-message', {},
        `This graph has ${edges} edges: laying it out may keep the page busy for a while. `, go));
      return;
    }
    graph.setAttribute('data-fl-graph-state', 'loading');
    if (!graph.querySelector('svg')) {
      clear(graph);
      graph.appendChild(h('div', 'fl-message', {}, 'Laying out the graph…'));
    }
    let svg: SVGSVGElement;
    let clusters = 0;
    try {
      svg = sanitizeSvg(await layout(dot));
      clusters = annotateSvg(svg, COLOURS);
    } catch (err) {
      if (token !== this.renderToken) {
        return;
      }
      clear(graph);
      graph.setAttribute('data-fl-graph-state', 'error');
      graph.appendChild(h('div', 'fl-error', {}, `The graph could not be laid out: ${str((err as Error)?.message ?? err)}`));
      return;
    }
    if (token !== this.renderToken) {
      return;
    }
    clear(graph);
    graph.appendChild(svg);
    graph.setAttribute('data-fl-clusters', String(clusters));
    graph.setAttribute('data-fl-graph-state', 'ready');
    for (const g of Array.from(svg.querySelectorAll<SVGGElement>('g.node[data-instruction]'))) {
      const n = Number(g.getAttribute('data-instruction'));
      g.addEventListener('mouseenter', () => this.setHover(n));
      g.addEventListener('click', ev => {
        ev.stopPropagation();
        const b = this.blockOf.get(n);
        if (b) {
          this.selectBlock(b);
        }
      });
    }
    for (const g of Array.from(svg.querySelectorAll<SVGGElement>('g.cluster[data-block]'))) {
      g.addEventListener('click', () => this.selectBlock(Number(g.getAttribute('data-block'))));
    }
    this.applyZoom();
    this.applyHover();
    this.applyBlock();
  }

  private applyZoom(): void {
    const svg = this.graph?.querySelector('svg');
    const w = Number(svg?.getAttribute('data-fl-width'));
    if (!svg || !isFinite(w) || w <= 0) {
      return;
    }
    svg.style.width = this.actualSize ? `${w}pt` : '100%';
    svg.style.maxWidth = this.actualSize ? 'none' : `${w}pt`;
  }

  // ---------------------------------------------------------------- hover and block

  setHover(n: number | null): void {
    if (n === this.hover) {
      return;
    }
    this.hover = n;
    this.applyHover();
  }

  private applyHover(): void {
    for (const el of Array.from(this.node.querySelectorAll('.fl-hover'))) {
      el.classList.remove('fl-hover');
    }
    for (const el of Array.from(this.node.querySelectorAll('.fl-hover-edge'))) {
      el.classList.remove('fl-hover-edge');
    }
    this.node.toggleAttribute('data-fl-hover', this.hover !== null);
    if (this.hover === null) {
      return;
    }
    const n = String(this.hover);
    for (const el of Array.from(this.node.querySelectorAll(
      `tr.fl-ins[data-instruction="${n}"], .fl-graph g.node[data-instruction="${n}"]`))) {
      el.classList.add('fl-hover');
    }
    for (const el of Array.from(this.node.querySelectorAll(
      `.fl-graph g.edge[data-source="${n}"], .fl-graph g.edge[data-target="${n}"]`))) {
      el.classList.add('fl-hover-edge');
    }
  }

  selectBlock(b: number | null): void {
    this.block = this.block === b ? null : b;
    this.applyBlock();
    this.renderDetail();
  }

  private applyBlock(): void {
    for (const el of Array.from(this.node.querySelectorAll('.fl-selected'))) {
      el.classList.remove('fl-selected');
    }
    if (this.block === null) {
      return;
    }
    const b = String(this.block);
    for (const el of Array.from(this.node.querySelectorAll(
      `tr.fl-ins[data-block="${b}"], .fl-graph g.cluster[data-block="${b}"]`))) {
      el.classList.add('fl-selected');
    }
  }

  private renderDetail(): void {
    const d = this.detail;
    clear(d);
    const p = this.partition();
    if (!p || this.block === null) {
      d.removeAttribute('data-block');
      d.appendChild(h('div', 'fl-hint', {}, 'Click an instruction or a block in the graph to see its contracted arrays and generated code.'));
      return;
    }
    const b = this.block;
    const members = asArray<number>(asArray<number[]>(p.blocks)[b - 1]);
    const contracted = asArray<string>(asArray<string[]>(p.contracted)[b - 1]);
    d.setAttribute('data-block', String(b));
    d.append(
      h('div', `fl-block-title fl-c${(b - 1) % COLOURS}`, {}, h('span', 'fl-swatch-inline'),
        `Block ${b} of ${this.algorithm} × ${this.costModel}: instruction${members.length === 1 ? '' : 's'} ${members.join(', ')}`),
      h('div', 'fl-block-contracted', {}, 'Contracted arrays: ',
        contracted.length
          ? h('span', '', {}, ...contracted.flatMap((c, k) => [k ? ', ' : '', h('span', 'fl-contracted', { 'data-array': c }, c)]))
          : 'none'));
    const sel = this.report?.selected;
    const code = asArray<ICode>(this.report?.code).find(c => key(asArray<number>(c.instructions)) === key(members));
    const isSelected = this.selectedPartition() === p;
    if (!code) {
      d.appendChild(h('div', 'fl-note', {},
        `Generated code is stored for the blocks of the partition selected in the kernel ` +
        `(${str(sel?.algorithm)} × ${str(sel?.cost_model)}) only, and this block is not one of them. ` +
        'Select this partition in the live explorer to generate its code.'));
      return;
    }
    if (!isSelected) {
      d.appendChild(h('div', 'fl-note', {},
        `The same block appears in the selected partition (${str(sel?.algorithm)} × ${str(sel?.cost_model)}): its code is shown.`));
    }
    d.appendChild(h('div', 'fl-runs', {},
      code.runs === 'numba' ? 'Runs as a Numba kernel' : 'Runs with NumPy',
      code.reason ? ` (${str(code.reason)})` : '',
      asArray<string>(code.contracted).length ? `; contracted in the kernel: ${asArray<string>(code.contracted).join(', ')}` : ''));
    if (typeof code.source === 'string' && code.source) {
      d.appendChild(h('pre', 'fl-code', { 'data-fl-code': b }, code.source));
    } else {
      d.appendChild(h('div', 'fl-note', {}, 'No kernel source for this block (it is not one kernel).'));
    }
  }
}

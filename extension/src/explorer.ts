/**
 * The explorer view of one report: progress while the kernel computes, bytecode listing
 * coloured by block, the WSP graph drawn from the report's data, the block detail with its
 * generated code, the cost table, the search tree, timings, and the controls that need the
 * kernel (through the explorer's comm channel). Everything is built with createElement /
 * createElementNS and textContent.
 */

import { batchMenu, savedBatches, withBatch } from './batches';
import { paintBlock } from './palette';
import { contractionsSection } from './contraction';
import { clear, fmt, fmtCost, fmtSeconds, h, ranges } from './dom';
import { AUTO_MAX_INSTRUCTIONS, IGraphData } from './dotgen';
import { GraphView, IGraphState } from './graphview';
import { ChannelState, IReply, KernelChannel } from './kernel';
import { profileSection } from './profile';
import { IMeasured, IReplayFrame, stepsSection } from './steps';
import { timingsSection } from './timings';
import { safeClass, TreeView } from './tree';
import {
  asArray, ICode, IDependency, IForbidden, IInstruction, INotice, IPartition, IReport, ITrace,
  ITraceEdge, IWeight, noticeLevel, sortedNotices, str
} from './types';

/** The report's own block colours beyond this many are not read (the rule in palette.ts goes on). */
export const MAX_LISTED_COLOURS = 64;
/** Runs per variant for Compile & time (`fusionlab compare --repeat`'s default). */
const DEFAULT_REPEAT = 5;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/g;
/** Listing rows drawn before "show all". */
const LISTING_ROWS = 2000;
const SAFE_COLOUR = /^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{3,20}|rgba?\([0-9., %]{5,40}\))$/;

/** Gives an explorer the kernel channel of its report, when its notebook has a kernel. */
export interface IKernelHost {
  channel(reportId: string, retry: boolean): KernelChannel | null;
}

/** View state kept across re-renders of the same report (the kernel's updates). */
interface IViewState {
  graph: IGraphState;
  block: number | null;
  trace: ITrace | null;
  message: string;
  projector?: boolean;
}

/** View states kept (the most recently rendered reports). */
const MAX_VIEW_STATES = 64;
const viewStates = new Map<string, IViewState>();
/** A choice made while the channel was still opening (the cell running), sent once it is open. */
const pendingSelects = new Map<string, { algorithm: string; cost_model: string }>();

function key(blocks: number[]): string {
  return [...blocks].sort((a, b) => a - b).join(',');
}


/** Weight edges of a version 1 report, read back from its DOT (version 2 carries them as data). */
function weightsFromDot(dot: string): IWeight[] {
  const out: IWeight[] = [];
  for (const line of dot.split('\n')) {
    if (!/style=dotted/.test(line)) {
      continue;
    }
    const a = /ltail="?cluster_(\d+)/.exec(line);
    const b = /lhead="?cluster_(\d+)/.exec(line);
    const s = /label="?([-0-9.e+]+)/.exec(line);
    if (a && b && s) {
      out.push({ a: Number(a[1]) + 1, b: Number(b[1]) + 1, saving: Number(s[1]) });
    }
  }
  return out;
}

export class Explorer {
  readonly node: HTMLDivElement;
  private report: IReport | null = null;
  private algorithm = '';
  private costModel = '';
  private hover: number | null = null;
  private block: number | null = null;
  private tree: TreeView | null = null;
  private trace: ITrace | null = null;
  private blockOf = new Map<number, number>();
  private listedColours: string[] = [];
  private channel: KernelChannel | null = null;
  private unlisten: (() => void) | null = null;
  private kernelMessage = '';
  private showAllRows = false;
  private graphView!: GraphView;
  // parts rebuilt on selection
  private algorithmSelect!: HTMLSelectElement;
  private costSelect!: HTMLSelectElement;
  private status!: HTMLDivElement;
  private listing!: HTMLTableSectionElement;
  private listingMore!: HTMLDivElement;
  private detail!: HTMLDivElement;
  private costs!: HTMLTableElement;
  private kernelBar!: HTMLDivElement;
  private kernelState!: HTMLSpanElement;
  private kernelReply!: HTMLSpanElement;
  private treeSlot!: HTMLDivElement;
  private stepsSlot!: HTMLDivElement;
  private projector = false;
  private panes!: HTMLDivElement;
  private graphPane!: HTMLDivElement;
  private costsSection!: HTMLElement;
  private projectorRow!: HTMLDivElement;
  private stepsFor = '';
  /** the waterfall's two ends chosen (kept when the kernel updates the report) */
  private waterfallChosen: { from?: string; to?: string } = {};
  private blockFields: { mergeA: HTMLInputElement; mergeB: HTMLInputElement; splitBlock: HTMLInputElement } | null = null;

  constructor(private host: IKernelHost | null = null) {
    this.node = h('div', 'fl-explorer', { 'data-fl-state': 'empty' });
  }

  dispose(): void {
    this.saveState();
    this.tree?.dispose();
    this.tree = null;
    this.unlisten?.();
    this.unlisten = null;
    this.channel = null;
  }

  private saveState(): void {
    const id = this.report?.id;
    if (typeof id === 'string' && id && this.graphView) {
      viewStates.delete(id);
      while (viewStates.size >= MAX_VIEW_STATES) {
        viewStates.delete(viewStates.keys().next().value!);
      }
      viewStates.set(id, {
        graph: this.graphView.state(), block: this.block, trace: this.trace, message: this.kernelMessage,
        projector: this.projector
      });
    }
  }

  /** Show another batch of a saved report (no kernel): its own view, from its first state. */
  private showBatch(next: IReport): void {
    const id = str(next.id);
    viewStates.delete(id);
    pendingSelects.delete(id);
    this.setReport(next);
    this.node.setAttribute('data-fl-batch', String(next.batch));
  }

  /** Show `data`; the selection is the report's own (the kernel's), the view state kept for the same report. */
  setReport(data: unknown): void {
    this.dispose();
    clear(this.node);
    const report = data as IReport;
    if (!report || typeof report !== 'object' || !report.program || !Array.isArray(report.partitions)) {
      this.report = null;
      this.node.setAttribute('data-fl-state', 'invalid');
      this.node.appendChild(h('div', 'fl-error', {}, 'This output is not a fusionlab explorer report.'));
      return;
    }
    this.report = report;
    // the kernel's selection, unless one chosen here waits for the channel to open
    const sel = pendingSelects.get(str(report.id)) || report.selected || { algorithm: '', cost_model: '' };
    this.algorithm = str(sel.algorithm);
    this.costModel = str(sel.cost_model);
    if (!this.partition() && report.partitions.length) {
      this.algorithm = str(report.partitions[0].algorithm);
      this.costModel = str(report.partitions[0].cost_model);
    }
    const saved = typeof report.id === 'string' ? viewStates.get(report.id) : undefined;
    this.hover = null;
    this.block = saved ? saved.block : null;
    this.kernelMessage = saved ? saved.message : '';
    this.projector = !!saved?.projector;
    // a whole trace fetched from the kernel replaces the capped one of the report
    this.trace = saved?.trace && report.trace ? saved.trace : (report.trace ?? null);
    this.showAllRows = false;
    this.setPalette();
    this.build(saved?.graph);
    this.node.setAttribute('data-fl-state', 'ready');
    this.node.setAttribute('data-fl-version', String(report.version ?? 1));
    this.node.setAttribute('data-fl-id', str(report.id));
    this.connect(false);
  }

  // ---------------------------------------------------------------- data

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

  private graphData(p: IPartition | undefined): IGraphData | null {
    if (!p || !asArray(p.blocks).length) {
      return null;
    }
    let weights = asArray<IWeight>(p.weights);
    const dots = asArray<string>(this.report?.dots);
    if (!Array.isArray(p.weights) && typeof p.dot === 'number' && typeof dots[p.dot] === 'string') {
      weights = weightsFromDot(dots[p.dot]);
    }
    return {
      instructions: this.instructions(),
      dependencies: asArray<IDependency>(this.report?.graph?.dependencies),
      forbidden: asArray<IForbidden>(this.report?.graph?.forbidden),
      blocks: asArray<number[]>(p.blocks).map(b => asArray<number>(b).map(Number)),
      weights: weights.map(w => ({ a: Number(w.a), b: Number(w.b), saving: Number(w.saving) }))
    };
  }

  /** The report's block colours (when they are plain colours) for the light theme; the dark theme keeps its own. */
  private setPalette(): void {
    const blocks = asArray<string>(this.report?.palette?.blocks).filter(c => typeof c === 'string');
    const good = blocks.every(c => SAFE_COLOUR.test(c));
    this.listedColours = good ? blocks.slice(0, MAX_LISTED_COLOURS) : [];
    const edges = this.report?.palette?.edges || {};
    for (const kind of ['dependency', 'forbidden', 'weight', 'contracted'] as const) {
      const c = (edges as any)[kind];
      if (typeof c === 'string' && SAFE_COLOUR.test(c)) {
        this.node.style.setProperty(`--fl-edge-${kind}`, c);
      } else {
        this.node.style.removeProperty(`--fl-edge-${kind}`);
      }
    }
  }

  /** Paint `el` in block `b`'s colour: distinct for any number of blocks (palette.ts). */
  paint<E extends HTMLElement | SVGElement>(el: E, b: number): E {
    paintBlock(el, b, this.listedColours[b - 1]);
    return el;
  }

  // ---------------------------------------------------------------- layout

  private build(graphState: IGraphState | undefined): void {
    const report = this.report!;
    const root = this.node;
    const n = this.instructions().length;

    // header: name, batch, notices, progress
    const batches = asArray<{ index: number; instructions: number; same_as: number | null }>(report.batches);
    const batch = batches.find(b => b.index === report.batch);
    const projectorButton = h('button', 'fl-button fl-projector-button', {
      type: 'button', 'data-fl-action': 'projector', 'aria-pressed': String(this.projector),
      title: 'projector mode: larger type, the graph and the cost table side by side (Tab reaches every control; ← → step the replay)'
    }, 'projector');
    projectorButton.addEventListener('click', () => {
      this.setProjector(!this.projector);
      projectorButton.setAttribute('aria-pressed', String(this.projector));
    });
    root.appendChild(h('div', 'fl-head', {},
      h('span', 'fl-title', {}, 'fusion explorer'), projectorButton,
      report.name ? h('span', 'fl-name', {}, str(report.name)) : null,
      h('span', 'fl-meta', {}, `${n} instructions`),
      batches.length > 1 ? h('span', 'fl-meta', {}, `batch ${fmt(Number(report.batch) + 1)} of ${batches.length}`) : null,
      batch && typeof batch.same_as === 'number'
        ? h('span', 'fl-meta', {}, `same as batch ${fmt(batch.same_as + 1)}: partitions from the merge cache`) : null));
    const progress = this.buildProgress();
    if (progress) {
      root.appendChild(progress);
    }
    const notices = sortedNotices(asArray<INotice>(report.notices));
    if (notices.length) {
      root.appendChild(h('ul', 'fl-notices', {}, ...notices.map(x => {
        const level = noticeLevel(x);
        // the plain message; the expert's record (views, temporaries) behind a toggle
        const detail = typeof x.detail === 'string' && x.detail
          ? [h('details', 'fl-notice-detail', {}, h('summary', '', {}, 'details'), h('code', '', {}, x.detail))]
          : [];
        return h('li', `fl-notice fl-notice-${safeClass(x.kind)} fl-level-${level}`, { title: str(x.kind) },
          h('span', 'fl-level', {}, level),
          `${x.line ? ` (line ${fmt(x.line)})` : ''}: ${str(x.message)}`, ...detail);
      })));
    }

    // selection
    this.algorithmSelect = this.makeSelect('algorithm', this.names('algorithm'), this.algorithm);
    this.costSelect = this.makeSelect('cost_model', this.names('cost_model'), this.costModel);
    this.algorithmSelect.addEventListener('change', () => this.select(this.algorithmSelect.value, this.costModel, true));
    this.costSelect.addEventListener('change', () => this.select(this.algorithm, this.costSelect.value, true));
    this.status = h('div', 'fl-status');
    root.appendChild(h('div', 'fl-controls', {},
      h('label', '', {}, 'algorithm ', this.algorithmSelect),
      h('label', '', {}, 'cost model ', this.costSelect),
      this.status));
    root.appendChild(this.buildKernelBar());

    // listing and graph side by side
    this.listing = h('tbody');
    this.listingMore = h('div', 'fl-listing-more');
    const table = h('table', 'fl-listing', {}, this.listing);
    this.graphView = new GraphView({
      hover: k => this.setHover(k),
      selectBlock: b => this.selectBlock(b, true),
      paint: (el, b) => this.paint(el, b),
      wide: on => this.node.classList.toggle('fl-wide', on)
    });
    this.graphView.restore(graphState);
    this.graphPane = h('div', 'fl-pane fl-graph-pane', {},
      h('div', 'fl-pane-title', {}, 'WSP graph', h('span', 'fl-hint', {},
        ' · solid: dependency · dashed: fuse-preventing (reason) · dotted: weight edge (saving) · ' +
        'wheel: zoom · drag: pan · click a block to expand it')),
      this.graphView.toolbar,
      this.graphView.node);
    this.projectorRow = h('div', 'fl-projector-row');
    root.appendChild(this.projectorRow);
    root.appendChild(this.panes = h('div', 'fl-panes', {},
      h('div', 'fl-pane fl-listing-pane', {},
        h('div', 'fl-pane-title', {}, 'Bytecode', h('span', 'fl-hint', {}, ' · ',
          h('span', 'fl-contracted', {}, 'A'), ' contracted array (never allocated) · click a block for its code')),
        h('div', 'fl-listing-scroll', { 'data-fl-section': 'listing' }, table, this.listingMore)),
      this.graphPane));
    root.addEventListener('mouseleave', () => this.setHover(null));

    this.detail = h('div', 'fl-block-detail', { 'data-fl-section': 'block' });
    root.appendChild(this.detail);

    this.costs = h('table', 'fl-costs', { 'data-fl-section': 'costs' });
    this.costsSection = h('details', 'fl-section fl-costs-section', { open: true },
      h('summary', '', {}, 'Costs of every algorithm × cost model'), this.costs);
    root.appendChild(this.costsSection);

    this.stepsSlot = h('div', 'fl-steps-slot');
    this.stepsFor = '';
    root.appendChild(this.stepsSlot);

    this.treeSlot = h('div', 'fl-tree-slot');
    root.appendChild(this.treeSlot);
    this.buildTree();

    const contractions = contractionsSection(report.contractions);
    if (contractions) {
      root.appendChild(contractions);
    }

    const timings = report.timings;
    if (timings && Array.isArray(timings.records) && timings.records.length) {
      root.appendChild(h('details', 'fl-section', { open: true },
        h('summary', '', {}, `Timings (${fmt(timings.repeat)} runs of each variant)`), timingsSection(timings)));
    }
    const profile = report.profile;
    if (profile && typeof profile === 'object' && Array.isArray(profile.kernels)) {
      root.appendChild(h('details', 'fl-section', { open: true, 'data-fl-section': 'profile' },
        h('summary', '', {}, `Profile of ${str(profile.algorithm)} / ${str(profile.cost_model)}: each block ` +
          'measured beside the time model, and a roofline'), profileSection(profile)));
    }
    this.update(true);
    if (this.projector) {
      this.setProjector(true);
    }
  }

  /**
   * Projector mode: larger type, and the graph beside the cost table above everything else
   * (the listing below them); off, each goes back where it was.
   */
  private setProjector(on: boolean): void {
    this.projector = on;
    this.node.classList.toggle('fl-projector', on);
    if (on) {
      this.projectorRow.append(this.graphPane, this.costsSection);
    } else {
      this.panes.appendChild(this.graphPane);
      this.detail.after(this.costsSection);
    }
    this.graphView.fit();
  }

  /** The progress line while the kernel computes; the outcome of an interrupted or budget-cut run. */
  private buildProgress(): HTMLDivElement | null {
    const st = this.report?.status;
    if (!st || typeof st !== 'object') {
      return null;
    }
    const pending = asArray<[string, string]>(st.pending);
    const budget = typeof st.budget_seconds === 'number' ? `, budget ${fmtSeconds(st.budget_seconds)}` : '';
    const elapsed = typeof st.elapsed_seconds === 'number' ? ` after ${fmtSeconds(st.elapsed_seconds)}` : '';
    // an interrupted run is over whatever `complete` says (the kernel stopped working on it)
    if (st.interrupted) {
      return h('div', 'fl-progress fl-interrupted', { 'data-fl-complete': String(!!st.complete), role: 'status' },
        `Interrupted${elapsed}: the results below are those computed before the interrupt`,
        pending.length ? ` (${pending.length} not computed)` : '');
    }
    if (!st.complete && str(st.phase) === 'pending') {
      // nothing under way: partitions the kernel computes when this batch is chosen (a batch
      // kept for the saved notebook with its first partitions only, or a search stopped)
      return h('div', 'fl-progress fl-not-computed', { 'data-fl-complete': 'false', role: 'status' },
        `${pending.length} partition${pending.length === 1 ? '' : 's'} not computed yet: ` +
        'choose this batch with the kernel running to compute them');
    }
    if (!st.complete) {
      return h('div', 'fl-progress', { 'data-fl-complete': 'false', role: 'status' },
        h('span', 'fl-spinner'),
        `Computing: ${str(st.phase) || 'working'}`,
        pending.length ? ` · ${pending.length} more to compute` : '',
        `${elapsed}${budget}`);
    }
    return null;
  }

  private buildKernelBar(): HTMLDivElement {
    const report = this.report!;
    const button = (label: string, title: string, action: string, fn: () => void) => {
      const b = h('button', 'fl-button', { type: 'button', title, 'data-fl-action': action, 'data-fl-kernel': true }, label);
      b.addEventListener('click', fn);
      return b;
    };
    const num = (name: string, title: string) =>
      h('input', 'fl-num', { type: 'number', min: 1, step: 1, 'data-fl-control': name, 'aria-label': title, title,
        'data-fl-kernel': true });
    const mergeA = num('merge-a', 'first block to merge');
    const mergeB = num('merge-b', 'second block to merge');
    const splitBlock = num('split-block', 'block to split into its instructions');
    // the same default as `fusionlab compare --repeat` and the channel's `time` action
    const repeat = h('input', 'fl-num', { type: 'number', min: 1, max: 1000, value: DEFAULT_REPEAT, 'data-fl-control': 'repeat',
      'aria-label': 'runs per variant', title: 'runs per variant', 'data-fl-kernel': true });
    const parts: (Node | string)[] = [];
    // the kernel's menu (fusionlab.explore.report.batch_menu): past 50 batches, each kind once
    const menu = batchMenu(report);
    if (asArray(report.batches).length > 1) {
      // with the kernel, any batch (it computes it); without, the batches the saved report keeps
      const saved = savedBatches(report);
      const local = saved.size > 1;
      const sel = h('select', 'fl-select', { 'data-fl-control': 'batch', 'aria-label': 'batch',
        ...(local ? { 'data-fl-saved': [...saved].join(' ') } : { 'data-fl-kernel': true }) },
        ...menu.map(m => h('option', '', { value: m.index, 'data-fl-alike': m.alike, 'data-fl-saved': saved.has(m.index) },
          m.label + (local && !saved.has(m.index) ? ' (needs the kernel)' : ''))));
      sel.value = String(report.batch);
      sel.addEventListener('change', () => {
        const batch = Number(sel.value);
        if (this.channel && this.channel.state === 'open') {
          void this.send('batch', { batch });
          return;
        }
        const next = withBatch(report, batch);
        if (next) {
          this.showBatch(next);
        } else {
          sel.value = String(report.batch);
          this.showReply('batch', { ok: false, message: `batch ${batch + 1} was not viewed before the notebook was saved: it needs the kernel` });
        }
      });
      parts.push(h('label', '', {}, 'batch ', sel));
    }
    parts.push(
      h('span', 'fl-group', {}, 'merge blocks ', mergeA, ' and ', mergeB, ' ',
        button('merge', 'merge the two blocks (manual partition)', 'merge',
          () => void this.send('merge', { a: Number(mergeA.value), b: Number(mergeB.value) }))),
      h('span', 'fl-group', {}, 'split block ', splitBlock, ' ',
        button('split', 'split the block into its instructions (manual partition)', 'split',
          () => void this.send('split', { block: Number(splitBlock.value) }))),
      button('reset', 'forget the manual partition', 'reset', () => void this.send('reset', {})),
      h('span', 'fl-group', {}, button('Compile & time', 'compile the partitions and time them against NumPy',
        'time', () => void this.send('time', { repeat: Math.max(1, Number(repeat.value) || 1) })), ' × ', repeat),
      button('Profile', 'time each block of the selected partition beside the time model\'s prediction, with a roofline',
        'profile', () => void this.send('profile', { repeat: Math.max(1, Number(repeat.value) || 1) })));
    const tr = this.report?.trace;
    if (tr && tr.truncated) {
      parts.push(button('fetch the whole trace', 'the report keeps the first nodes of the search only', 'trace',
        () => void this.fetchTrace()));
    }
    this.kernelState = h('span', 'fl-kernel-state');
    this.kernelReply = h('span', 'fl-kernel-reply', { role: 'status' }, this.kernelMessage);
    this.kernelBar = h('div', 'fl-kernel-bar', { 'data-fl-section': 'kernel', 'data-fl-channel': 'none' },
      h('span', 'fl-kernel-title', {}, 'Kernel'), this.kernelState, ...parts, this.kernelReply);
    this.blockFields = { mergeA, mergeB, splitBlock };
    this.refreshKernel();
    return this.kernelBar;
  }

  /** Find this notebook's kernel and open the report's channel (again, when `retry`). */
  connect(retry: boolean): void {
    const id = this.report?.id;
    if (!this.report || !this.host || typeof id !== 'string' || !id) {
      this.setChannel(null);
      return;
    }
    this.setChannel(this.host.channel(id, retry));
  }

  private setChannel(ch: KernelChannel | null): void {
    if (ch !== this.channel) {
      this.unlisten?.();
      this.unlisten = ch ? ch.listen(() => this.refreshKernel()) : null;
      this.channel = ch;
    }
    this.refreshKernel();
  }

  private channelState(): ChannelState {
    return this.channel ? this.channel.state : 'none';
  }

  private refreshKernel(): void {
    if (!this.kernelBar) {
      return;
    }
    const state = this.channelState();
    const id = str(this.report?.id);
    const pending = pendingSelects.get(id);
    if (state === 'open' && pending) {
      pendingSelects.delete(id);
      void this.send('select', pending);
    } else if (state === 'unavailable') {
      pendingSelects.delete(id);
    }
    const changed = this.kernelBar.getAttribute('data-fl-channel') !== state;
    this.kernelBar.setAttribute('data-fl-channel', state);
    if (changed && this.status) {
      // the status says whether the selection is the kernel's: it follows the channel
      this.renderStatus(this.partition());
    }
    clear(this.kernelState);
    const v1 = Number(this.report?.version ?? 1) < 2 || !this.report?.id;
    let text: string;
    if (state === 'open') {
      text = 'connected';
    } else if (state === 'connecting') {
      text = 'connecting… (waits while the kernel is busy)';
    } else if (v1) {
      text = 'these controls need the kernel: this report comes from an older fusionlab, run the cell again';
    } else if (state === 'unavailable') {
      text = `these controls need the kernel: ${this.channel?.detail || 'it does not know this explorer'} ` +
        '(run the cell again)';
    } else {
      text = 'these controls need the kernel: run the cell (with %load_ext fusionlab) to use them';
    }
    this.kernelState.append(text);
    if (state === 'unavailable' && !v1) {
      const retry = h('button', 'fl-button', { type: 'button', 'data-fl-action': 'reconnect' }, 'retry');
      retry.addEventListener('click', () => this.connect(true));
      this.kernelState.append(' ', retry);
    }
    // the kernel's controls: the bar's, and the steps section's "Time these steps"
    for (const el of Array.from(this.node.querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLSelectElement>(
      '[data-fl-kernel]'))) {
      el.disabled = state !== 'open';
    }
  }

  private async send(action: string, fields: Record<string, unknown>): Promise<IReply> {
    if (!this.channel || this.channel.state !== 'open') {
      const reply = { ok: false, message: 'this needs the kernel' };
      this.showReply(action, reply);
      return reply;
    }
    this.showReply(action, { ok: true, message: 'sent, waiting for the kernel…' }, true);
    const reply = await this.channel.request(action, fields);
    this.showReply(action, reply);
    return reply;
  }

  private showReply(action: string, reply: IReply, waiting = false): void {
    this.kernelMessage = `${action}: ${reply.ok ? '' : 'failed: '}${str(reply.message) || (reply.ok ? 'done' : 'no reason given')}`;
    if (this.kernelReply) {
      this.kernelReply.textContent = this.kernelMessage;
      this.kernelReply.className = `fl-kernel-reply ${waiting ? 'fl-waiting' : reply.ok ? 'fl-ok' : 'fl-failed'}`;
      this.kernelReply.setAttribute('data-fl-ok', String(reply.ok));
    }
  }

  private async fetchTrace(): Promise<void> {
    const reply = await this.send('trace', {});
    const t = reply.trace as ITrace | undefined;
    if (reply.ok && t && typeof t === 'object' && Array.isArray(t.nodes)) {
      this.trace = t;
      this.saveState();
      this.buildTree();
      this.showReply('trace', { ok: true, message: `${t.nodes.length} nodes fetched` });
    }
  }

  private buildTree(): void {
    this.tree?.dispose();
    this.tree = null;
    clear(this.treeSlot);
    const trace = this.trace;
    if (trace && typeof trace === 'object' && Array.isArray(trace.nodes) && trace.nodes.length) {
      this.tree = new TreeView(trace, k => this.describeTraceEdge(k));
      this.treeSlot.appendChild(h('details', 'fl-section', { open: true },
        h('summary', '', {}, 'Search tree (optimal algorithm)'), this.tree.node));
    }
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
    const e = asArray<ITraceEdge>(this.trace?.edges)[k];
    if (!e) {
      return `#${k}`;
    }
    return `{${asArray<number>(e.a).join(',')}}–{${asArray<number>(e.b).join(',')}}`;
  }

  // ---------------------------------------------------------------- selection

  /** Show `algorithm` × `costModel`; chosen by the user, the kernel is told (`select`) when connected. */
  select(algorithm: string, costModel: string, fromUser = false): void {
    const changed = algorithm !== this.algorithm || costModel !== this.costModel;
    this.algorithm = algorithm;
    this.costModel = costModel;
    this.block = null;
    this.update(false);
    if (fromUser && changed) {
      const state = this.channelState();
      if (state === 'open') {
        void this.send('select', { algorithm, cost_model: costModel });
      } else if (state === 'connecting') {
        // the kernel is busy (this cell still runs): tell it once the channel opens
        pendingSelects.set(str(this.report?.id), { algorithm, cost_model: costModel });
      }
    }
  }

  private update(first: boolean): void {
    const p = this.partition();
    this.algorithmSelect.value = this.algorithm;
    this.costSelect.value = this.costModel;
    this.node.setAttribute('data-fl-algorithm', this.algorithm);
    this.node.setAttribute('data-fl-cost-model', this.costModel);
    this.blockOf.clear();
    if (p) {
      asArray<number[]>(p.blocks).forEach((b, k) => asArray<number>(b).forEach(i => this.blockOf.set(Number(i), k + 1)));
    }
    if (this.block !== null && (!p || !asArray(p.blocks)[this.block - 1])) {
      this.block = null;
    }
    this.renderStatus(p);
    this.renderListing(p);
    this.renderCosts();
    this.renderSteps();
    this.renderDetail();
    this.graphView.setSelected(this.block);
    void this.graphView.setData(this.graphData(p), first).then(() => {
      this.applyHover();
      this.applyBlock();
    });
  }

  private renderStatus(p: IPartition | undefined): void {
    clear(this.status);
    if (!p) {
      this.status.append(h('span', 'fl-warning', {}, `${this.algorithm} × ${this.costModel} was not computed`));
      return;
    }
    const state = str(p.status) || 'done';
    this.status.setAttribute('data-fl-status', state);
    if (state === 'pending') {
      // under way, or (the report's phase "pending") waiting until the kernel is asked
      const idle = str(this.report?.status?.phase) === 'pending';
      this.status.append(h('span', 'fl-pending', {}, `${this.algorithm} × ${this.costModel}: ` +
        (idle ? 'not computed yet (select it with the kernel running to compute it)' : 'being computed…')));
      return;
    }
    if (!asArray(p.blocks).length) {
      // stopped before its algorithm had any partition
      this.status.append(h('span', 'fl-warning', {}, `${this.algorithm} × ${this.costModel}: no partition ` +
        `(${state === 'budget' ? 'the budget ran out first' : state === 'interrupted' ? 'interrupted first' : 'failed'})`));
      for (const note of [...asArray<string>(p.notes), ...asArray<string>(p.problems)]) {
        this.status.append(h('span', 'fl-note', {}, str(note)));
      }
      return;
    }
    const selected = this.selectedPartition() === p;
    const blocks = asArray(p.blocks).length;
    this.status.append(
      h('span', 'fl-cost', { 'data-fl-cost': p.cost }, `cost ${fmtCost(p.cost)} ${str(p.unit)}`),
      h('span', '', {}, `${blocks} block${blocks === 1 ? '' : 's'}, ${fmt(p.kernels)} kernel${p.kernels === 1 ? '' : 's'}`),
      h('span', p.legal ? 'fl-legal' : 'fl-illegal', { 'data-fl-legal': String(!!p.legal) },
        p.legal ? 'legal' : 'illegal'),
      h('span', 'fl-meta', {}, fmtSeconds(p.seconds)));
    if (p.proven_optimal) {
      this.status.append(h('span', 'fl-optimal', {}, 'proven optimal'));
    } else if (state === 'budget' || state === 'interrupted') {
      const bound = typeof p.bound === 'number' ? ` (bound ${fmt(p.bound)} ${str(p.unit)})` : '';
      this.status.append(h('span', 'fl-not-proven', { 'data-fl-bound': p.bound ?? null },
        `not proven${bound}: ${state === 'budget' ? 'cut by the budget' : 'interrupted'}, best so far`));
    } else if (state === 'error') {
      this.status.append(h('span', 'fl-illegal', {}, 'failed'));
    }
    if (p.cache_hit) {
      this.status.append(h('span', 'fl-meta', {}, 'from the merge cache'));
    }
    if (selected) {
      // without a kernel there is no selection in the kernel: it is what the cell chose when it ran
      const state = this.channelState();
      this.status.append(h('span', 'fl-meta', {},
        state === 'none' || state === 'unavailable' ? 'selected when the cell ran' : 'selected in the kernel'));
    }
    const weights = asArray(p.weights).length;
    if (typeof p.weights_total === 'number' && p.weights_total > weights) {
      this.status.append(h('span', 'fl-note', {}, `the graph shows the heaviest ${weights} of ${fmt(p.weights_total)} weight edges`));
    }
    const g = this.report?.graph;
    const kept = asArray(g?.dependencies).length + asArray(g?.forbidden).length;
    if (g && typeof g.edges_total === 'number' && g.edges_total > kept) {
      this.status.append(h('span', 'fl-note', {}, `the report keeps ${kept} of the graph's ${fmt(g.edges_total)} edges`));
    }
    for (const note of [...asArray<string>(p.notes), ...asArray<string>(p.problems)]) {
      this.status.append(h('span', 'fl-note', {}, str(note)));
    }
  }

  private renderListing(p: IPartition | undefined): void {
    clear(this.listing);
    clear(this.listingMore);
    const all = this.instructions();
    const rows = this.showAllRows ? all : all.slice(0, LISTING_ROWS);
    for (const ins of rows) {
      const n = Number(ins.n);
      const b = this.blockOf.get(n);
      const contracted = new Set(b && p ? asArray<string>(asArray<string[]>(p.contracted)[b - 1]) : []);
      const row = h('tr', `fl-ins${ins.system ? ' fl-system' : ''}`, {
        'data-instruction': n, 'data-block': b ?? null
      },
      h('td', 'fl-swatch'),
      h('td', 'fl-n', {}, String(n)),
      h('td', 'fl-blk', {}, b ? `b${b}` : ''),
      h('td', 'fl-text', {}, ...this.tokens(str(ins.text), contracted)));
      if (b) {
        this.paint(row, b);
      }
      row.addEventListener('mouseenter', () => this.setHover(n));
      row.addEventListener('click', () => b && this.selectBlock(b, false));
      this.listing.appendChild(row);
    }
    if (rows.length < all.length) {
      const more = h('button', 'fl-button', { type: 'button', 'data-fl-action': 'all-rows' },
        `show all ${all.length} instructions`);
      more.addEventListener('click', () => {
        this.showAllRows = true;
        this.renderListing(this.partition());
        this.applyHover();
        this.applyBlock();
      });
      this.listingMore.append(`${all.length - rows.length} more instructions not listed · `, more);
    }
  }

  /** The replay and waterfall of the cost model shown (made again only when it changes). */
  private renderSteps(): void {
    if (this.stepsFor === this.costModel) {
      return;
    }
    this.stepsFor = this.costModel;
    this.setFrame(null);
    clear(this.stepsSlot);
    const section = stepsSection(this.report?.steps, this.costModel, {
      instructions: this.instructions().length,
      blocks: (algorithm, costModel) => {
        const p = this.partition(algorithm, costModel);
        return p && asArray(p.blocks).length ? asArray<number[]>(p.blocks).map(b => asArray<number>(b).map(Number)) : null;
      },
      unit: costModel => {
        const unit = str(this.partition('greedy', costModel)?.unit);
        return unit ? ` ${unit}` : '';
      },
      showGreedy: costModel => {
        if (this.algorithm !== 'greedy' || this.costModel !== costModel) {
          this.select('greedy', costModel, true);
        }
        // a step is drawn on the instructions: a program small enough to draw them gets them
        if (this.graphView.level() === 'blocks' && this.instructions().length <= AUTO_MAX_INSTRUCTIONS) {
          this.graphView.setLevel('instructions');
        }
      },
      frame: f => this.setFrame(f),
      measured: asArray<IMeasured>(this.report?.measured_waterfalls),
      kernel: () => !!this.channel && this.channel.state === 'open',
      timeWaterfall: (a, b, costModel) => {
        const input = this.node.querySelector<HTMLInputElement>("input[data-fl-control='repeat']");
        void this.send('time_waterfall', { a, b, cost_model: costModel, repeat: Math.max(1, Number(input?.value) || DEFAULT_REPEAT) });
      },
      chosen: this.waterfallChosen
    });
    if (section) {
      this.stepsSlot.appendChild(section);
    }
  }

  /** Draw a replay step on the graph and the listing (null: the partition again). */
  private setFrame(f: IReplayFrame | null): void {
    const greedy = this.partition('greedy', this.costModel);
    const finalBlock = new Map<number, number>();
    asArray<number[]>(greedy?.blocks).forEach((b, k) => asArray<number>(b).forEach(i => finalBlock.set(Number(i), k + 1)));
    this.graphView.setOverlay(f, i => finalBlock.get(i) ?? 1);
    for (const row of Array.from(this.listing.querySelectorAll<HTMLElement>('tr.fl-ins'))) {
      const i = Number(row.getAttribute('data-instruction'));
      row.classList.toggle('fl-replay-moved', !!f && f.moved.has(i));
      row.classList.toggle('fl-replay-into', !!f && f.into.has(i));
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
    const parts = asArray<IPartition>(this.report?.partitions);
    const head = h('tr', '', {}, h('th', '', {}, 'algorithm'));
    for (const m of models) {
      const unit = parts.find(p => p.cost_model === m && p.unit)?.unit;
      head.appendChild(h('th', '', {}, m.replace(/_/g, ' '), unit ? h('div', 'fl-unit', {}, str(unit)) : null));
    }
    this.costs.appendChild(h('thead', '', {}, head));
    const best = new Map<string, number>();
    for (const m of models) {
      const legal = parts.filter(p => p.cost_model === m && p.legal && typeof p.cost === 'number' &&
        str(p.status || 'done') !== 'pending');
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
        const state = str(p.status) || 'done';
        const cls = ['fl-cost-cell', `fl-state-${safeClass(state)}`];
        if (a === this.algorithm && m === this.costModel) {
          cls.push('fl-current');
        }
        if (p.legal && best.get(m) === p.cost && state !== 'pending') {
          cls.push('fl-best');
        }
        if (!p.legal && state !== 'pending' && asArray(p.blocks).length) {
          cls.push('fl-illegal');
        }
        if (!asArray(p.blocks).length) {
          cls.push('fl-empty');
        }
        const unproven = !p.proven_optimal && (state === 'budget' || state === 'interrupted');
        const bound = typeof p.bound === 'number' ? `, bound ${fmt(p.bound)}` : '';
        const title = state === 'pending'
          ? `${a} × ${m}: being computed`
          : `${a} × ${m}: ${fmtCost(p.cost)} ${str(p.unit)}, ${asArray(p.blocks).length} blocks` +
            `${p.legal ? '' : ', illegal'}${p.proven_optimal ? ', proven optimal' : ''}` +
            `${unproven ? `, not proven${bound}` : ''}`;
        const cell = h('td', cls.join(' '), {
          'data-algorithm': a, 'data-cost-model': m, 'data-fl-status': state, tabindex: 0, title
        }, ...(state === 'pending' ? ['…']
          : !asArray(p.blocks).length ? [state === 'error' ? 'error' : state === 'budget' ? 'out of budget' : str(state)]
            : [fmtCost(p.cost), p.legal ? '' : ' ✗', p.proven_optimal ? ' ✓' : '', unproven ? ' †' : '',
              state === 'error' ? ' error' : '']));
        cell.addEventListener('click', () => this.select(a, m, true));
        cell.addEventListener('keydown', ev => {
          if (ev.key === 'Enter' || ev.key === ' ') {
            ev.preventDefault();
            this.select(a, m, true);
          }
        });
        row.appendChild(cell);
      }
      body.appendChild(row);
    }
    this.costs.appendChild(body);
    this.costs.appendChild(h('caption', '', {},
      'Click a cell to show that partition · bold: the lowest legal cost · ✓ proven optimal · ' +
      '† not proven (cut by the budget: best so far, bound in the tooltip) · ✗ illegal · … being computed · ' +
      'out of budget: the budget ran out before this one had a partition'));
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

  selectBlock(b: number | null, fromGraph = false): void {
    this.block = fromGraph ? b : (this.block === b ? null : b);
    this.graphView.setSelected(this.block);
    this.applyBlock();
    this.renderDetail();
    // a block clicked in the graph or the listing fills the kernel bar's block fields
    const f = this.blockFields;
    if (this.block !== null && f) {
      const b = String(this.block);
      if (!f.mergeA.value || f.mergeA.value === b) {
        f.mergeA.value = b;
      } else {
        f.mergeB.value = b;
      }
      f.splitBlock.value = b;
    }
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
      `tr.fl-ins[data-block="${b}"], .fl-graph g.cluster[data-block="${b}"], .fl-graph g.node[data-block="${b}"]`))) {
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
    const focus = h('button', 'fl-button', { type: 'button', 'data-fl-action': 'focus-block' }, 'focus this block');
    focus.addEventListener('click', () => this.graphView.setFocus(b));
    d.append(
      this.paint(h('div', 'fl-block-title', {}, h('span', 'fl-swatch-inline'),
        `Block ${b} of ${this.algorithm} × ${this.costModel}: ${members.length} instruction${members.length === 1 ? '' : 's'} ` +
        `(${ranges(members.map(Number))}) `, focus), b),
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
        'With the kernel connected, choosing this partition selects it there and generates its code.'));
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

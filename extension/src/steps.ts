/**
 * The replay of greedy's merges and the fusion waterfall (the report's `steps` section, made by
 * fusionlab/explore/waterfall.py). A step names its block by one instruction (`into`) and lists
 * what moves as 1-based inclusive runs; the partitions on the way are rebuilt here from the first
 * one (all singletons for the replay, partition `a` for a waterfall), so each step can be shown
 * whole on the graph and in words.
 *
 * The replay is played with the arrow keys (← →, Home, End) or its buttons; the graph colours the
 * instructions already fused and outlines the pair of the current step. A waterfall lists the steps
 * from one partition of the cost table to another, each with its cost change and a bar, and their
 * sum beside the difference of the two costs.
 */

import { clear, fmtCost, fmtSeconds, h, ranges } from './dom';
import { asArray, str } from './types';

export interface IStep {
  kind: 'merge' | 'split';
  into: number;
  moved: [number, number][];
  cost: number | null;
}

export interface IStepListing {
  steps: IStep[];
  total: number;
  cost_before: number | null;
  cost_after: number | null;
}

export interface IReplay extends IStepListing {
  cost_model: string;
  matches?: boolean;
}

export interface IWaterfall extends IStepListing {
  cost_model: string;
  a: string[];
  b: string[];
}

/** A waterfall timed (the report's `measured_waterfalls`, fusionlab/explore/measured_waterfall.py). */
export interface IMeasuredPoint {
  after: number;
  blocks?: number;
  median_seconds: number | null;
  not_timed?: string;
}

export interface IMeasuredChange {
  from: number;
  to: number;
  seconds: number | null;
  ratio: number | null;
  low: number | null;
  high: number | null;
}

export interface IMeasured {
  cost_model: string;
  a: string[];
  b: string[];
  points: IMeasuredPoint[];
  changes: IMeasuredChange[];
  numpy_median_seconds?: number | null;
  total_seconds?: number | null;
  steps?: number;
  rounds?: number;
  repeat?: number;
  other_batches?: string;
}

export interface ISteps {
  replays: IReplay[];
  waterfalls: IWaterfall[];
  limit?: number;
  not_made?: string;
}

/** What the graph and the listing show of one replay step. */
export interface IReplayFrame {
  /** instruction (1-based) -> its group's id at this step */
  groupOf: Map<number, number>;
  /** the instructions of each group with more than one */
  fused: Set<number>;
  /** the instructions the step moved, and those of the block they joined */
  moved: Set<number>;
  into: Set<number>;
}

export interface IStepsHost {
  instructions: number;
  /** the blocks (1-based instructions) of `algorithm` under `costModel`, if computed */
  blocks(algorithm: string, costModel: string): number[][] | null;
  unit(costModel: string): string;
  /** show greedy's partition under `costModel` (the replay is drawn on it) */
  showGreedy(costModel: string): void;
  /** a replay frame to draw, or null to draw the partition again */
  frame(frame: IReplayFrame | null): void;
  /** the waterfalls timed (the report's `measured_waterfalls`) */
  measured?: IMeasured[];
  /** whether the kernel is there to time a waterfall */
  kernel?(): boolean;
  /** ask the kernel to time the waterfall from `a` to `b` (algorithms) under `costModel` */
  timeWaterfall?(a: string, b: string, costModel: string): void;
  /** the waterfall's two ends chosen last (kept across a re-render), and the place to keep them */
  chosen?: { from?: string; to?: string };
}

function expand(runs: [number, number][]): number[] {
  const out: number[] = [];
  for (const r of asArray<[number, number]>(runs)) {
    const a = Number(r?.[0]);
    const b = Number(r?.[1]);
    for (let i = a; Number.isInteger(i) && i <= b && out.length < 1_000_000; i++) {
      out.push(i);
    }
  }
  return out;
}

/** "{1–3, 7}" */
export function setLabel(ns: Iterable<number>): string {
  return `{${ranges(ns)}}`;
}

/** A partition being stepped through: groups of instructions. */
export class Groups {
  private of = new Map<number, number>();
  private members = new Map<number, Set<number>>();
  private next = 0;

  constructor(blocks: number[][]) {
    for (const b of blocks) {
      this.add(new Set(b));
    }
  }

  private add(set: Set<number>): number {
    const id = this.next++;
    this.members.set(id, set);
    for (const i of set) {
      this.of.set(i, id);
    }
    return id;
  }

  group(i: number): Set<number> {
    return this.members.get(this.of.get(i) ?? -1) ?? new Set();
  }

  /** Apply `step`; returns the block it joined or left (after the step) and what moved. */
  apply(step: IStep): { into: Set<number>; moved: Set<number> } {
    const moved = new Set(expand(step.moved));
    const intoId = this.of.get(step.into);
    if (intoId === undefined || !moved.size) {
      throw new Error('a step names instructions the partition does not have');
    }
    const into = this.members.get(intoId)!;
    if (step.kind === 'merge') {
      const first = moved.values().next().value as number;
      const fromId = this.of.get(first)!;
      this.members.delete(fromId);
      for (const i of moved) {
        into.add(i);
        this.of.set(i, intoId);
      }
    } else {
      for (const i of moved) {
        into.delete(i);
      }
      this.add(moved);
    }
    return { into: new Set([...into].filter(i => !moved.has(i))), moved };
  }

  frame(into: Set<number>, moved: Set<number>): IReplayFrame {
    const fused = new Set<number>();
    for (const set of this.members.values()) {
      if (set.size > 1) {
        set.forEach(i => fused.add(i));
      }
    }
    return { groupOf: new Map(this.of), fused, moved, into };
  }
}

function signed(x: number): string {
  return x > 0 ? `+${fmtCost(x)}` : x < 0 ? `−${fmtCost(-x)}` : '0';
}

/** A step in words: "merge {5} into {1}". */
export function describeStep(step: IStep, into: Set<number>, moved: Set<number>): string {
  return step.kind === 'merge'
    ? `merge ${setLabel(moved)} into ${setLabel(into)}`
    : `split ${setLabel(moved)} off ${setLabel(into)}`;
}

/** The steps of `w` the other way round (b to a), when all of them are listed. */
export function reversed(w: IWaterfall): IWaterfall | null {
  const steps = asArray<IStep>(w.steps);
  if (steps.length !== w.total) {
    return null;
  }
  const before = (k: number) => (k === 0 ? w.cost_before : steps[k - 1].cost);
  const back: IStep[] = [];
  for (let k = steps.length - 1; k >= 0; k--) {
    back.push({ kind: steps[k].kind === 'merge' ? 'split' : 'merge', into: steps[k].into,
      moved: steps[k].moved, cost: before(k) });
  }
  return { ...w, a: w.b, b: w.a, steps: back, cost_before: w.cost_after, cost_after: w.cost_before };
}

const num = (x: unknown): number | null => (typeof x === 'number' && isFinite(x) ? x : null);

/** `m` the other way round (b to a): the points from the end, each change undone. */
export function flipMeasured(m: IMeasured): IMeasured {
  const steps = Number(m.steps ?? Math.max(0, ...asArray<IMeasuredPoint>(m.points).map(p => Number(p.after))));
  const inv = (x: unknown) => { const v = num(x); return v === null || v === 0 ? null : 1 / v; };
  return {
    ...m, a: m.b, b: m.a,
    points: asArray<IMeasuredPoint>(m.points).map(p => ({ ...p, after: steps - Number(p.after) })).reverse(),
    changes: asArray<IMeasuredChange>(m.changes).map(c => ({
      from: steps - Number(c.to), to: steps - Number(c.from),
      seconds: num(c.seconds) === null ? null : -Number(c.seconds),
      ratio: inv(c.ratio), low: inv(c.high), high: inv(c.low)
    })).reverse(),
    total_seconds: num(m.total_seconds) === null ? null : -Number(m.total_seconds)
  };
}

/** A time change: "−12.3 µs". */
function signedTime(x: number): string {
  return x > 0 ? `+${fmtSeconds(x)}` : x < 0 ? `−${fmtSeconds(-x)}` : '0 s';
}

/** A measured change in words: its seconds, the time ratio and interval (above 1: faster). */
export function changeText(c: IMeasuredChange): string {
  const secs = num(c.seconds);
  if (secs === null) {
    return 'not timed';
  }
  const r = num(c.ratio);
  const lo = num(c.low);
  const hi = num(c.high);
  const ratio = r === null ? '' : ` ×${r.toFixed(2)}` + (lo !== null && hi !== null && lo !== hi
    ? ` [${lo.toFixed(2)}–${hi.toFixed(2)}]` : '');
  const apart = lo !== null && hi !== null && lo !== hi ? (lo > 1 ? ' faster' : hi < 1 ? ' slower' : ' no change measured') : '';
  return `${signedTime(secs)}${ratio}${apart}`;
}

/** The replay and waterfall section for `costModel`, or null when the report has no steps. */
export function stepsSection(data: unknown, costModel: string, host: IStepsHost): HTMLElement | null {
  const steps = (data && typeof data === 'object' ? data : null) as ISteps | null;
  if (!steps) {
    return null;
  }
  const replays = asArray<IReplay>(steps.replays);
  const falls = asArray<IWaterfall>(steps.waterfalls).filter(w => w.cost_model === costModel);
  const replay = replays.find(r => r.cost_model === costModel) ?? null;
  const body = h('div', 'fl-steps');
  if (replay) {
    body.appendChild(replayPanel(replay, host));
  }
  if (falls.length) {
    body.appendChild(waterfallPanel(falls, costModel, host));
  }
  if (steps.not_made) {
    body.appendChild(h('div', 'fl-hint', {}, `Other steps ${str(steps.not_made)}.`));
  }
  if (!replay && !falls.length && !steps.not_made) {
    return null;
  }
  return h('details', 'fl-section', { open: true, 'data-fl-section': 'steps' },
    h('summary', '', {}, `Replay and waterfall under ${costModel}`), body);
}

function replayPanel(replay: IReplay, host: IStepsHost): HTMLElement {
  const steps = asArray<IStep>(replay.steps);
  const unit = host.unit(replay.cost_model);
  let at = 0;   // steps applied
  const counter = h('span', 'fl-replay-counter', {});
  const said = h('div', 'fl-replay-step', {});
  const panel = h('div', 'fl-replay', {
    tabindex: 0, 'data-fl-step': '0', 'aria-label': 'greedy\'s merges: arrow keys step through them'
  });
  const singletons = (): number[][] => Array.from({ length: host.instructions }, (_, i) => [i + 1]);
  const show = (): void => {
    const groups = new Groups(singletons());
    let last: { into: Set<number>; moved: Set<number> } | null = null;
    for (let k = 0; k < at; k++) {
      last = groups.apply(steps[k]);
    }
    panel.setAttribute('data-fl-step', String(at));
    counter.textContent = `step ${at} of ${steps.length}${replay.total > steps.length ? ` listed (${fmtCost(replay.total)} in all)` : ''}`;
    clear(said);
    if (at === 0 || !last) {
      said.textContent = `Every instruction in its own block: cost ${fmtCost(replay.cost_before)}${unit}. ` +
        'Greedy merges over the heaviest legal weight edge first (→ to step).';
      host.frame(at === 0 ? groups.frame(new Set(), new Set()) : null);
      return;
    }
    const step = steps[at - 1];
    const before = at === 1 ? replay.cost_before : steps[at - 2].cost;
    const saving = typeof before === 'number' && typeof step.cost === 'number' ? before - step.cost : null;
    said.append(
      h('b', '', {}, describeStep(step, last.into, last.moved)),
      `: the edge saves ${saving === null ? '?' : fmtCost(saving)}${unit}; cost ${fmtCost(before)} → ${fmtCost(step.cost)}${unit}`);
    host.frame(groups.frame(last.into, last.moved));
  };
  const go = (k: number): void => {
    const was = at;
    at = Math.max(0, Math.min(steps.length, k));
    if (was === 0 && at > 0) {
      host.showGreedy(replay.cost_model);
    }
    show();
  };
  const button = (label: string, title: string, action: string, fn: () => void) => {
    const b = h('button', 'fl-button', { type: 'button', title, 'data-fl-action': action }, label);
    b.addEventListener('click', () => {
      fn();
      panel.focus();
    });
    return b;
  };
  panel.addEventListener('keydown', ev => {
    const moves: Record<string, () => number> = {
      ArrowRight: () => at + 1, ArrowLeft: () => at - 1, Home: () => 0, End: () => steps.length
    };
    const to = moves[ev.key];
    if (to) {
      ev.preventDefault();
      ev.stopPropagation();   // JupyterLab's own shortcuts do not see the keys the replay uses
      go(to());
    }
  });
  panel.append(
    h('div', 'fl-replay-title', {}, `Greedy's merges under ${replay.cost_model}, one at a time`,
      h('span', 'fl-hint', {}, ' · ← → step · Home / End')),
    h('div', 'fl-replay-controls', {},
      button('«', 'back to the start', 'replay-start', () => go(0)),
      button('◀', 'one merge back', 'replay-back', () => go(at - 1)),
      button('▶', 'the next merge', 'replay-forward', () => go(at + 1)),
      button('»', 'to greedy\'s partition', 'replay-end', () => go(steps.length)),
      button('stop', 'draw the partition again', 'replay-stop', () => {
        at = 0;
        panel.setAttribute('data-fl-step', '0');
        counter.textContent = `step 0 of ${steps.length}`;
        host.frame(null);
      }),
      counter),
    said);
  counter.textContent = `step 0 of ${steps.length}`;
  said.textContent = `Every instruction in its own block: cost ${fmtCost(replay.cost_before)}${unit}. ` +
    'Press → (or ▶) to watch greedy merge.';
  return panel;
}

function waterfallPanel(falls: IWaterfall[], costModel: string, host: IStepsHost): HTMLElement {
  // the distinct partitions, each named by its algorithms
  const names = new Map<string, string[]>();
  for (const w of falls) {
    names.set(w.a.join('='), w.a);
    names.set(w.b.join('='), w.b);
  }
  const keys = [...names.keys()];
  const select = (name: string, chosen: string) => {
    const el = h('select', 'fl-select', { 'data-fl-control': name, 'aria-label': `waterfall ${name}` },
      ...keys.map(k => h('option', '', { value: k }, names.get(k)!.join(' = '))));
    el.value = chosen;
    return el;
  };
  const kept = host.chosen ?? {};
  const fromSelect = select('from', kept.from && keys.includes(kept.from) ? kept.from : keys[0]);
  const toSelect = select('to', kept.to && keys.includes(kept.to) ? kept.to : keys[keys.length - 1]);
  // enabled while the kernel's channel is open (the explorer toggles every [data-fl-kernel])
  const timeButton = h('button', 'fl-button', { type: 'button', 'data-fl-action': 'time-waterfall', 'data-fl-kernel': true,
    title: 'compile and time the partitions along these steps, side by side with NumPy; ' +
      'timing the steps needs the kernel (run the cell with %load_ext fusionlab)' },
  'Time these steps');
  timeButton.disabled = !(host.timeWaterfall && host.kernel && host.kernel());
  timeButton.addEventListener('click', () => {
    const a = names.get(fromSelect.value);
    const b = names.get(toSelect.value);
    if (a && b && host.timeWaterfall) {
      timeButton.disabled = true;
      timeButton.textContent = 'timing…';
      host.timeWaterfall(a[0], b[0], costModel);
    }
  });
  const table = h('div', 'fl-waterfall', {});
  const unit = host.unit(costModel);
  const draw = (): void => {
    clear(table);
    const a = fromSelect.value;
    const b = toSelect.value;
    if (host.chosen) {
      host.chosen.from = a;
      host.chosen.to = b;
    }
    table.setAttribute('data-fl-from', a);
    table.setAttribute('data-fl-to', b);
    if (a === b) {
      table.appendChild(h('div', 'fl-hint', {}, 'The same partition: no step.'));
      return;
    }
    const stored = falls.find(w => w.a.join('=') === a && w.b.join('=') === b);
    const back = falls.find(w => w.a.join('=') === b && w.b.join('=') === a);
    const w = stored ?? (back ? reversed(back) : null);
    if (!w) {
      table.appendChild(h('div', 'fl-hint', {}, 'Not all the steps of the other direction are listed: choose the two the other way round.'));
      return;
    }
    const start = host.blocks(w.a[0], costModel);
    if (!start) {
      table.appendChild(h('div', 'fl-hint', {}, `The partition of ${w.a[0]} is not in the report.`));
      return;
    }
    // the timed partitions of these steps, in this direction (timed in the stored one)
    const timed = asArray<IMeasured>(host.measured).filter(m => m.cost_model === costModel);
    const same = timed.find(m => m.a.join('=') === a && m.b.join('=') === b);
    const other = timed.find(m => m.a.join('=') === b && m.b.join('=') === a);
    const m = same ?? (other ? flipMeasured(other) : null);
    const endingAt = new Map<number, IMeasuredChange>();
    for (const c of m ? asArray<IMeasuredChange>(m.changes) : []) {
      endingAt.set(Number(c.to), c);
    }
    table.classList.toggle('fl-measured', !!m);
    // a fifth column only when measured (an empty text node is no grid item)
    const measuredCell = (k: number): HTMLElement | string => {
      const c = endingAt.get(k);
      if (!m) {
        return '';
      }
      if (!c) {
        return h('span', 'fl-waterfall-measured', {}, '·');
      }
      const span = Number(c.to) - Number(c.from);
      return h('span', 'fl-waterfall-measured', { 'data-fl-seconds': String(c.seconds ?? ''), 'data-fl-ratio': String(c.ratio ?? '') },
        changeText(c) + (span > 1 ? ` (steps ${Number(c.from) + 1}–${c.to})` : ''));
    };
    const groups = new Groups(start);
    const steps = asArray<IStep>(w.steps);
    const changes = steps.map((s, k) => {
      const before = k === 0 ? w.cost_before : steps[k - 1].cost;
      return typeof before === 'number' && typeof s.cost === 'number' ? s.cost - before : 0;
    });
    const biggest = Math.max(1e-12, ...changes.map(Math.abs));
    const rows = steps.map((s, k) => {
      const { into, moved } = groups.apply(s);
      const c = changes[k];
      const bar = h('span', `fl-bar ${c < 0 ? 'fl-saves' : c > 0 ? 'fl-costs' : 'fl-zero'}`, {});
      bar.style.width = `${(100 * Math.abs(c) / biggest).toFixed(1)}%`;
      return h('div', 'fl-waterfall-step', { 'data-fl-change': String(c), 'data-fl-kind': s.kind },
        h('span', 'fl-waterfall-what', {}, describeStep(s, into, moved)),
        h('span', 'fl-waterfall-change', {}, signed(c)),
        h('span', 'fl-waterfall-bar', {}, bar),
        h('span', 'fl-waterfall-cost', {}, fmtCost(s.cost)), measuredCell(k + 1));
    });
    const total = typeof w.cost_after === 'number' && typeof w.cost_before === 'number' ? w.cost_after - w.cost_before : 0;
    const listedSum = changes.reduce((x, y) => x + y, 0);
    table.setAttribute('data-fl-total-change', String(total));
    table.append(
      h('div', 'fl-waterfall-step fl-waterfall-head', {},
        h('span', 'fl-waterfall-what', {}, `from ${w.a.join(' = ')}`), h('span', 'fl-waterfall-change', {}, 'change'),
        h('span', 'fl-waterfall-bar', {}, ''), h('span', 'fl-waterfall-cost', {}, fmtCost(w.cost_before)),
        m ? h('span', 'fl-waterfall-measured', {}, `measured (${fmtSeconds(asArray<IMeasuredPoint>(m.points)[0]?.median_seconds)})`) : ''),
      ...rows,
      h('div', 'fl-waterfall-sum', {},
        w.total > steps.length
          ? `First ${steps.length} of ${fmtCost(w.total)} steps listed (their sum ${signed(listedSum)}); all of them: `
          : `${steps.length} steps, their sum: `,
        h('b', '', {}, `${signed(total)}${unit}`),
        ` = ${fmtCost(w.cost_after)} (${w.b.join(' = ')}) − ${fmtCost(w.cost_before)} (${w.a.join(' = ')})`));
    if (m) {
      const pts = asArray<IMeasuredPoint>(m.points);
      const first = num(pts[0]?.median_seconds);
      const last = num(pts[pts.length - 1]?.median_seconds);
      const total = num(m.total_seconds);
      table.setAttribute('data-fl-measured-total', String(total ?? ''));
      table.appendChild(h('div', 'fl-waterfall-sum fl-waterfall-measured-sum', {},
        `Measured, the whole cell each time (${pts.length} of ${steps.length + 1} partitions timed, ` +
        `${m.rounds ?? '?'} interleaved rounds after a warm-up; medians): `,
        h('b', '', {}, total === null ? 'not timed' : signedTime(total)),
        first !== null && last !== null ? ` = ${fmtSeconds(last)} − ${fmtSeconds(first)}` : '',
        num(m.numpy_median_seconds) !== null ? `; NumPy eager ${fmtSeconds(m.numpy_median_seconds)}` : '',
        '. A change is the difference of two medians; ×r [low–high] is their time ratio (above 1: faster) ' +
        'and its 95 % interval over the paired rounds.' + (m.other_batches ? ` Timed with ${m.other_batches}.` : '')));
    }
  };
  fromSelect.addEventListener('change', draw);
  toSelect.addEventListener('change', draw);
  draw();
  return h('div', 'fl-waterfall-panel', {},
    h('div', 'fl-replay-title', {}, 'Fusion waterfall: which steps make the difference in cost',
      h('span', 'fl-hint', {}, ' · split down to the pieces both agree on, then merge up; every step legal')),
    h('div', 'fl-controls', {}, h('label', '', {}, 'from ', fromSelect), h('label', '', {}, 'to ', toSelect),
      host.timeWaterfall ? timeButton : ''),
    table);
}

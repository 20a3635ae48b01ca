/**
 * The parts of a fusionlab explorer report (fusionlab/data/explorer.schema.json) that the
 * renderer reads. Everything is treated as untrusted data: text is only ever written
 * with textContent or as SVG text nodes.
 */

export const MIME_TYPE = 'application/vnd.fusionlab.explorer+json';

export interface IInstruction {
  n: number;
  opcode: string;
  family?: string;
  text: string;
  outputs: string[];
  inputs: string[];
  domain?: number[] | null;
  system?: boolean;
}

export interface IPartition {
  algorithm: string;
  cost_model: string;
  blocks: number[][];
  cost: number;
  cost_elements?: number | null;
  legal: boolean;
  proven_optimal: boolean;
  seconds: number;
  unit: string;
  kernels: number;
  contracted: string[][];
  notes: string[];
  cache_hit: boolean;
  /** version 1 only: index into `dots` */
  dot?: number | null;
  problems?: string[];
  /** version 2: "done", "pending", "budget", "interrupted" or "error" */
  status?: string;
  /** version 2: the proven lower bound when not proven optimal */
  bound?: number | null;
  /** version 2: weight edges (Def. 15) between blocks (1-based) with their saving */
  weights?: IWeight[];
  /** version 2: how many weight edges there are (`weights` keeps the heaviest) */
  weights_total?: number;
}

export interface IWeight {
  a: number;
  b: number;
  saving: number;
}

export interface IDependency {
  source: number;
  target: number;
  kind: string;
  base: string;
}

export interface IForbidden {
  a: number;
  b: number;
  reason: string;
  explanation: string;
  detail: string;
}

export interface IStatus {
  complete: boolean;
  phase: string;
  pending: [string, string][];
  interrupted: boolean;
  budget_seconds: number | null;
  elapsed_seconds: number;
}

export interface IPalette {
  blocks: string[];
  edges: { dependency?: string; forbidden?: string; weight?: string; contracted?: string };
}

export interface ITraceNode {
  id: number;
  parent: number | null;
  depth: number;
  cut: number[];
  kept: number[];
  cost: number;
  legal: boolean;
  outcome: string;
  violation: string;
}

export interface ITraceEdge {
  a: number[];
  b: number[];
  saving: number;
}

export interface ITrace {
  start_blocks: number[][];
  edges: ITraceEdge[];
  nodes: ITraceNode[];
  seed_costs: { [name: string]: number };
  explored: number;
  recorded: number;
  stopped: string;
  cost_model: string;
  truncated: boolean;
}

export interface ICode {
  block: number;
  instructions: number[];
  source: string | null;
  runs: string;
  reason: string;
  contracted: string[];
}

export interface ITimingRecord {
  cost_model: string;
  algorithm: string;
  blocks?: number;
  kernels?: number;
  cost?: number | null;
  compile_seconds?: number;
  median_seconds: number;
  min_seconds: number;
  speedup: number | null;
  max_abs_error?: number | null;
  fallbacks?: string[];
  q1_seconds?: number;
  q3_seconds?: number;
  spread?: number;
  samples?: number;
  threads?: number;
  busy?: boolean;
  warnings?: string[];
  /** what the time cost model predicted for this run (seconds); absent for NumPy's row */
  predicted_seconds?: number | null;
  /** why the row was not timed ("" when it was) */
  not_timed?: string;
  /** the earlier row whose plan has the same kernels ("" when none): timed once */
  same_kernels_as?: string;
  /** the speed-up's 95% interval over the paired rounds */
  speedup_low?: number | null;
  speedup_high?: number | null;
  /** the rows (or "numpy") whose intervals overlap this one's */
  not_different?: string[];
  /** why the two sides did not do the same work ("" when they did) */
  not_comparable?: string;
  /** where a row slower than NumPy spent its time */
  why_slower?: { reason?: string; seconds?: number; detail?: string }[];
}

/** How the comparison timed its rows (`timings.protocol`, `Comparison.protocol`). */
export interface ITimingProtocol {
  rounds?: number;
  warmup_rounds?: number;
  draws_note?: string;
  /** how the memory allocator was held while timing (fusionlab/runtime/allocator.py) */
  allocator?: string;
  interval?: string;
  not_comparable?: string;
  fewer?: string;
}

/** The report's `timings` section. */
export interface ITimings {
  repeat: number;
  records: ITimingRecord[];
  threads?: number | null;
  busy?: boolean;
  warnings?: string[];
  protocol?: ITimingProtocol | null;
}


/** One block of a profile (docs/explorer-protocol.md, `profile.kernels`). */
export interface IProfileKernel {
  batch: number;
  block: number;
  instructions: number[];
  runs: string;
  parallel: boolean;
  measured_seconds: number;
  predicted_seconds: number | null;
  bytes: number;
  flops: number;
  bound: string | null;
  label: string;
}

/** The report's `profile` section: the selected partition's blocks timed beside the time model. */
export interface IProfile {
  algorithm: string;
  cost_model: string;
  repeat: number;
  run_seconds: number;
  numpy_seconds: number | null;
  between_seconds: number;
  kernels: IProfileKernel[];
  ceilings: { memory_bytes_per_second: number; cache_bytes_per_second: number; flops_per_second: number; label: string };
  why_slower: { reason: string; seconds: number; detail: string }[];
  model_error: {
    median_abs_log_ratio: number | null;
    worst: { batch: number; block: number; predicted_seconds: number; measured_seconds: number; reason: string }[];
  };
}

/** One entry of the batch menu: a batch and how many other batches are like it. */
export interface IBatchMenuEntry {
  index: number;
  alike: number;
  label: string;
}

/** A notice: its subject (`kind`) and how much it matters (`level`: fusionlab/explore/notices.py). */
export interface INotice {
  kind: string;
  /** absent in reports saved before levels: shown as a warning, as every notice was then */
  level?: 'error' | 'warning' | 'info';
  message: string;
  line?: number | null;
  /** the expert's version of the message (the pass's record, with its views): behind a toggle */
  detail?: string;
}

export interface IReport {
  schema: string;
  version: number;
  name: string;
  source: string;
  batches: { index: number; instructions: number; signature: string; same_as: number | null }[];
  batch: number;
  /** the batch menu (fusionlab.explore.report.batch_menu); absent from reports saved before it */
  batch_menu?: IBatchMenuEntry[];
  notices: INotice[];
  program: { text: string; instructions: IInstruction[] };
  graph: {
    dependencies: IDependency[];
    forbidden: IForbidden[];
    edges_total?: number;
  };
  algorithms: string[];
  cost_models: string[];
  partitions: IPartition[];
  /** version 1 only */
  dots?: string[];
  /** version 2 */
  id?: string;
  status?: IStatus;
  palette?: IPalette;
  selected: { algorithm: string; cost_model: string };
  trace: ITrace | null;
  code: ICode[];
  timings: ITimings | null;
  /** additive: the selected partition's per-block profile (profile.ts) */
  profile?: IProfile | null;
  /** additive: one entry per CONTRACT instruction (contraction.ts) */
  contractions?: unknown;
  /** additive: greedy's replay and the waterfalls between partitions (steps.ts) */
  steps?: unknown;
  /** additive: the other batches viewed that fuse something, each its batch's keys (batches.ts) */
  saved_batches?: Partial<IReport>[];
  /** additive: batches viewed that fuse something but did not fit the saved report's budget */
  saved_batches_left_out?: number;
  /** additive: the waterfalls timed (steps.ts IMeasured) */
  measured_waterfalls?: unknown[];
}

/** Arrays of the right type, whatever the data holds (a saved notebook may be anything). */
export function asArray<T>(value: unknown): T[] {
  return Array.isArray(value) ? (value as T[]) : [];
}

/** A string for display, whatever the data holds. */
export function str(value: unknown): string {
  if (value === null || value === undefined) {
    return '';
  }
  return typeof value === 'string' ? value : String(value);
}

/** The levels of notices, most first (fusionlab/explore/notices.py's `Level`). */
export const NOTICE_LEVELS = ['error', 'warning', 'info'] as const;
export type NoticeLevel = typeof NOTICE_LEVELS[number];

/** A notice's level; one saved before levels existed, or holding anything else, is a warning. */
export function noticeLevel(n: INotice): NoticeLevel {
  const level = (n && typeof n === 'object' ? n.level : undefined) as unknown;
  return (NOTICE_LEVELS as readonly unknown[]).includes(level) ? (level as NoticeLevel) : 'warning';
}

/** Notices errors first, then warnings, then information; in order within a level. */
export function sortedNotices(notices: INotice[]): INotice[] {
  const rank = (n: INotice): number => NOTICE_LEVELS.indexOf(noticeLevel(n));
  return notices.map((n, i) => ({ n, i })).sort((a, b) => rank(a.n) - rank(b.n) || a.i - b.i).map(x => x.n);
}

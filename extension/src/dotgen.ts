/**
 * DOT text for the WSP graph, built from the report's data (version 2 carries no drawing):
 * instructions, dependencies, fuse-preventing edges with their reasons, the partition's
 * blocks and the weight edges between them. Two levels: every instruction (blocks as
 * clusters), or one node per block with edges merged and counted, some blocks expanded to
 * their instructions. A focus keeps one block and its neighbours only.
 *
 * Every string from the report goes through `quote`, so a label can never end its DOT
 * string; the SVG Graphviz writes is rebuilt from an allow-list afterwards anyway.
 */

import { IDependency, IForbidden, IInstruction, IWeight } from './types';

export type Level = 'instructions' | 'blocks';

export interface IGraphData {
  instructions: IInstruction[];
  dependencies: IDependency[];
  forbidden: IForbidden[];
  /** the partition's blocks, 1-based instruction numbers */
  blocks: number[][];
  weights: IWeight[];
}

export interface IDotOptions {
  level: Level;
  /** blocks drawn with their instructions at block level */
  expanded: ReadonlySet<number>;
  /** only this block (expanded) and its neighbours */
  focus: number | null;
  /** at most this many weight edges, heaviest first */
  maxWeights?: number;
  /** the program's flow: top to bottom (the paper's figures), or left to right (a wide graph:
   * its ranks become columns, which a view can end between) */
  flow?: 'TB' | 'LR';
}

/** Instruction-level drawing above either limit is dense: block level is chosen by default. */
export const AUTO_MAX_INSTRUCTIONS = 80;
export const AUTO_MAX_EDGES = 400;
/** Above this many fuse-preventing edges drawn, their reasons are in tooltips only. */
export const LABELLED_FORBIDDEN = 12;
/** Above this many merged dependency edges, implied ones (transitive) are left out. */
export const REDUCE_ABOVE = 150;
/** Above this many merged fuse-preventing edges, they are left out (a focus shows a block's own). */
export const MAX_FORBIDDEN = 200;
/** Labels are cut to this many characters (the listing has the whole text). */
const MAX_LABEL = 60;

/** A DOT string literal holding `text` (no escape sequence or quote can end it early). */
export function quote(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  return `"${clean}"`;
}

function cut(text: string, n = MAX_LABEL): string {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

/** The level drawn when the user has not chosen one. */
export function autoLevel(data: IGraphData): Level {
  const edges = data.dependencies.length + data.forbidden.length;
  return data.instructions.length > AUTO_MAX_INSTRUCTIONS || edges > AUTO_MAX_EDGES ? 'blocks' : 'instructions';
}

/** block number (1-based) of every instruction */
export function blockIndex(blocks: number[][]): Map<number, number> {
  const of = new Map<number, number>();
  blocks.forEach((b, k) => b.forEach(n => of.set(n, k + 1)));
  return of;
}

/** The blocks joined to `block` by any edge (dependency, fuse-preventing or weight), and itself. */
export function neighbourhood(data: IGraphData, block: number): Set<number> {
  const of = blockIndex(data.blocks);
  const out = new Set<number>([block]);
  const touch = (x: number | undefined, y: number | undefined) => {
    if (x === block && y !== undefined) {
      out.add(y);
    }
    if (y === block && x !== undefined) {
      out.add(x);
    }
  };
  for (const d of data.dependencies) {
    touch(of.get(d.source), of.get(d.target));
  }
  for (const f of data.forbidden) {
    touch(of.get(f.a), of.get(f.b));
  }
  for (const w of data.weights) {
    touch(w.a, w.b);
  }
  return out;
}

/** The number of edges `dot` will draw, before layout (for the dense-graph guard). */
export function countEdges(dot: string): number {
  return (dot.match(/ -> /g) || []).length;
}

interface IMerged {
  count: number;
  label: Set<string>;
}

/** What was drawn, and what was left out to keep the drawing readable. */
export interface IDot {
  dot: string;
  /** dependency edges left out because another path implies them */
  implied: number;
  /** fuse-preventing edges left out (too many to draw) */
  forbiddenHidden: number;
}

/**
 * The edges of `edges` (keys "u -> v") that no other path implies (the transitive
 * reduction), or all of them when the graph has a cycle (an illegal partition's blocks).
 */
export function reduceEdges(keys: string[]): Set<string> {
  const ids = new Map<string, number>();
  const pairs = keys.map(k => {
    const [u, v] = k.split(' -> ');
    for (const x of [u, v]) {
      if (!ids.has(x)) {
        ids.set(x, ids.size);
      }
    }
    return [ids.get(u)!, ids.get(v)!];
  });
  const n = ids.size;
  const succ: number[][] = Array.from({ length: n }, () => []);
  const indeg = new Array<number>(n).fill(0);
  for (const [u, v] of pairs) {
    succ[u].push(v);
    indeg[v]++;
  }
  const order: number[] = [];
  const queue = indeg.map((d, k) => (d === 0 ? k : -1)).filter(k => k >= 0);
  while (queue.length) {
    const u = queue.pop()!;
    order.push(u);
    for (const v of succ[u]) {
      if (--indeg[v] === 0) {
        queue.push(v);
      }
    }
  }
  if (order.length < n) {
    return new Set(keys);
  }
  // reach[u]: every node reachable from u by a path of one edge or more (bitsets)
  const words = Math.ceil(n / 32);
  const reach = Array.from({ length: n }, () => new Uint32Array(words));
  const has = (set: Uint32Array, k: number) => (set[k >>> 5] & (1 << (k & 31))) !== 0;
  const kept = new Set<string>();
  for (let k = order.length - 1; k >= 0; k--) {
    const u = order[k];
    const r = reach[u];
    for (const v of succ[u]) {
      r[v >>> 5] |= 1 << (v & 31);
      const rv = reach[v];
      for (let w = 0; w < words; w++) {
        r[w] |= rv[w];
      }
    }
  }
  pairs.forEach(([u, v], k) => {
    // implied when another successor of u reaches v
    if (!succ[u].some(w => w !== v && has(reach[w], v))) {
      kept.add(keys[k]);
    }
  });
  return kept;
}

/** The DOT source for `data` drawn as `options` say. */
export function buildDot(data: IGraphData, options: IDotOptions): IDot {
  const of = blockIndex(data.blocks);
  const byNumber = new Map<number, IInstruction>();
  for (const ins of data.instructions) {
    byNumber.set(Number(ins.n), ins);
  }
  const shown = options.focus !== null ? neighbourhood(data, options.focus) : null;
  const visible = (b: number | undefined) => b !== undefined && (shown === null || shown.has(b));
  const expanded = (b: number) => options.focus !== null
    ? b === options.focus
    : options.level === 'instructions' || options.expanded.has(b);
  // the node an instruction is drawn in: itself, or its block's node
  const unit = (n: number): string | null => {
    const b = of.get(n);
    if (!visible(b)) {
      return null;
    }
    return expanded(b!) ? `n${n}` : `b${b}`;
  };

  const lines: string[] = [
    'digraph wsp {',
    `  graph [compound=true fontname="Helvetica" rankdir=${options.flow ?? 'TB'} nodesep=0.25 ranksep=0.35]`,
    '  node [shape=box style="rounded,filled" fontname="Courier" fontsize=11 fillcolor="white" height=0.3]',
    '  edge [arrowsize=0.6]'
  ];
  data.blocks.forEach((members, k) => {
    const b = k + 1;
    if (!visible(b)) {
      return;
    }
    if (expanded(b)) {
      lines.push(`  subgraph cluster_${b} {`);
      lines.push(`    label=${quote(`block ${b}`)} style="filled,rounded" fillcolor="#eeeeee" color="#94a3b8" class="fl-cluster"`);
      for (const n of members) {
        const ins = byNumber.get(n);
        const text = ins ? `${n}: ${cut(String(ins.text ?? ''))}` : String(n);
        lines.push(`    n${n} [label=${quote(text)} class="fl-ins-node"]`);
      }
      lines.push('  }');
    } else {
      const first = byNumber.get(members[0]);
      const head = `block ${b} · ${members.length} instruction${members.length === 1 ? '' : 's'}`;
      const sample = first ? cut(String(first.text ?? ''), 32) + (members.length > 1 ? ' …' : '') : '';
      // two lines: each part quoted on its own, joined by DOT's line break escape
      const label = `"${quote(head).slice(1, -1)}\\n${quote(sample).slice(1, -1)}"`;
      lines.push(`  b${b} [label=${label} style="filled,rounded" fillcolor="#eeeeee" class="fl-block-node"]`);
    }
  });

  // dependencies: merged between units, with their count
  const deps = new Map<string, IMerged>();
  for (const d of data.dependencies) {
    const u = unit(Number(d.source));
    const v = unit(Number(d.target));
    if (u === null || v === null || u === v) {
      continue;
    }
    const k = `${u} -> ${v}`;
    const m = deps.get(k) || { count: 0, label: new Set<string>() };
    m.count += 1;
    m.label.add(String(d.base ?? ''));
    deps.set(k, m);
  }
  let depKeys = [...deps.keys()];
  let implied = 0;
  if (depKeys.length > REDUCE_ABOVE) {
    const kept = reduceEdges(depKeys);
    implied = depKeys.length - kept.size;
    depKeys = depKeys.filter(k => kept.has(k));
  }
  for (const k of depKeys) {
    const m = deps.get(k)!;
    const attrs = [`class="fl-dep"`, `tooltip=${quote(`${m.count} dependenc${m.count === 1 ? 'y' : 'ies'} on ${[...m.label].join(', ')}`)}`];
    if (m.count > 1) {
      attrs.push(`label=${quote(`×${m.count}`)}`);
    }
    lines.push(`  ${k} [${attrs.join(' ')}]`);
  }
  // fuse-preventing edges: merged, labelled with their reasons. Their labels (and the weight
  // edges') are xlabels, placed after the layout: a label of a flat edge is otherwise a node of
  // its own, and Fig. 3 drew 1,662 pt wide instead of 1,132
  const forb = new Map<string, IMerged>();
  for (const f of data.forbidden) {
    let u = unit(Number(f.a));
    let v = unit(Number(f.b));
    if (u === null || v === null || u === v) {
      continue;
    }
    if (u > v) {
      [u, v] = [v, u];
    }
    const k = `${u} -> ${v}`;
    const m = forb.get(k) || { count: 0, label: new Set<string>() };
    m.count += 1;
    m.label.add(String(f.reason ?? ''));
    forb.set(k, m);
  }
  const forbiddenHidden = forb.size > MAX_FORBIDDEN ? [...forb.values()].reduce((s, m) => s + m.count, 0) : 0;
  // past a dozen, the reasons go to the tooltips: a drawing full of "overlap" is read by no one
  const labelled = forb.size <= LABELLED_FORBIDDEN;
  for (const [k, m] of forbiddenHidden ? [] : forb) {
    const reasons = [...m.label].join(', ');
    const label = m.count > 1 ? `${reasons} ×${m.count}` : reasons;
    lines.push(`  ${k} [class="fl-forbidden" style=dashed color="#dc2626" fontcolor="#dc2626" dir=none ` +
      `constraint=false tooltip=${quote(`fuse-preventing: ${cut(label, 80)}`)}` +
      (labelled ? ` xlabel=${quote(cut(label, 40))}]` : ']'));
  }
  // weight edges between blocks, heaviest first
  const weights = data.weights
    .filter(w => visible(w.a) && visible(w.b) && w.a !== w.b && data.blocks[w.a - 1] && data.blocks[w.b - 1])
    .sort((x, y) => Number(y.saving) - Number(x.saving))
    .slice(0, options.maxWeights ?? 30);
  for (const w of weights) {
    const end = (b: number) => expanded(b) ? `n${data.blocks[b - 1][0]}` : `b${b}`;
    const attrs = [`class="fl-weight"`, 'style=dotted', 'color="#16a34a"', 'fontcolor="#16a34a"', 'dir=none',
      'constraint=false', `xlabel=${quote(fmtSaving(Number(w.saving)))}`,
      `tooltip=${quote(`weight edge: merging blocks ${w.a} and ${w.b} saves ${fmtSaving(Number(w.saving))}`)}`];
    if (expanded(w.a)) {
      attrs.push(`ltail=cluster_${w.a}`);
    }
    if (expanded(w.b)) {
      attrs.push(`lhead=cluster_${w.b}`);
    }
    lines.push(`  ${end(w.a)} -> ${end(w.b)} [${attrs.join(' ')}]`);
  }
  lines.push('}');
  return { dot: lines.join('\n'), implied, forbiddenHidden };
}

function fmtSaving(x: number): string {
  if (!isFinite(x)) {
    return String(x);
  }
  return Number.isInteger(x) ? String(x) : x.toPrecision(4).replace(/\.?0+$/, '');
}

/**
 * The profile section of a report (docs/explorer-protocol.md, `profile`): the selected
 * partition's blocks, each timed beside the `time` model's prediction, and a roofline, as
 * the static fallback shows them (fusionlab/explore/viz/roofline.py).
 *
 * The roofline: log-log axes of arithmetic intensity (flops per byte) and flops per second;
 * the memory roof up to where it meets the compute roof, the cache roof dashed; each block
 * with floating-point work a filled marker where it was measured and a hollow one where the
 * model put it, joined by a line, labelled `batch.block`. Blocks without flops or bytes are
 * named under the chart. Drawn with DOM calls from the report's numbers only: every number
 * is read as a number (anything else is ignored), every string goes in as text.
 */

import { fmt, fmtSeconds, h, s } from './dom';
import { asArray, IProfile, IProfileKernel, str } from './types';

/** A block's colour by what runs it (the fallback's RUNS_COLOUR). */
export const RUNS_COLOUR: Record<string, string> = { kernel: '#2563eb', numpy: '#6b7280', opaque: '#d97706' };

function num(x: unknown): number | null {
  return typeof x === 'number' && isFinite(x) ? x : null;
}

/** A rate with an SI prefix: `33 GB/s`, `50 GFLOP/s`; "—" when unknown. */
export function rate(x: number | null, unit: string): string {
  if (x === null) {
    return '—';
  }
  for (const [scale, prefix] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']] as [number, string][]) {
    if (x >= scale) {
      return `${Number((x / scale).toPrecision(3))} ${prefix}${unit}`;
    }
  }
  return `${Number(x.toPrecision(3))} ${unit}`;
}

/** `batch.block`, as every view numbers a profile's blocks. */
export function blockNumber(k: { batch?: unknown; block?: unknown }): string {
  const b = num(k.batch);
  const n = num(k.block);
  return `${b === null ? '?' : Math.trunc(b)}.${n === null ? '?' : Math.trunc(n)}`;
}

export interface IRooflinePoint {
  kernel: IProfileKernel;
  intensity: number;
  measured: number;
  predicted: number | null;
}

/** The blocks on the chart and those without a point (no flops, no bytes or no time). */
export function rooflinePoints(p: IProfile): { points: IRooflinePoint[]; off: IProfileKernel[] } {
  const points: IRooflinePoint[] = [];
  const off: IProfileKernel[] = [];
  for (const k of asArray<IProfileKernel>(p.kernels)) {
    if (!k || typeof k !== 'object') {
      continue;
    }
    const flops = num(k.flops);
    const bytes = num(k.bytes);
    const measured = num(k.measured_seconds);
    if (!flops || !bytes || !measured || flops <= 0 || bytes <= 0 || measured <= 0) {
      off.push(k);
      continue;
    }
    const predicted = num(k.predicted_seconds);
    points.push({ kernel: k, intensity: flops / bytes, measured: flops / measured,
      predicted: predicted && predicted > 0 ? flops / predicted : null });
  }
  return { points, off };
}

function decades(lo: number, hi: number): [number, number] {
  let a = Math.floor(Math.log10(lo));
  let b = Math.ceil(Math.log10(hi));
  if (b - a < 2) {
    a -= 1;
    b += 1;
  }
  return [10 ** a, 10 ** b];
}

/** The roofline of `p` as an SVG element (this machine's roofs, each block measured and predicted). */
export function rooflineSvg(p: IProfile, width = 640, height = 380): SVGElement {
  const c = p.ceilings && typeof p.ceilings === 'object' ? p.ceilings : ({} as IProfile['ceilings']);
  const memory = num(c.memory_bytes_per_second) || 1e10;
  const cache = num(c.cache_bytes_per_second);
  const flops = num(c.flops_per_second) || memory;
  const { points } = rooflinePoints(p);
  const ridge = flops / memory;
  const xs = [...points.map(q => q.intensity), ridge];
  const ys = [...points.flatMap(q => [q.measured, q.predicted]).filter((y): y is number => !!y), flops];
  const [x0, x1] = decades(Math.min(...xs) / 2, Math.max(...xs) * 2);
  const [y0, y1] = decades(Math.min(...ys) / 2, Math.max(...ys) * 2);
  const left = 64;
  const right = 16;
  const top = 16;
  const bottom = 62;
  const pw = width - left - right;
  const ph = height - top - bottom;
  const lg = Math.log10;
  const X = (x: number) => left + pw * (lg(Math.min(Math.max(x, x0), x1)) - lg(x0)) / (lg(x1) - lg(x0));
  const Y = (y: number) => top + ph * (1 - (lg(Math.min(Math.max(y, y0), y1)) - lg(y0)) / (lg(y1) - lg(y0)));
  const r1 = (v: number) => v.toFixed(1);
  const power = (e: number) => [document.createTextNode('10'), s('tspan', { dy: -4, 'font-size': 8 }, String(e))];

  const svg = s('svg', { class: 'fl-roofline', width, height, viewBox: `0 0 ${width} ${height}`,
    'font-family': 'sans-serif', 'font-size': 10, role: 'img', 'aria-label': 'roofline of the profiled blocks' });
  svg.appendChild(s('rect', { x: left, y: top, width: pw, height: ph, fill: '#ffffff', stroke: '#9ca3af' }));
  for (let e = Math.round(lg(x0)); e <= Math.round(lg(x1)); e++) {
    const x = X(10 ** e);
    svg.appendChild(s('line', { x1: r1(x), y1: top, x2: r1(x), y2: top + ph, stroke: '#e5e7eb' }));
    svg.appendChild(s('text', { x: r1(x), y: top + ph + 14, 'text-anchor': 'middle' }, ...power(e)));
  }
  for (let e = Math.round(lg(y0)); e <= Math.round(lg(y1)); e++) {
    const y = Y(10 ** e);
    svg.appendChild(s('line', { x1: left, y1: r1(y), x2: left + pw, y2: r1(y), stroke: '#e5e7eb' }));
    svg.appendChild(s('text', { x: left - 4, y: r1(y + 3), 'text-anchor': 'end' }, ...power(e)));
  }
  svg.appendChild(s('text', { x: r1(left + pw / 2), y: height - 30, 'text-anchor': 'middle' },
    'arithmetic intensity (flops per byte moved)'));
  svg.appendChild(s('text', { x: 14, y: r1(top + ph / 2), 'text-anchor': 'middle',
    transform: `rotate(-90 14 ${r1(top + ph / 2)})` }, 'flops per second'));

  const roof = (bandwidth: number, dash: string | null, colour: string, name: string) => {
    const start = Math.max(x0, y0 / bandwidth);
    const end = Math.min(x1, flops / bandwidth);
    if (start >= end) {
      return;
    }
    const [xa, ya, xb, yb] = [X(start), Y(bandwidth * start), X(end), Y(bandwidth * end)];
    svg.appendChild(s('line', { class: 'fl-roof', x1: r1(xa), y1: r1(ya), x2: r1(xb), y2: r1(yb), stroke: colour,
      'stroke-width': 2, 'stroke-dasharray': dash }, s('title', {}, name)));
    const angle = Math.atan2(yb - ya, xb - xa) * 180 / Math.PI;
    svg.appendChild(s('text', { x: r1(xa + 6), y: r1(ya - 5), fill: colour,
      transform: `rotate(${angle.toFixed(1)} ${r1(xa + 6)} ${r1(ya - 5)})` }, name));
  };
  if (cache !== null && cache > memory) {
    roof(cache, '5,3', '#0d9488', `cache ${rate(cache, 'B/s')}`);
  }
  roof(memory, null, '#b91c1c', `memory ${rate(memory, 'B/s')}`);
  const compute = `compute ${rate(flops, 'FLOP/s')}`;
  svg.appendChild(s('line', { class: 'fl-roof', x1: r1(X(Math.max(ridge, x0))), y1: r1(Y(flops)), x2: r1(X(x1)),
    y2: r1(Y(flops)), stroke: '#b91c1c', 'stroke-width': 2 }, s('title', {}, compute)));
  svg.appendChild(s('text', { x: r1(X(x1) - 4), y: r1(Y(flops) - 5), 'text-anchor': 'end', fill: '#b91c1c' }, compute));

  for (const q of points) {
    const k = q.kernel;
    const runs = typeof k.runs === 'string' && k.runs in RUNS_COLOUR ? k.runs : 'kernel';
    const colour = RUNS_COLOUR[runs];
    const x = X(q.intensity);
    const ym = Y(q.measured);
    const number = blockNumber(k);
    let title = `block ${number} (${str(k.label)}), ${runs}: measured ${fmtSeconds(k.measured_seconds)} ` +
      `(${rate(q.measured, 'FLOP/s')}), predicted ${fmtSeconds(k.predicted_seconds) || '—'}; ` +
      `${Number(q.intensity.toPrecision(3))} flops per byte`;
    if (typeof k.bound === 'string') {
      title += `; the model: ${k.bound} bound`;
    }
    const g = s('g', { class: 'fl-point', 'data-block': number, 'data-runs': runs }, s('title', {}, title));
    if (q.predicted !== null) {
      const yp = Y(q.predicted);
      g.appendChild(s('line', { x1: r1(x), y1: r1(ym), x2: r1(x), y2: r1(yp), stroke: colour, 'stroke-opacity': 0.5 }));
      g.appendChild(s('circle', { class: 'fl-predicted', cx: r1(x), cy: r1(yp), r: 4.5, fill: '#ffffff', stroke: colour,
        'stroke-width': 1.5 }));
    }
    g.appendChild(s('circle', { class: 'fl-measured', cx: r1(x), cy: r1(ym), r: 4.5, fill: colour }));
    g.appendChild(s('text', { x: r1(x + 6), y: r1(ym + 3) }, number));
    svg.appendChild(g);
  }
  const ly = height - 12;
  svg.appendChild(s('circle', { cx: left + 6, cy: ly - 3, r: 4.5, fill: RUNS_COLOUR.kernel }));
  svg.appendChild(s('text', { x: left + 14, y: ly }, 'measured'));
  svg.appendChild(s('circle', { cx: left + 86, cy: ly - 3, r: 4.5, fill: '#ffffff', stroke: RUNS_COLOUR.kernel,
    'stroke-width': 1.5 }));
  svg.appendChild(s('text', { x: left + 94, y: ly }, 'predicted (time model)'));
  svg.appendChild(s('text', { x: left + 220, y: ly, fill: RUNS_COLOUR.kernel }, 'kernel'));
  svg.appendChild(s('text', { x: left + 262, y: ly, fill: RUNS_COLOUR.numpy }, 'NumPy'));
  svg.appendChild(s('text', { x: left + 304, y: ly, fill: RUNS_COLOUR.opaque }, 'opaque call'));
  return svg;
}

function profileTable(p: IProfile): HTMLTableElement {
  const cols = ['block', 'runs', 'measured', 'predicted (time model)', 'predicted / measured', 'bytes', 'flops',
    'bound', 'instructions'];
  const body = h('tbody');
  for (const k of asArray<IProfileKernel>(p.kernels)) {
    if (!k || typeof k !== 'object') {
      continue;
    }
    const measured = num(k.measured_seconds);
    const predicted = num(k.predicted_seconds);
    const bytes = num(k.bytes);
    const flops = num(k.flops);
    body.appendChild(h('tr', '', { 'data-block': blockNumber(k), 'data-runs': str(k.runs) },
      h('td', '', {}, blockNumber(k)),
      h('td', 'fl-left', {}, str(k.runs) + (k.parallel === true ? ' (parallel)' : '')),
      h('td', 'fl-measured', {}, fmtSeconds(measured) || '—'),
      h('td', 'fl-predicted', {}, fmtSeconds(predicted) || '—'),
      h('td', 'fl-ratio', {}, predicted && measured ? (predicted / measured).toFixed(2) : '—'),
      h('td', '', {}, bytes === null ? '—' : Math.trunc(bytes).toLocaleString('en-US')),
      h('td', '', {}, flops === null ? '—' : Math.trunc(flops).toLocaleString('en-US')),
      h('td', 'fl-left', {}, str(k.bound) || '—'),
      h('td', 'fl-left', {}, str(k.label))));
  }
  return h('table', 'fl-profile', {},
    h('thead', '', {}, h('tr', '', {}, ...cols.map(c => h('th', '', {}, c)))), body);
}

/** The profile section: what was profiled, the table, the roofs, the roofline, why slower, the model's misses. */
export function profileSection(p: IProfile): HTMLDivElement {
  const numpy = num(p.numpy_seconds);
  const head = `${str(p.algorithm)} / ${str(p.cost_model)}: each block's median of ${fmt(p.repeat)} block-by-block ` +
    `runs after a warm-up; a whole run takes ${fmtSeconds(p.run_seconds) || '—'}` +
    (numpy !== null ? ` (NumPy eager ${fmtSeconds(numpy)})` : '') +
    `, ${fmtSeconds(p.between_seconds) || '—'} of it outside the blocks (the driver's Python, allocation)`;
  const c = p.ceilings && typeof p.ceilings === 'object' ? p.ceilings : ({} as IProfile['ceilings']);
  const roofs = `roofs: memory ${rate(num(c.memory_bytes_per_second), 'B/s')}, cache ` +
    `${rate(num(c.cache_bytes_per_second), 'B/s')}, compute ${rate(num(c.flops_per_second), 'FLOP/s')} — ${str(c.label)}`;
  const { off } = rooflinePoints(p);
  const out = h('div', 'fl-profile-view', {},
    h('div', 'fl-profile-head', {}, head), profileTable(p), h('div', 'fl-hint', {}, roofs),
    h('div', 'fl-roofline-view', {}, rooflineSvg(p)));
  if (off.length) {
    out.appendChild(h('div', 'fl-hint fl-off-roofline', {},
      'not on the roofline (no floating-point work or no bytes): blocks ' + off.map(blockNumber).join(', ')));
  }
  const why = asArray<IProfile['why_slower'][number]>(p.why_slower).filter(w => w && typeof w === 'object');
  if (why.length) {
    out.appendChild(h('div', 'fl-profile-why', {}, h('b', '', {}, 'Why slower than NumPy'),
      h('ul', '', {}, ...why.map(w =>
        h('li', '', { 'data-reason': str(w.reason) }, `${str(w.reason)}, ${fmtSeconds(w.seconds)}: ${str(w.detail)}`)))));
  }
  const err = p.model_error && typeof p.model_error === 'object' ? p.model_error : null;
  const med = err ? num(err.median_abs_log_ratio) : null;
  if (err && med !== null) {
    out.appendChild(h('div', 'fl-model-error', {},
      `the time model: median |log(predicted / measured)| ${med.toFixed(2)} (a factor of ${Math.exp(med).toFixed(2)}); ` +
      'its largest misses:',
      h('ul', '', {}, ...asArray<IProfile['model_error']['worst'][number]>(err.worst)
        .filter(w => w && typeof w === 'object')
        .map(w => h('li', '', {}, `block ${blockNumber(w)}: predicted ${fmtSeconds(w.predicted_seconds) || '—'}, ` +
          `measured ${fmtSeconds(w.measured_seconds) || '—'} — ${str(w.reason)}`)))));
  }
  return out;
}

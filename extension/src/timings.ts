/**
 * The timings section of a report (docs/explorer-protocol.md, `timings`): every variant's
 * minimum, median, the `time` model's prediction, spread, and speed-up over plain NumPy
 * with its interval, as the static fallback shows them (fusionlab/explore/viz/listing.py,
 * `timing_table_html`). What the table states is what the comparison measured:
 *
 * - a speed-up carries its 95% interval over the paired rounds; `≈` when its interval
 *   overlaps NumPy's or another row's (`not_different`): the two are not told apart;
 * - "not comparable" when the two sides did not do the same work (`not_comparable`);
 * - a row whose plan has the same kernels as an earlier row was timed once
 *   (`same_kernels_as`) and says so;
 * - a row not timed (`not_timed`) shows "—" where it has no figure, and why;
 * - the protocol line: interleaved rounds, warm-ups, where the random draws were timed.
 *
 * Everything comes from a report, a saved notebook's included: text goes in as text only.
 */

import { fmt, fmtSeconds, h } from './dom';
import { asArray, ITimingRecord, ITimings, str } from './types';

function num(x: unknown): number | null {
  return typeof x === 'number' && isFinite(x) ? x : null;
}

/** Seconds, or "—" when the row has no such figure. */
function secondsOrDash(x: unknown): string {
  return num(x) === null ? '—' : fmtSeconds(x);
}

/** The variant's name as every view writes it: "NumPy eager", else "algorithm / cost model". */
export function variantLabel(r: ITimingRecord): string {
  return r.cost_model === 'numpy' ? 'NumPy eager' : `${str(r.algorithm)} / ${str(r.cost_model)}`;
}

/**
 * The rows (or "numpy") `r` is not told apart from, leaving out the rows with its own kernels:
 * those share its timing, so their intervals are its own (as `format_records` does).
 */
export function notApart(r: ITimingRecord, records: ITimingRecord[]): string[] {
  const owner = (x: ITimingRecord) => str(x.same_kernels_as) || variantLabel(x);
  const mine = owner(r);
  return asArray<unknown>(r.not_different).map(str).filter(o =>
    !records.some(x => x.cost_model !== 'numpy' && variantLabel(x) === o && owner(x) === mine));
}

/** The speed-up cell's text: `2.31× (1.90–2.80)`, with ` ≈` when not told apart; "not comparable"; "—". */
export function speedupText(r: ITimingRecord, records: ITimingRecord[] = []): string {
  if (str(r.not_comparable)) {
    return 'not comparable';
  }
  const speed = num(r.speedup);
  if (speed === null || str(r.not_timed)) {
    return '—';
  }
  let text = `${speed.toFixed(2)}×`;
  const low = num(r.speedup_low);
  const high = num(r.speedup_high);
  if (low !== null && high !== null && r.cost_model !== 'numpy') {
    text += ` (${low.toFixed(2)}–${high.toFixed(2)})`;
  }
  if (notApart(r, records).length && r.cost_model !== 'numpy') {
    text += ' ≈';
  }
  return text;
}

/** The sentence under the table: how the rounds ran. */
export function protocolText(t: ITimings): string {
  const p = t.protocol && typeof t.protocol === 'object' ? t.protocol : null;
  let text: string;
  if (p) {
    text = `${fmt(p.rounds ?? '?')} interleaved rounds (order rotated each round) after ${fmt(p.warmup_rounds ?? 0)} ` +
      `warm-up round(s), each variant warmed up first (compilation excluded); ${str(p.draws_note)}; ` +
      (str(p.allocator) ? `${str(p.allocator)}; ` : '') +
      `interval: ${str(p.interval)}; ≈: not different from another row or from NumPy (the intervals overlap)`;
    if (str(p.fewer)) {
      text += `; ${str(p.fewer)}`;
    }
  } else {
    text = `${fmt(t.repeat)} timed runs per variant after a warm-up (compilation excluded)`;
  }
  if (num(t.threads)) {
    text += `; ${fmt(t.threads)} thread(s)`;
  }
  return text;
}

/** Every warning of the section: the table's, each row's, and why a row is slower than NumPy. */
export function timingWarnings(t: ITimings): string[] {
  const out: string[] = [];
  const p = t.protocol && typeof t.protocol === 'object' ? t.protocol : null;
  if (p && str(p.not_comparable)) {
    out.push(str(p.not_comparable));
  }
  out.push(...asArray<unknown>(t.warnings).map(str));
  for (const r of asArray<ITimingRecord>(t.records)) {
    const label = variantLabel(r);
    out.push(...asArray<unknown>(r.warnings).map(w => `${label}: ${str(w)}`));
    if (str(r.not_timed)) {
      out.push(`${label}: not timed: ${str(r.not_timed)}`);
    }
    for (const w of asArray<{ detail?: unknown }>(r.why_slower)) {
      out.push(`${label} is slower than NumPy: ${str(w && w.detail)}`);
    }
  }
  return out;
}

/** The timings section: the table, the protocol line, the warnings. */
export function timingsSection(t: ITimings): HTMLDivElement {
  const records = asArray<ITimingRecord>(t.records);
  const cols: [string, string][] = [
    // the speed-up first after the variant: the figure a class reads, visible in a narrow cell
    ['algorithm', ''], ['cost model', ''], ['speed-up', '× NumPy, 95% interval'], ['median', 'wall time per run'],
    ['min', 'wall time per run'], ['predicted', 'time cost model'], ['spread', '(q3 − q1) / median'],
    ['blocks', 'all batches'], ['kernels', 'Numba, all batches'], ['compile', 'wall time'], ['runs', 'samples'],
    ['threads', ''], ['max error', 'absolute']];
  const table = h('table', 'fl-timings', { 'data-fl-section': 'timings' },
    h('thead', '', {}, h('tr', '', {}, ...cols.map(([c, unit]) =>
      h('th', '', {}, c, unit ? h('div', 'fl-unit', {}, unit) : null)))));
  const body = h('tbody');
  let busy = !!t.busy;
  for (const r of records) {
    const numpy = r.cost_model === 'numpy';
    const untimed = !!str(r.not_timed);
    const spread = num(r.spread);
    busy = busy || !!r.busy;
    const same = str(r.same_kernels_as);
    const different = notApart(r, records);
    const speedTitle = str(r.not_comparable) ? str(r.not_comparable)
      : different.length && !numpy ? `not different from ${different.join(', ')} (the intervals overlap)` : '';
    const dash = (x: string) => (untimed ? '—' : x);
    body.appendChild(h('tr', r.busy ? 'fl-busy' : '', {
      'data-fl-busy': String(!!r.busy), 'data-fl-variant': variantLabel(r),
      'data-fl-not-timed': untimed, 'data-fl-same-kernels-as': same || null
    },
    h('td', 'fl-left', {}, numpy ? 'NumPy' : str(r.algorithm)),
    h('td', 'fl-left', { title: same ? `the same kernels as ${same}: timed once, its times are that row's` : null },
      numpy ? 'eager' : str(r.cost_model), same ? h('div', 'fl-same-kernels', {}, `same kernels as ${same}`) : null),
    h('td', 'fl-speedup', {
      title: speedTitle || null, 'data-fl-not-different': different.length > 0 && !numpy,
      'data-fl-not-comparable': !!str(r.not_comparable)
    }, speedupText(r, records)),
    h('td', 'fl-median', {}, dash(secondsOrDash(r.median_seconds))),
    h('td', 'fl-min', {}, dash(secondsOrDash(r.min_seconds))),
    h('td', 'fl-predicted', {}, secondsOrDash(r.predicted_seconds)),
    h('td', spread !== null && spread > 0.2 ? 'fl-spread fl-warning' : 'fl-spread', {},
      spread === null || untimed ? '—' : `±${fmt(Math.round(spread * 1000) / 10)}%`),
    h('td', '', {}, numpy ? '' : num(r.blocks) === null ? '—' : fmt(r.blocks)),
    h('td', '', {}, numpy ? '' : num(r.kernels) === null ? '—' : fmt(r.kernels)),
    h('td', '', {}, numpy ? '' : dash(secondsOrDash(r.compile_seconds))),
    h('td', '', {}, dash(fmt(r.samples))), h('td', 'fl-threads', {}, fmt(r.threads)),
    h('td', '', {}, num(r.max_abs_error) === null ? '' : Number(r.max_abs_error).toExponential(1))));
  }
  table.appendChild(body);
  const out = h('div', 'fl-timings-wrap', {});
  if (busy) {
    out.appendChild(h('div', 'fl-warning fl-busy-warning', {},
      'Other processes used the cores while timing (rows marked): the figures may be unreliable; time again on a quiet machine.'));
  }
  out.appendChild(table);
  out.appendChild(h('div', 'fl-protocol', {}, protocolText(t)));
  const warnings = timingWarnings(t);
  if (warnings.length) {
    out.appendChild(h('ul', 'fl-timing-warnings', {}, ...warnings.map(w => h('li', 'fl-warning', {}, w))));
  }
  out.appendChild(h('div', 'fl-hint', {},
    'min and median of the runs of each variant; spread: interquartile range over the median (above 20 % in red); ' +
    'speed-up: plain NumPy\'s median over this median, paired round by round; ≈: not told apart from another row.'));
  return out;
}

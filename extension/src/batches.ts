/**
 * The batch menu: which batches the explorer's batch selector lists, and their labels.
 *
 * The kernel decides (fusionlab.explore.report.batch_menu, the report's `batch_menu`): every batch
 * up to 50, else each kind of batch once with how many are like it, and the current one.
 * The ipywidgets view lists the same entries. A report saved before `batch_menu` existed
 * lists every batch, as this view did then.
 *
 * A saved notebook keeps the other batches viewed that fuse something (`saved_batches`,
 * fusionlab.explore.report.with_saved_batches): with no kernel, the menu switches to them here.
 */

import { fmt } from './dom';
import { asArray, IBatchMenuEntry, IReport } from './types';

/** The menu's entries for `report` (its `batch_menu`, else one per batch). */
export function batchMenu(report: IReport): IBatchMenuEntry[] {
  const menu = asArray<IBatchMenuEntry>(report.batch_menu);
  if (menu.length > 0) {
    return menu.map(m => ({ index: Number(m.index), alike: Number(m.alike) || 0, label: String(m.label) }));
  }
  return asArray<{ index: number; instructions: number }>(report.batches).map(b => ({
    index: Number(b.index),
    alike: 0,
    label: `batch ${Number(b.index) + 1} (${fmt(Number(b.instructions))} instructions)`
  }));
}

/** The keys of a report that are its batch's (fusionlab.explore.report.BATCH_KEYS). */
export const BATCH_KEYS = ['batch', 'status', 'notices', 'program', 'graph', 'partitions', 'selected', 'trace', 'code',
  'timings', 'profile', 'steps', 'contractions'] as const;

/** The batches `report` can show with no kernel: its own and the saved ones. */
export function savedBatches(report: IReport): Set<number> {
  const out = new Set<number>([Number(report.batch)]);
  for (const s of asArray<Partial<IReport>>(report.saved_batches)) {
    if (s && typeof s === 'object' && Number.isInteger(s.batch) && s.program && Array.isArray(s.partitions)) {
      out.add(Number(s.batch));
    }
  }
  return out;
}

/**
 * `report` showing batch `batch` from its saved sections (the batch shown becomes a saved one,
 * so the menu can come back to it); `null` when that batch was not saved.
 */
export function withBatch(report: IReport, batch: number): IReport | null {
  if (batch === Number(report.batch)) {
    return report;
  }
  const saved = asArray<Partial<IReport>>(report.saved_batches);
  const section = saved.find(s => s && typeof s === 'object' && Number(s.batch) === batch);
  if (!section || !section.program || !Array.isArray(section.partitions)) {
    return null;
  }
  const r = report as unknown as Record<string, unknown>;
  const mine: Record<string, unknown> = {};
  const next: Record<string, unknown> = { ...r };
  for (const k of BATCH_KEYS) {
    mine[k] = r[k] ?? null;
    next[k] = (section as Record<string, unknown>)[k] ?? null;
  }
  next.saved_batches = [...saved.filter(s => s !== section), mine].sort((a, b) => Number(a.batch) - Number(b.batch));
  return next as unknown as IReport;
}

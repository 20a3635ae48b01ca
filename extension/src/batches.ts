/**
 * The batch menu: which batches the explorer's batch selector lists, and their labels.
 *
 * The kernel decides (fusionlab.explore.report.batch_menu, the report's `batch_menu`): every batch
 * up to 50, else each kind of batch once with how many are like it, and the current one.
 * The ipywidgets view lists the same entries. A report saved before `batch_menu` existed
 * lists every batch, as this view did then.
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

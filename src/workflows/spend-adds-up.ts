import { patched } from '@temporalio/workflow';

/**
 * Patch id of "spend adds up" (decision 0027): a dropped task record's usage stays in its parent's total (a
 * usage ledger), a child's settlement counts its result's own total, and the children of one parent are
 * given together no more than the parent has left (each child's caps reserved while it is live). The caps
 * decide commands (a child refused, a run ended at its cap), so histories without the marker replay with
 * the old totals.
 */
export const spendAddsUpPatch = 'spend-adds-up';

/** Whether this run's totals and children's caps add up. Asked once, when the run starts (see `quietWaits`). */
export function spendAddsUp(): boolean {
  return patched(spendAddsUpPatch);
}

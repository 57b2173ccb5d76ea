import { patched } from '@temporalio/workflow';

/**
 * Patch id of "idle costs nothing" (decision 0021): waiting children are not probed, a wait also ends for
 * the server's continue-as-new suggestion, and the probe and idle-alarm timers are cancelled when a run
 * completes or continues as new. Histories without the marker replay with the old behaviour.
 */
export const quietWaitsPatch = 'idle-costs-nothing';

/**
 * Whether this run waits quietly. Asked once, when the run starts, and kept for the whole run: `patched()`
 * answers false while an old history replays but true once the worker runs past it, and one run must not
 * change behaviour halfway (the next run, after a continue-as-new, takes the new behaviour).
 */
export function quietWaits(): boolean {
  return patched(quietWaitsPatch);
}

import { patched } from '@temporalio/workflow';
import { quietWaits } from './quiet-waits';
import { spendAddsUp } from './spend-adds-up';

/**
 * Patch id that stands for both patches every new run met at its start, `idle-costs-nothing` and
 * `spend-adds-up`: a new run records this one marker instead of theirs. Each marker also makes the SDK's
 * core write a `TemporalChangeVersion` search attribute, a visibility write on the server, for every
 * delegation (decision 0054).
 */
export const startInOnePatch = 'idle-and-spend-in-one-marker';

/**
 * Whether this run waits quietly and whether its spend adds up. Asked once, when the run starts (see
 * `quietWaits`). A history with the one marker has both; a history from before it replays the two old
 * patches as it recorded them (with either, both or neither).
 */
export function startPatches(): { quietWaits: boolean; spendAddsUp: boolean } {
  if (patched(startInOnePatch)) return { quietWaits: true, spendAddsUp: true };
  return { quietWaits: quietWaits(), spendAddsUp: spendAddsUp() };
}

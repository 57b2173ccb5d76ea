import type { BaselineActivities } from './baseline-workflows';

/** The baseline's no-op activities: answer at once (or after the wait they are given), so only Temporal's own cost is measured. */
export function createBaselineActivities(): BaselineActivities {
  return {
    noop: (input) => Promise.resolve({ seq: input.seq }),
    hold: (input) => new Promise((resolveHold) => setTimeout(() => resolveHold({ ms: input.ms }), input.ms)),
  };
}

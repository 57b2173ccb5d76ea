import type { BaselineActivities } from './baseline-workflows';

/** The baseline's no-op activities: answer at once, so only Temporal's own cost is measured. */
export function createBaselineActivities(): BaselineActivities {
  return {
    noop: (input) => Promise.resolve({ seq: input.seq }),
  };
}

import { proxyActivities } from '@temporalio/workflow';

/**
 * The bare-Temporal baseline: a workflow that does nothing but run `count` no-op activities one after
 * another. Bundled on its own and served on its own task queue, so errand's figures can be compared with
 * what Temporal itself costs on the same machine, server and worker settings.
 */

/** Activities the baseline schedules (implemented in baseline-activities.ts). */
export interface BaselineActivities {
  noop(input: { seq: number }): Promise<{ seq: number }>;
}

const { noop } = proxyActivities<BaselineActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

/** Runs `count` sequential no-op activities and returns how many ran. */
export async function baselineSequentialWorkflow(count: number): Promise<number> {
  // Bounded by the caller's count, which the bench keeps small (<= a few hundred).
  for (let seq = 0; seq < count; seq += 1) {
    await noop({ seq });
  }
  return count;
}

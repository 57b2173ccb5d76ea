import { executeChild, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';

/**
 * The bare-Temporal baseline: workflows that do nothing but run no-op activities. Bundled on their own and
 * served on their own task queue, so errand's figures can be compared with what Temporal itself costs on
 * the same machine, server and worker settings.
 */

/** Activities the baseline schedules (implemented in baseline-activities.ts). */
export interface BaselineActivities {
  noop(input: { seq: number }): Promise<{ seq: number }>;
  /** Answers after `ms` (a model call's wait, nothing else). */
  hold(input: { ms: number }): Promise<{ ms: number }>;
}

const { noop, hold } = proxyActivities<BaselineActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

const local = proxyLocalActivities<BaselineActivities>({
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

/** Runs `count` sequential no-op local activities (recorded as markers, run inside the workflow task). */
export async function baselineLocalSequentialWorkflow(count: number): Promise<number> {
  // Bounded like baselineSequentialWorkflow.
  for (let seq = 0; seq < count; seq += 1) {
    await local.noop({ seq });
  }
  return count;
}

/**
 * The shape of an agent turn on bare Temporal: a no-op activity standing in for the model call, then a
 * second one standing in for the tool call — a normal activity, or a local activity when `localTool`.
 * For the floor figure: what one turn costs, and what running the tool as a local activity saves.
 */
export async function baselineTurnsWorkflow(turns: number, localTool: boolean): Promise<number> {
  // Bounded by the caller's count.
  for (let seq = 0; seq < turns; seq += 1) {
    await noop({ seq });
    await (localTool ? local.noop({ seq }) : noop({ seq }));
  }
  return turns;
}

/** One agent of the bare fan-out: a child workflow whose only work is one activity held `delayMs`. */
export async function baselineAgentWorkflow(delayMs: number): Promise<number> {
  return (await hold({ ms: delayMs })).ms;
}

/**
 * The shape of a workflow run's fan-out on bare Temporal: `count` child workflows (baselineAgentWorkflow),
 * `concurrency` at once, each started as soon as a lane frees. No script, journal, planning, blobs or search
 * attributes: what Temporal itself takes for a fan-out of children on this machine.
 */
export async function baselineFanOutWorkflow(count: number, concurrency: number, delayMs: number): Promise<number> {
  let next = 0;
  const lane = async (): Promise<void> => {
    // Bounded by the caller's count.
    while (next < count) {
      const seq = next;
      next += 1;
      await executeChild(baselineAgentWorkflow, { args: [delayMs], workflowId: `${workflowInfo().workflowId}-${seq}` });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return count;
}

import { workflowRunWorkflowType, type WorkflowRunInput, type WorkflowRunResult } from '../src/contracts/workflow-run';
import { planAheadInBatchesPatch } from '../src/workflows/workflow-run-plans';
import type { RecordingContext } from './record-more-histories';
import { patchIdsOf } from './record-ending-history';

/**
 * A workflow run without caps: three agents one at a time (more would pass the recording server's
 * continue-as-new threshold). With the `workflow-run-plans-ahead-in-batches` patch the first agent and the
 * two after it, planned ahead, go in one batch: one `planWorkflowAgents` activity. From before it the next
 * agent's plan is asked each time the lane frees: two or more. Throws when the run did not take that path
 * (a fixture never claims a path it did not take).
 */
async function recordRunPlans(context: RecordingContext, name: string, taskQueue: string, patchedRun: boolean): Promise<void> {
  const { client, stamp } = context;
  const markers = [1, 2, 3].map((n) => context.script(`${name}-agent-${n}`, [{ text: `plan ${n}` }]));
  const script = 'return await parallel(args.markers.map((marker, index) => () => agent(`Make plan ${index + 1} ${marker}`, { label: "plan" })));';
  const workflowId = `errand-record-${name}-${stamp}`;
  const input: WorkflowRunInput = { script, scriptName: 'recorded-plans.js', args: { markers }, workingDir: context.workingDir, caps: {}, concurrency: 1, maxAgents: 10, startedBy: 'recording' };
  const handle = await client.workflow.start(workflowRunWorkflowType, { taskQueue, workflowId, args: [input] });
  const result = (await handle.result()) as WorkflowRunResult;
  if (result.status !== 'completed' || JSON.stringify(result.result) !== JSON.stringify(markers.map((_, index) => `plan ${index + 1}`))) {
    throw new Error(`${name}: the run ended ${result.status} with ${JSON.stringify(result.result ?? result.diagnostic)}`);
  }
  const latest = await client.workflow.getHandle(workflowId).describe();
  if (latest.runId !== handle.firstExecutionRunId) throw new Error(`${name}: the run continued as new; the fixture is one run`);
  const events = (await handle.fetchHistory()).events ?? [];
  const marked = patchIdsOf(events).includes(planAheadInBatchesPatch);
  if (marked !== patchedRun) throw new Error(`${name}: the patch's marker is ${marked ? 'there' : 'missing'}`);
  const planning = events.filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'planWorkflowAgents').length;
  if (patchedRun ? planning !== 1 : planning < 2) throw new Error(`${name}: ${planning} planWorkflowAgents activities, not ${patchedRun ? '1' : '2 or more'}`);
  await context.record(`workflow-run-${name}`, workflowId);
}

/** With the current code. */
export function recordRunPlansPatched(context: RecordingContext): Promise<void> {
  return recordRunPlans(context, 'plans-ahead', context.taskQueue, true);
}

/** As code from before the patch runs it. */
export function recordRunPlansBeforePatch(context: RecordingContext): Promise<void> {
  return recordRunPlans(context, 'plans-ahead-before-patch', context.withheldTaskQueue, false);
}

import { workflowAgentId } from '../src/contracts/workflow-ids';
import { workflowRunWorkflowType, type WorkflowRunInput, type WorkflowRunResult } from '../src/contracts/workflow-run';
import { runSharesCapsPatch } from '../src/workflows/workflow-run-caps';
import type { RecordingContext } from './record-more-histories';
import { patchIdsOf } from './record-ending-history';

/**
 * A workflow run with a token cap (decision 0050): three agents at two at once, each answering with 500
 * tokens. With the `workflow-run-shares-caps` patch the agents running at once share the cap (the first
 * two start with half of it each, a marker in the history); from before it, each starts with all that is
 * left. Throws when the run did not take that path (a fixture never claims a path it did not take).
 */
async function recordRunShares(context: RecordingContext, name: string, taskQueue: string, patchedRun: boolean): Promise<void> {
  const { client, stamp } = context;
  const markers = [1, 2, 3].map((n) => context.script(`${name}-agent-${n}`, [{ text: `share ${n}`, usage: { inputTokens: 400, outputTokens: 100 } }]));
  const script = 'return await parallel(args.markers.map((marker, index) => () => agent(`Take share ${index + 1} ${marker}`, { label: "share" })));';
  const workflowId = `errand-record-${name}-${stamp}`;
  const input: WorkflowRunInput = { script, scriptName: 'recorded-shares.js', args: { markers }, workingDir: context.workingDir, caps: { tokenBudget: 4_000 }, concurrency: 2, maxAgents: 10, startedBy: 'recording' };
  const handle = await client.workflow.start(workflowRunWorkflowType, { taskQueue, workflowId, args: [input] });
  const result = (await handle.result()) as WorkflowRunResult;
  if (result.status !== 'completed' || JSON.stringify(result.result) !== JSON.stringify(['share 1', 'share 2', 'share 3'])) {
    throw new Error(`${name}: the run ended ${result.status} with ${JSON.stringify(result.result ?? result.diagnostic)}`);
  }
  const latest = await client.workflow.getHandle(workflowId).describe();
  if (latest.runId !== handle.firstExecutionRunId) throw new Error(`${name}: the run continued as new; the fixture is one run`);
  const events = (await handle.fetchHistory()).events ?? [];
  const marked = patchIdsOf(events).includes(runSharesCapsPatch);
  if (marked !== patchedRun) throw new Error(`${name}: the patch's marker is ${marked ? 'there' : 'missing'}`);
  const firstCap = await startedTokenBudget(context, workflowAgentId(workflowId, 1));
  const expected = patchedRun ? 2_000 : 4_000;
  if (firstCap !== expected) throw new Error(`${name}: the first agent started with a token cap of ${firstCap}, not ${expected}`);
  await context.record(`workflow-run-${name}`, workflowId);
}

/** The token cap a delegation was started with (its input's `tokenBudget`). */
async function startedTokenBudget(context: RecordingContext, workflowId: string): Promise<number | undefined> {
  const history = await context.client.workflow.getHandle(workflowId).fetchHistory();
  const data = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { tokenBudget?: number }).tokenBudget : undefined;
}

/** With the current code. */
export function recordRunSharesPatched(context: RecordingContext): Promise<void> {
  return recordRunShares(context, 'shares', context.taskQueue, true);
}

/** As code from before the patch runs it. */
export function recordRunSharesBeforePatch(context: RecordingContext): Promise<void> {
  return recordRunShares(context, 'shares-before-patch', context.withheldTaskQueue, false);
}

import { childWorkflowId } from '../src/contracts/workflow-ids';
import { sendMessageUpdate, transcriptQuery } from '../src/contracts/subagent-messages';
import type { WorkflowRunResult } from '../src/contracts/workflow-run';
import type { RecordingContext } from './record-more-histories';

/**
 * The `run_workflow` scenario of the recording script (record-histories.ts, decision 0045): a session's
 * model runs an inline workflow script in the foreground; the run (a child of the session, `~task-1`) asks
 * one agent and returns its answer, and the session's model answers with it. Records the session's first
 * run and the workflow run; throws when the run did not do that (a fixture never claims a path it did not take).
 */
export async function recordSessionRunWorkflow(context: RecordingContext): Promise<void> {
  const { client, taskQueue, stamp } = context;
  const agent = context.script('session-run-workflow-agent', [{ text: 'the part' }]);
  const script = `return await agent(${JSON.stringify(`Write the part ${agent}`)}, { label: "part" });`;
  const marker = context.script('session-run-workflow', [
    { toolCalls: [{ name: 'run_workflow', arguments: { script, description: 'one part' } }] },
    { text: 'The run returned the part.' },
  ]);
  const workflowId = `errand-record-session-run-workflow-${stamp}`;
  const handle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId, args: [{ ...context.sessionInput, label: 'recorded run_workflow' }] });
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Run the workflow ${marker}` }] });
  await context.waitUntil('session-run-workflow: the answer', async () => (await handle.query(transcriptQuery)).entries.some((entry) => entry.role === 'assistant' && entry.text === 'The run returned the part.'));
  const runId = childWorkflowId(workflowId, 'task-1');
  const run = (await client.workflow.getHandle(runId).result()) as WorkflowRunResult;
  if (run.status !== 'completed' || run.result !== 'the part') throw new Error(`session-run-workflow: the run ended ${run.status} with ${JSON.stringify(run.result ?? run.diagnostic)}`);
  await handle.cancel();
  await handle.result().catch(() => undefined);
  const firstRunId = handle.firstExecutionRunId;
  const events = (await client.workflow.getHandle(workflowId, firstRunId).fetchHistory()).events ?? [];
  if (!events.some((event) => event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name === 'workflowRunWorkflow')) {
    throw new Error('session-run-workflow: the session did not start the run in its first run');
  }
  await context.record('session-run-workflow', workflowId, firstRunId);
  await context.record('session-run-workflow-run', runId);
}

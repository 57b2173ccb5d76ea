import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, test } from 'vitest';
import { previousAttemptTimedOut, type PendingActivityView } from '../../src/activities/sticky-reset';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { ConversationScripts } from '../support/conversation-scripts';
import { subagentInput, testActivitySettings } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * A retried activity resets its workflow's sticky queue only when its previous attempt timed out — the one
 * case where the worker that had it may be dead (decision 0014, review N15). A retry after a 429 comes from
 * a live worker and forces no replay. The decision reads the previous attempt's failure from the
 * workflow's pending activity: here from the real dev server, for a 429 and for a start-to-close timeout,
 * while the retry runs.
 */

const scripts = new ConversationScripts();
const stack = useWorkerStack({ label: 'sticky-reset', scripted: { scripted: { model: scripts.model } } });

/** The pending model call as describe shows it, once it is on its second attempt. */
async function secondAttempt(handle: WorkflowHandle): Promise<{ pending: PendingActivityView[]; activityId: string }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const described = await stack.client.workflowService.describeWorkflowExecution({ namespace: 'default', execution: { workflowId: handle.workflowId } });
    const pending = described.pendingActivities ?? [];
    const call = pending.find((activity) => activity.activityType?.name === 'modelTurn' && (activity.attempt ?? 0) >= 2);
    if (call?.activityId) return { pending, activityId: call.activityId };
    if (Date.now() > deadline) throw new Error('the model call was not retried');
    await new Promise((resolveWait) => setTimeout(resolveWait, 50));
  }
}

describe('sticky-queue reset on retry', () => {
  test('a retry after a 429 does not reset; the run completes', async () => {
    const marker = scripts.add('rate-limited', [
      { error: { status: 429, message: 'slow down', retryAfterSeconds: 1 } },
      { text: 'done after waiting', delayMs: 3_000 },
    ]);
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-sticky-429-${Date.now()}`,
      args: [subagentInput({ prompt: `Answer. ${marker}`, workingDir: stack.workingDir, toolsets: [] })],
    });
    const { pending, activityId } = await secondAttempt(handle);
    expect(pending.find((activity) => activity.activityId === activityId)?.lastFailure?.message).toMatch(/slow down/);
    expect(previousAttemptTimedOut(pending, activityId)).toBe(false);
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.output).toBe('done after waiting');
  });

  test('a retry after a timed-out attempt resets', async () => {
    const marker = scripts.add('timed-out', [
      { text: 'too late', delayMs: 6_000 },
      { text: 'in time', delayMs: 1_500 },
    ]);
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-sticky-timeout-${Date.now()}`,
      args: [subagentInput({ prompt: `Answer. ${marker}`, workingDir: stack.workingDir, toolsets: [], activity: { ...testActivitySettings, modelCallTimeoutMs: 2_500 } })],
    });
    const { pending, activityId } = await secondAttempt(handle);
    expect(previousAttemptTimedOut(pending, activityId)).toBe(true);
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
  });

  test('an activity that describe does not list, or lists without a failure, counts as possibly lost', () => {
    expect(previousAttemptTimedOut([], 'a')).toBe(true);
    expect(previousAttemptTimedOut([{ activityId: 'a', lastFailure: null }], 'a')).toBe(true);
    expect(previousAttemptTimedOut([{ activityId: 'a', lastFailure: { timeoutFailureInfo: null } }], 'a')).toBe(false);
  });
});

import type { Context as ActivityContext } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { createLogger } from '../observability/json-logger';

/**
 * A retried activity frees its workflow from a dead worker's sticky queue.
 *
 * When a worker dies, Temporal keeps sending each of its workflows' next workflow task to that worker's
 * sticky queue, where the task waits out the sticky schedule-to-start timeout (src/worker/errand-worker.ts) before any
 * other worker may take it; the server gives up on a silent sticky worker only after 10 s, a constant.
 * The common case after a crash is a model call that timed out on its heartbeat and is retried on a live
 * worker: when it completes, its workflow task would wait on the dead worker's queue. So an activity
 * attempt after the first resets its workflow's sticky queue (ResetStickyTaskQueue) before it runs, and
 * its completion goes to the normal queue, where any live worker takes it at once (and replays the
 * history). Only a retry whose previous attempt *timed out* does it (its worker may be gone): a reset
 * costs a full replay of the workflow on its next task, and retries after a 429 or a 5xx — common under a
 * provider's rate limits — come from a live worker whose sticky queue is fine (review N15). The previous
 * attempt's failure is read from the workflow's pending activity (a describe, not a billable action); when
 * it cannot be read the reset is done, as before. Local activities are left alone: they retry inside a
 * running workflow task. A failed reset is logged and never fails the activity. Decision 0014.
 */
export const resetStickyOnRetry: ActivityInterceptorsFactory = (context: ActivityContext) => ({
  inbound: {
    async execute(input, next) {
      const { info } = context;
      if (info.attempt > 1 && !info.isLocal && info.workflowExecution !== undefined) {
        const namespace = info.workflowNamespace ?? info.activityNamespace;
        if (await previousAttemptMayBeLost(context, namespace, info.workflowExecution)) await resetStickyQueue(context, namespace, info.workflowExecution);
      }
      return next(input);
    },
  },
});

const log = createLogger('worker');

/** What a describe says of one pending activity (the fields this file reads). */
export interface PendingActivityView {
  activityId?: string | null;
  lastFailure?: { message?: string | null; timeoutFailureInfo?: unknown } | null;
}

/**
 * Whether the activity's previous attempt ended by a timeout (heartbeat, start-to-close): the one case where
 * its worker may be dead. Unknown (the activity is not listed, or has no failure) counts as a timeout, so
 * a lost worker is never waited for.
 */
export function previousAttemptTimedOut(pending: readonly PendingActivityView[], activityId: string): boolean {
  const activity = pending.find((candidate) => candidate.activityId === activityId);
  if (!activity?.lastFailure) return true;
  return activity.lastFailure.timeoutFailureInfo !== undefined && activity.lastFailure.timeoutFailureInfo !== null;
}

async function previousAttemptMayBeLost(context: ActivityContext, namespace: string, execution: { workflowId: string; runId: string }): Promise<boolean> {
  try {
    const described = await context.client.workflowService.describeWorkflowExecution({ namespace, execution });
    return previousAttemptTimedOut(described.pendingActivities ?? [], context.info.activityId);
  } catch (error) {
    log.warn('could not read why the previous attempt of an activity ended; resetting its workflow\'s sticky queue anyway', {
      workflowId: execution.workflowId,
      activityType: context.info.activityType,
      error,
    });
    return true;
  }
}

async function resetStickyQueue(context: ActivityContext, namespace: string, execution: { workflowId: string; runId: string }): Promise<void> {
  try {
    await context.client.workflowService.resetStickyTaskQueue({ namespace, execution });
  } catch (error) {
    log.warn('could not reset the sticky queue of a retried activity\'s workflow; its next workflow task may wait for the sticky timeout', {
      workflowId: execution.workflowId,
      activityType: context.info.activityType,
      attempt: context.info.attempt,
      error,
    });
  }
}

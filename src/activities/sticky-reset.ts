import type { Context as ActivityContext } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { createLogger } from '../observability/json-logger';

/**
 * A retried activity frees its workflow from a dead worker's sticky queue.
 *
 * When a worker dies, Temporal keeps sending each of its workflows' next workflow task to that worker's
 * sticky queue, where the task waits out the sticky schedule-to-start timeout (src/worker.ts) before any
 * other worker may take it; the server gives up on a silent sticky worker only after 10 s, a constant.
 * The common case after a crash is a model call that timed out on its heartbeat and is retried on a live
 * worker: when it completes, its workflow task would wait on the dead worker's queue. So an activity
 * attempt after the first resets its workflow's sticky queue (ResetStickyTaskQueue) before it runs, and
 * its completion goes to the normal queue, where any live worker takes it at once (and replays the
 * history). Resetting is always safe — it costs one replay, and retries are rare. Local activities are
 * left alone: they retry inside a running workflow task. A failed reset is logged and never fails the
 * activity. Decision 0014.
 */
export const resetStickyOnRetry: ActivityInterceptorsFactory = (context: ActivityContext) => ({
  inbound: {
    async execute(input, next) {
      const { info } = context;
      if (info.attempt > 1 && !info.isLocal && info.workflowExecution !== undefined) {
        await resetStickyQueue(context, info.workflowNamespace ?? info.activityNamespace, info.workflowExecution);
      }
      return next(input);
    },
  },
});

const log = createLogger('worker');

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

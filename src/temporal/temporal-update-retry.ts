import { GrpcCode, grpcStatusOf } from './grpc-status';

/**
 * Sends a workflow update again when Temporal refused it because the run it reached was being replaced.
 *
 * A continuable subagent or a session continues as new when its history grows; an update that arrives while
 * the workflow task closing the run is in flight makes the server fail that task (a new event the task did
 * not see) and refuse the update with FAILED_PRECONDITION "…unexpected workflow task failure". The update
 * was never accepted, and the workflow id now names the new run, so sending it again (with the same update
 * id, so a duplicate is impossible) delivers it. Any other error is the caller's.
 */
export async function sendUpdateAcrossRunChange<T>(send: () => Promise<T>, attempts = 5, pauseMs = 200): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await send();
    } catch (error) {
      if (attempt >= attempts || !refusedByWorkflowTaskFailure(error)) throw error;
      await new Promise((resolvePause) => setTimeout(resolvePause, pauseMs * attempt));
    }
  }
}

/** Whether `error` (or its cause, as the Temporal client wraps it) is the refusal described above. */
export function refusedByWorkflowTaskFailure(error: unknown): boolean {
  const status = grpcStatusOf(error);
  return status?.code === GrpcCode.failedPrecondition && /workflow task failure/i.test(status.text);
}

import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import type { RunOutcome } from './agent-core';

/**
 * Turns what a run threw into an outcome: cancellation → `cancelled`, a failed activity → `failed`
 * with the classified failure as diagnostic. Anything else (continue-as-new, bugs) is rethrown.
 */
export function outcomeOfError(error: unknown, cancelReason: string | undefined): RunOutcome {
  if (isCancellation(error)) return { status: 'cancelled', diagnostic: cancelReason ?? 'the workflow was cancelled' };
  if (error instanceof ActivityFailure) {
    const cause = error.cause;
    if (cause instanceof ApplicationFailure) return { status: 'failed', diagnostic: `${cause.type ?? 'Error'}: ${cause.message}` };
    return { status: 'failed', diagnostic: cause?.message ?? error.message };
  }
  throw error;
}

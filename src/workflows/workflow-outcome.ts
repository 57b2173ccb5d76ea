import { ActivityFailure, ApplicationFailure, ContinueAsNew, isCancellation, TemporalFailure } from '@temporalio/workflow';
import { FailureType } from '../contracts/failures';
import type { CapCrossing } from '../domain/run-caps';
import type { RunOutcome } from './agent-loop';

/**
 * Turns what a run threw into an outcome: cancellation → `cancelled` (or `budget`, with the cap, when a cap
 * stopped it), a failed activity or any other Temporal failure → `failed` with the failure as diagnostic.
 * Continue-as-new passes through (it is how a workflow continues). Anything else is a bug in workflow code:
 * it is rethrown, so the workflow task fails and is retried once the bug is fixed, instead of ending the
 * workflow for good.
 */
export function outcomeOfError(error: unknown, cancelReason: string | undefined, budgetCrossed?: CapCrossing): RunOutcome {
  if (error instanceof ContinueAsNew) throw error;
  if (isCancellation(error)) {
    if (budgetCrossed !== undefined && cancelReason === undefined) return { status: budgetCrossed.status, budget: budgetCrossed.cap, diagnostic: budgetCrossed.diagnostic };
    return { status: 'cancelled', diagnostic: cancelReason ?? 'the workflow was cancelled' };
  }
  if (error instanceof ActivityFailure) {
    const cause = error.cause;
    // The tenant's daily cap refused the next model call (the worker's check): the run ends as its own cost cap would.
    if (cause instanceof ApplicationFailure && cause.type === FailureType.dailyCostCap) return { status: 'budget', budget: 'cost', diagnostic: cause.message };
    if (cause instanceof ApplicationFailure) return { status: 'failed', diagnostic: `${cause.type ?? 'Error'}: ${cause.message}` };
    return { status: 'failed', diagnostic: cause?.message ?? error.message };
  }
  if (error instanceof TemporalFailure) return { status: 'failed', diagnostic: `${error.name}: ${error.message}` };
  throw error;
}

import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../contracts/failures';
import { ApiProblem, ProblemKind } from './problem';

/**
 * The answer to a message refused because the workflow's queue is full (ERRAND_MAX_QUEUED_MESSAGES, review
 * N12): 429, with the workflow's words, which name the limit. Undefined for any other refusal.
 */
export function queueFullProblem(error: unknown): ApiProblem | undefined {
  if (!(error instanceof WorkflowUpdateFailedError)) return undefined;
  const cause = error.cause;
  if (!(cause instanceof ApplicationFailure) || cause.type !== FailureType.messageQueueFull) return undefined;
  return new ApiProblem(429, ProblemKind.limitExceeded, 'Too many queued messages', { detail: cause.message });
}

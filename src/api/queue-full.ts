import { FailureType } from '../contracts/failures';
import { ApiProblem, ProblemKind } from './problem';

/**
 * An update the workflow refused (its validator threw) or whose handler failed, as the API's Temporal
 * gateway reports it (temporal-gateway.ts): the failure's message and, for an ApplicationFailure, its type.
 */
export class UpdateRefused extends Error {
  readonly failureType: string | undefined;
  constructor(message: string, failureType: string | undefined) {
    super(message);
    this.name = 'UpdateRefused';
    this.failureType = failureType;
  }
}

/**
 * The answer to a message refused because the workflow's queue is full (ERRAND_MAX_QUEUED_MESSAGES, review
 * N12): 429, with the workflow's words, which name the limit. Undefined for any other refusal.
 */
export function queueFullProblem(error: unknown): ApiProblem | undefined {
  if (!(error instanceof UpdateRefused) || error.failureType !== FailureType.messageQueueFull) return undefined;
  return new ApiProblem(429, ProblemKind.limitExceeded, 'Too many queued messages', { detail: error.message });
}

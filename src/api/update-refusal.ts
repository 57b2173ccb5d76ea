import { FailureType } from '../contracts/failures';
import { ApiProblem, ProblemKind } from './problem';
import { queueFullProblem, type UpdateRefused } from './queue-full';

/** Titles of the answers to a refused update, in the words of the route. */
export interface RefusalTitles {
  /** The workflow refused it for its state: ended, not continuable, not this kind of session, nothing pending. */
  conflict: string;
  /** The workflow has ended (default: `conflict`). */
  ended?: string;
}

/**
 * The answer to an update a workflow refused, by the refusal's failure type (decision 0041): a full queue is
 * 429, input the validator finds invalid is 422, and every other refusal (ended, not taken, not pending, or
 * a worker of an older build that threw an untyped error) is 409. The detail is the workflow's words.
 */
export function updateRefusalProblem(error: UpdateRefused, titles: RefusalTitles): ApiProblem {
  const full = queueFullProblem(error);
  if (full) return full;
  if (error.failureType === FailureType.invalidInput) return new ApiProblem(422, ProblemKind.invalidInput, 'The workflow refused the input', { detail: error.message });
  const title = error.failureType === FailureType.runEnded ? (titles.ended ?? titles.conflict) : titles.conflict;
  return new ApiProblem(409, ProblemKind.conflict, title, { detail: error.message });
}

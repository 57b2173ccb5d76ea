import type { PlanningFailure } from '../contracts/planning-failure';
import { ApiProblem, ProblemKind } from './problem';

/**
 * The 422 of a delegation the planner refused, filled from its typed failure (decision 0041): the field and
 * code go to `errors[]`, "did you mean" names to `suggestions`. An unknown source keeps its own problem type
 * and title, and always has `suggestions` (empty when no name is close).
 */
export function planningProblem(failure: PlanningFailure): ApiProblem {
  const unknownSource = failure.code === 'source-not-found';
  const suggestions = unknownSource ? (failure.suggestions ?? []) : failure.suggestions;
  return new ApiProblem(422, unknownSource ? ProblemKind.sourceNotFound : ProblemKind.invalidDelegation, unknownSource ? 'Unknown source' : 'The delegation cannot start', {
    detail: `${failure.field}: ${failure.message}`,
    errors: [{ in: 'body', field: failure.field, message: failure.message, code: failure.code }],
    ...(suggestions ? { suggestions } : {}),
  });
}

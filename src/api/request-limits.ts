import type { ErrandConfig } from '../settings/config';
import type { FieldProblem } from '../contracts/api';
import { ApiProblem, ProblemKind } from './problem';

/**
 * Limits in a request are ceilings set by the operator: a request may ask for less (fewer turns, a
 * shallower depth), never for more. A request over a limit is refused with a 422 that names the field, the
 * operator's limit and its setting — it is never quietly lowered, so the caller knows what it will get.
 */

/** One limit a request field may lower but not raise. */
interface Ceiling {
  field: string;
  requested: number | undefined;
  limit: number;
  setting: string;
}

function problemsOf(ceilings: readonly Ceiling[]): FieldProblem[] {
  return ceilings
    .filter((ceiling) => ceiling.requested !== undefined && ceiling.requested > ceiling.limit)
    .map((ceiling) => ({
      in: 'body' as const,
      field: ceiling.field,
      message: `${ceiling.requested} is over this deployment's limit of ${ceiling.limit} (${ceiling.setting}); a request may lower the operator's limits, never raise them: ask for at most ${ceiling.limit}`,
    }));
}

function refuse(problems: FieldProblem[]): void {
  if (problems.length === 0) return;
  const first = problems[0];
  throw new ApiProblem(422, ProblemKind.limitExceeded, "The request asks for more than the operator's limits", {
    detail: problems.length === 1 && first ? `${first.field}: ${first.message}` : problems.map((problem) => `${problem.field}: ${problem.message}`).join('; '),
    errors: problems,
  });
}

/** The operator's caps of time (seconds) and money (US dollars) as ceilings of two request fields. */
function capCeilings(fields: { time: string; cost: string }, requested: { time: number | undefined; cost: number | undefined }, config: ErrandConfig): Ceiling[] {
  return [
    ...(config.caps.timeBudgetMs !== undefined ? [{ field: fields.time, requested: requested.time, limit: Math.floor(config.caps.timeBudgetMs / 1_000), setting: 'ERRAND_MAX_TIME_BUDGET_SECS' }] : []),
    ...(config.caps.costBudgetMicroUsd !== undefined ? [{ field: fields.cost, requested: requested.cost, limit: config.caps.costBudgetMicroUsd / 1_000_000, setting: 'ERRAND_MAX_COST_BUDGET_USD' }] : []),
  ];
}

/** Refuses a `POST /v1/delegations` body whose `max_turns`, `time_budget` or `cost_budget_usd` is over the operator's. */
export function checkDelegationLimits(request: { max_turns?: number | undefined; time_budget?: number | undefined; cost_budget_usd?: number | undefined }, config: ErrandConfig): void {
  refuse(
    problemsOf([
      { field: 'max_turns', requested: request.max_turns, limit: config.subagent.maxTurns, setting: 'ERRAND_SUBAGENT_MAX_TURNS' },
      ...capCeilings({ time: 'time_budget', cost: 'cost_budget_usd' }, { time: request.time_budget, cost: request.cost_budget_usd }, config),
    ]),
  );
}

/** Refuses a `POST /v1/sessions` body whose `maxDepth`, `maxTurnsPerMessage`, `timeBudget` or `costBudgetUsd` is over the operator's. */
export function checkSessionLimits(request: { maxDepth?: number | undefined; maxTurnsPerMessage?: number | undefined; timeBudget?: number | undefined; costBudgetUsd?: number | undefined }, config: ErrandConfig): void {
  refuse(
    problemsOf([
      { field: 'maxDepth', requested: request.maxDepth, limit: config.subagent.maxDepth, setting: 'ERRAND_MAX_DEPTH' },
      { field: 'maxTurnsPerMessage', requested: request.maxTurnsPerMessage, limit: config.sessionMaxTurns, setting: 'ERRAND_SESSION_MAX_TURNS' },
      ...capCeilings({ time: 'timeBudget', cost: 'costBudgetUsd' }, { time: request.timeBudget, cost: request.costBudgetUsd }, config),
    ]),
  );
}

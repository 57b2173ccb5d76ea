import type { TokenUsage } from '../contracts/model';
import type { BudgetCap, CapStatus } from '../contracts/subagent';
import { refuse, type PlanningRefusal } from '../contracts/planning-failure';
import { capDefinitionLimit } from './definition-limits';
import { formatUsd, type ModelPrices } from './model-cost';

/*
 * The caps of a run (SEMANTICS §6 "Spend", decision 0027): tokens, wall-clock time and money, per delegation
 * and per session. Pure: the workflow checks them with its own clock before every model call and on every
 * report of a child; planning chooses a child's caps (what it asks for, never more than its parent has left
 * or the operator allows) and estimates what a fork or a large `context` costs before anything starts.
 */

/** The caps a workflow runs under; each absent one does not apply. */
export interface RunCaps {
  tokenBudget?: number | undefined;
  /** Wall-clock milliseconds from the workflow's start. */
  timeBudgetMs?: number | undefined;
  costBudgetMicroUsd?: number | undefined;
}

/** A cap that stopped a run: the end status `budget`, which cap, and the diagnostic naming the cap and the figures. */
export interface CapCrossing {
  status: CapStatus;
  cap: BudgetCap;
  diagnostic: string;
}

/** US dollars as whole micro-dollars (the unit costs are summed in, decision 0025). */
export function usdToMicro(usd: number): number {
  return Math.round(usd * 1_000_000);
}

/** Seconds for people: `90 s`, cut to whole seconds. */
function seconds(ms: number): string {
  return `${Math.floor(ms / 1_000)} s`;
}

/**
 * Which cap, if any, the run has reached (tokens first, then money, then time): used with `now` from the
 * workflow clock and the total usage of the workflow and its descendants.
 */
export function capCrossing(caps: RunCaps, used: { total: TokenUsage; startedAt: number; now: number }): CapCrossing | undefined {
  if (caps.tokenBudget !== undefined) {
    const tokens = used.total.inputTokens + used.total.outputTokens;
    if (tokens >= caps.tokenBudget) return { status: 'budget', cap: 'tokens', diagnostic: `used ${tokens} tokens (with its subagents); the token budget is ${caps.tokenBudget}` };
  }
  if (caps.costBudgetMicroUsd !== undefined) {
    const cost = used.total.costMicroUsd ?? 0;
    if (cost >= caps.costBudgetMicroUsd) {
      return { status: 'budget', cap: 'cost', diagnostic: `spent ${formatUsd(cost)} (with its subagents); the cost budget is ${formatUsd(caps.costBudgetMicroUsd)}` };
    }
  }
  if (caps.timeBudgetMs !== undefined) {
    const elapsed = used.now - used.startedAt;
    if (elapsed >= caps.timeBudgetMs) return { status: 'budget', cap: 'time', diagnostic: `ran for ${seconds(elapsed)} since it started; the time budget is ${seconds(caps.timeBudgetMs)}` };
  }
  return undefined;
}

/** What is left of each cap (0 at the least); absent where there is no cap. */
export function remainingCaps(caps: RunCaps, used: { total: TokenUsage; startedAt: number; now: number }): { tokens?: number; timeMs?: number; costMicroUsd?: number } {
  return {
    ...(caps.tokenBudget !== undefined ? { tokens: Math.max(0, caps.tokenBudget - used.total.inputTokens - used.total.outputTokens) } : {}),
    ...(caps.timeBudgetMs !== undefined ? { timeMs: Math.max(0, caps.timeBudgetMs - (used.now - used.startedAt)) } : {}),
    ...(caps.costBudgetMicroUsd !== undefined ? { costMicroUsd: Math.max(0, caps.costBudgetMicroUsd - (used.total.costMicroUsd ?? 0)) } : {}),
  };
}

/** A child's cap: what it asked for, but never more than its parent has left (SEMANTICS §5, §6). */
export function childCap(requested: number | undefined, remaining: number | undefined): number | undefined {
  if (remaining === undefined) return requested;
  return requested === undefined ? remaining : Math.min(requested, remaining);
}

/** What planning weighs to choose a child's time and cost caps. */
export interface CapChoiceInputs {
  /** `time_budget` (seconds) and `cost_budget_usd` of the request. */
  request: { timeBudgetSecs?: number | undefined; costBudgetUsd?: number | undefined };
  /** The delegated recipe's `settings.time_budget` / `settings.cost_budget_usd`, and its file for warnings. */
  definition: { timeBudgetSecs?: number | undefined; costBudgetUsd?: number | undefined; file?: string | undefined };
  /** What the parent has left (absent: the parent has no such cap). */
  parent: { timeMs?: number | undefined; costMicroUsd?: number | undefined };
  /** The operator's ceilings (`ERRAND_MAX_TIME_BUDGET_SECS`, `ERRAND_MAX_COST_BUDGET_USD`). */
  operator: { timeBudgetMs?: number | undefined; costBudgetMicroUsd?: number | undefined };
  /** `provider/model` of the child's route, and its prices (absent: its calls' cost is unknown). */
  model: string;
  prices: ModelPrices | undefined;
}

/** The child's caps, with warnings for definition values capped at the operator's; or why it cannot start. */
export type CapChoice = { ok: true; timeBudgetMs?: number; costBudgetMicroUsd?: number; warnings: string[] } | PlanningRefusal;

/**
 * A child's time and cost caps: the request's value (refused when over the operator's ceiling: a request
 * lowers the operator's limits, never raises them), else the delegated recipe's (capped at the operator's,
 * with a warning), else the operator's ceiling; then never more than the parent has left. A cost cap on a
 * model without prices cannot be kept (its calls' cost is unknown): refused, naming the model.
 */
export function chooseCaps(inputs: CapChoiceInputs): CapChoice {
  const warnings: string[] = [];
  const { request, definition, operator } = inputs;
  const operatorSecs = operator.timeBudgetMs === undefined ? undefined : Math.floor(operator.timeBudgetMs / 1_000);
  if (request.timeBudgetSecs !== undefined && operatorSecs !== undefined && request.timeBudgetSecs > operatorSecs) {
    return refuse('time-budget-over-limit', 'time_budget', `time_budget ${request.timeBudgetSecs} is above this server's limit of ${operatorSecs} seconds per delegation (ERRAND_MAX_TIME_BUDGET_SECS); ask for at most ${operatorSecs}, or leave time_budget out.`);
  }
  if (request.costBudgetUsd !== undefined && operator.costBudgetMicroUsd !== undefined && usdToMicro(request.costBudgetUsd) > operator.costBudgetMicroUsd) {
    const limit = formatUsd(operator.costBudgetMicroUsd);
    return refuse('cost-budget-over-limit', 'cost_budget_usd', `cost_budget_usd ${request.costBudgetUsd} is above this server's limit of ${limit} per delegation (ERRAND_MAX_COST_BUDGET_USD); ask for at most ${limit}, or leave cost_budget_usd out.`);
  }
  let timeMs = request.timeBudgetSecs !== undefined ? request.timeBudgetSecs * 1_000 : undefined;
  if (timeMs === undefined && definition.timeBudgetSecs !== undefined) {
    const capped = operatorSecs === undefined ? { value: definition.timeBudgetSecs } : capDefinitionLimit({ field: 'settings.time_budget', ...(definition.file ? { file: definition.file } : {}), asked: definition.timeBudgetSecs, limit: operatorSecs, setting: 'ERRAND_MAX_TIME_BUDGET_SECS', unit: 'seconds' });
    if (capped.warning) warnings.push(capped.warning);
    timeMs = capped.value * 1_000;
  }
  let costMicro = request.costBudgetUsd !== undefined ? usdToMicro(request.costBudgetUsd) : undefined;
  if (costMicro === undefined && definition.costBudgetUsd !== undefined) {
    const asked = usdToMicro(definition.costBudgetUsd);
    const limit = operator.costBudgetMicroUsd;
    costMicro = limit === undefined ? asked : Math.min(asked, limit);
    if (limit !== undefined && asked > limit) {
      // In dollars, as the file and the setting say it (capDefinitionLimit speaks in whole units).
      warnings.push(`${definition.file ? `${definition.file}: ` : ''}settings.cost_budget_usd asks for ${formatUsd(asked)}, above this server's limit of ${formatUsd(limit)} (ERRAND_MAX_COST_BUDGET_USD); it runs with ${formatUsd(limit)}. A recipe or agent file can lower the operator's limits, never raise them.`);
    }
  }
  timeMs = childCap(timeMs ?? operator.timeBudgetMs, inputs.parent.timeMs);
  costMicro = childCap(costMicro ?? operator.costBudgetMicroUsd, inputs.parent.costMicroUsd);
  if (costMicro !== undefined && inputs.prices === undefined) {
    const why = request.costBudgetUsd !== undefined ? 'cost_budget_usd' : definition.costBudgetUsd !== undefined ? 'its settings.cost_budget_usd' : inputs.parent.costMicroUsd !== undefined ? "the cost budget it inherits from you" : 'ERRAND_MAX_COST_BUDGET_USD';
    return refuse('cost-cap-needs-prices', 'cost_budget_usd', `a cost cap (${why}) needs a model with prices, and ${inputs.model} has none in the provider configuration, so the cost of its calls is unknown; choose a model with prices (list_subagent_models shows them), or leave the cost cap out.`);
  }
  return { ok: true, ...(timeMs !== undefined ? { timeBudgetMs: timeMs } : {}), ...(costMicro !== undefined ? { costBudgetMicroUsd: costMicro } : {}), warnings };
}

/** What a child's first prompt holds, for its estimate before it starts. */
export interface FirstPrompt {
  /** Estimated tokens of its own text (system prompt parts, context, persona, task). */
  ownTokens: number;
  /** Tokens of a fork's prefix: the parent's conversation it repeats (its last prompt, as reported). */
  forkTokens?: number | undefined;
  /** Whether this is a fork (for the wording). */
  fork: boolean;
}

/**
 * Why a child's first prompt does not fit the child's caps (never more than what its parent has left), or undefined when it does (SEMANTICS §6: a fork or a
 * large `context` is estimated before it starts). The whole prompt is priced as uncached input, the most it
 * can cost: a provider may serve a fork's prefix from its cache, but errand cannot know that in advance.
 */
export function firstPromptRefusal(prompt: FirstPrompt, caps: { tokens?: number | undefined; costMicroUsd?: number | undefined }, model: { name: string; prices: ModelPrices | undefined }): string | undefined {
  const tokens = prompt.ownTokens + (prompt.forkTokens ?? 0);
  const what = prompt.fork ? `the fork's first prompt (your conversation so far, ${prompt.forkTokens ?? 0} tokens, and its task)` : "the subagent's first prompt (its instructions, context and task)";
  const instead = prompt.fork ? 'delegate without fork and give the subagent only what it needs in instructions' : 'shorten context, or give the subagent a file to read instead';
  if (caps.tokens !== undefined && tokens > caps.tokens) {
    return `${what} is estimated at ${tokens} tokens, more than its token budget of ${caps.tokens} (what is left of yours, or what it asked for); ${instead}.`;
  }
  if (caps.costMicroUsd !== undefined && model.prices !== undefined) {
    const cost = Math.round(tokens * model.prices.input);
    if (cost > caps.costMicroUsd) {
      return `${what} is estimated at ${tokens} tokens, ${formatUsd(cost)} at ${model.name}'s input price, more than its cost budget of ${formatUsd(caps.costMicroUsd)} (what is left of yours, or what it asked for); ${instead}.`;
    }
  }
  return undefined;
}

/**
 * Why a tenant may not start anything now (its spend today has reached the operator's daily cap), or
 * undefined. The day is the UTC calendar day; starts are possible again after its midnight. `held` is what
 * starts that have not spent yet hold back of the cap (a start is refused when spend and holds reach it).
 * `stops` says what is refused: a start (default) or a running conversation's next model call.
 */
export function dailyCapRefusal(tenant: string, day: string, spentMicroUsd: number, capMicroUsd: number | undefined, held = 0, stops: 'start' | 'model call' = 'start'): string | undefined {
  if (capMicroUsd === undefined || spentMicroUsd + held < capMicroUsd) return undefined;
  // The holds are named only where they made the difference.
  const holds = held > 0 && spentMicroUsd < capMicroUsd ? ` and starts not yet priced hold ${formatUsd(held)} of the cap` : '';
  const refused = stops === 'start' ? 'nothing new starts' : 'no model call runs';
  return `tenant ${tenant} has spent ${formatUsd(spentMicroUsd)} on model calls today (${day}, UTC)${holds}, and the daily cost cap per tenant is ${formatUsd(capMicroUsd)} (ERRAND_TENANT_DAILY_COST_USD); ${refused} until 00:00 UTC`;
}

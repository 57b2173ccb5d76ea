import type { DelegationParent } from '../contracts/activities';
import type { DelegateRequest } from '../contracts/delegation';
import { runCommandMaxTimeoutMs } from '../contracts/limits/tools';
import type { ModelRoute } from '../contracts/model';
import { refuse, type PlanningRefusal } from '../contracts/planning-failure';
import type { SubagentInput } from '../contracts/subagent';
import { capDefinitionLimit } from '../domain/definition-limits';
import { forkRoute } from '../domain/fork-rules';
import { chooseMaxTurns, chooseModel, type ModelChoice } from '../domain/model-precedence';
import { childCap, chooseCaps, firstPromptRefusal } from '../domain/run-caps';
import { estimateMessageTokens } from '../domain/token-estimate';
import type { PlanContext } from './plan-context';
import { definitionFileOf, type PlannedSource } from './plan-source';

/** The child's model and the limits it runs under, each within what the operator and the parent allow. */
export interface PlannedLimits {
  route: ModelRoute;
  maxTurns: number;
  /** The definition's `settings.max_output_tokens`, lowered to the model's or operator's limit. */
  definitionMaxOutputTokens?: number;
  retry?: SubagentInput['retry'];
  tokenBudget?: number;
  timeBudgetMs?: number;
  costBudgetMicroUsd?: number;
  /** A fork's or a large `context`'s first prompt as estimated. */
  firstPrompt?: { tokens: number; costMicroUsd?: number; fork: boolean };
  warnings: string[];
}

/**
 * Chooses the child's model (SEMANTICS §3 precedence; a fork keeps the parent's route as it is: forkRefusal
 * turned away anything that would change it) and its turn, output, check-time and spending limits. A
 * request lowers the operator's limits, never raises them; a definition's are lowered with a warning.
 */
export function planLimits(request: DelegateRequest, parent: DelegationParent, context: PlanContext, source: PlannedSource): ({ ok: true } & PlannedLimits) | PlanningRefusal {
  const route = chooseRoute(request, parent, context, source);
  if (!route.ok) return route;
  const warnings = [...route.warnings];
  const definitionFile = source.snapshot ? definitionFileOf(source.snapshot) : undefined;
  const turns = planMaxTurns(request, parent, context, source, definitionFile);
  if (!turns.ok) return turns;
  if (turns.warning) warnings.push(turns.warning);
  let definitionMaxOutputTokens = source.settings.maxOutputTokens;
  const outputLimit = context.providers.find((choice) => choice.name === route.route.provider)?.maxOutputTokens?.[route.route.model] ?? context.configuredMaxOutputTokens;
  if (request.max_output_tokens === undefined && definitionMaxOutputTokens !== undefined && outputLimit !== undefined) {
    const setting = context.configuredMaxOutputTokens === outputLimit ? 'ERRAND_MAX_OUTPUT_TOKENS' : `maxOutputTokens of model ${route.route.model} in the provider configuration`;
    const capped = capDefinitionLimit({ field: 'settings.max_output_tokens', ...(definitionFile ? { file: definitionFile } : {}), asked: definitionMaxOutputTokens, limit: outputLimit, setting, unit: 'tokens' });
    definitionMaxOutputTokens = capped.value;
    if (capped.warning) warnings.push(capped.warning);
  }
  let retry = source.retry;
  if (retry) {
    // A check is a shell command like run_command: its time limit is run_command's at most.
    for (const [key, field] of [['timeoutSeconds', 'retry.timeout_seconds'], ['onFailureTimeoutSeconds', 'retry.on_failure_timeout_seconds']] as const) {
      const capped = capDefinitionLimit({ field, ...(definitionFile ? { file: definitionFile } : {}), asked: retry[key], limit: Math.floor(runCommandMaxTimeoutMs / 1_000), setting: 'the run_command time limit', unit: 'seconds' });
      retry = { ...retry, [key]: capped.value };
      if (capped.warning) warnings.push(capped.warning);
    }
  }
  const spending = planSpending(request, parent, context, source, route.route, definitionFile);
  if (!spending.ok) return spending;
  warnings.push(...spending.warnings);
  return {
    ok: true,
    route: route.route,
    maxTurns: turns.maxTurns,
    ...(definitionMaxOutputTokens !== undefined ? { definitionMaxOutputTokens } : {}),
    ...(retry ? { retry } : {}),
    ...(spending.tokenBudget !== undefined ? { tokenBudget: spending.tokenBudget } : {}),
    ...(spending.timeBudgetMs !== undefined ? { timeBudgetMs: spending.timeBudgetMs } : {}),
    ...(spending.costBudgetMicroUsd !== undefined ? { costBudgetMicroUsd: spending.costBudgetMicroUsd } : {}),
    ...(spending.firstPrompt ? { firstPrompt: spending.firstPrompt } : {}),
    warnings,
  };
}

function chooseRoute(request: DelegateRequest, parent: DelegationParent, context: PlanContext, source: PlannedSource): ModelChoice {
  if (request.fork && parent.route) return { ok: true, route: forkRoute(parent.route, request.temperature), warnings: [] };
  const { settings, snapshot, agentEffort } = source;
  return chooseModel({
    providers: context.providers,
    override: context.override,
    request: {
      ...(request.provider ? { provider: request.provider } : {}),
      ...(request.model ? { model: request.model } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.reasoning_effort !== undefined ? { reasoningEffort: request.reasoning_effort } : {}),
    },
    recipe: {
      ...(settings.provider ? { provider: settings.provider } : {}),
      ...(settings.model && snapshot?.definition.type !== 'agent' ? { model: settings.model } : {}),
      ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
      ...(settings.reasoningEffort !== undefined ? { reasoningEffort: settings.reasoningEffort } : {}),
    },
    ...(snapshot?.definition.type === 'agent' && settings.model ? { agentModel: settings.model } : {}),
    ...(agentEffort !== undefined ? { agentEffort } : {}),
    ...(context.configuredDefault ? { configuredDefault: context.configuredDefault } : {}),
    ...(parent.route ? { parent: parent.route } : {}),
  });
}

/** A request lowers the operator's turn limit, never raises it (SEMANTICS §5: a model asks like the API does); a definition's is lowered (§6). */
function planMaxTurns(request: DelegateRequest, parent: DelegationParent, context: PlanContext, source: PlannedSource, definitionFile: string | undefined): { ok: true; maxTurns: number; warning?: string } | PlanningRefusal {
  if (request.max_turns !== undefined && request.max_turns > context.configuredMaxTurns) {
    return refuse('max-turns-over-limit', 'max_turns', `max_turns ${request.max_turns} is above this server's limit of ${context.configuredMaxTurns} turns per subagent (ERRAND_SUBAGENT_MAX_TURNS); ask for at most ${context.configuredMaxTurns}, or leave max_turns out.`);
  }
  const own = source.settings.maxTurns;
  const parentRecipeMaxTurns = parent.recipe?.snapshot.definition.type === 'recipe' ? parent.recipe.snapshot.definition.recipe.settings?.max_turns ?? undefined : undefined;
  const maxTurns = chooseMaxTurns(request.max_turns, own, parentRecipeMaxTurns, context.configuredMaxTurns);
  if (request.max_turns !== undefined || (own ?? parentRecipeMaxTurns) === undefined) return { ok: true, maxTurns };
  const field = own !== undefined ? (source.snapshot?.definition.type === 'agent' ? 'maxTurns' : 'settings.max_turns') : "the session recipe's settings.max_turns";
  const file = own !== undefined ? definitionFile : parent.recipe ? definitionFileOf(parent.recipe.snapshot) : undefined;
  const capped = capDefinitionLimit({ field, ...(file ? { file } : {}), asked: maxTurns, limit: context.configuredMaxTurns, setting: 'ERRAND_SUBAGENT_MAX_TURNS', unit: 'turns' });
  return { ok: true, maxTurns: capped.value, ...(capped.warning ? { warning: capped.warning } : {}) };
}

/**
 * Caps (decision 0027): what the request or the definition asks for, within the operator's and what the
 * parent has left. A fork repeats the parent's whole conversation and a context sits in every prompt: their
 * first prompt is estimated before the child starts (SEMANTICS §6).
 */
interface PlannedSpending {
  ok: true;
  tokenBudget?: number | undefined;
  timeBudgetMs?: number;
  costBudgetMicroUsd?: number;
  firstPrompt?: { tokens: number; costMicroUsd?: number; fork: boolean };
  warnings: string[];
}

function planSpending(request: DelegateRequest, parent: DelegationParent, context: PlanContext, source: PlannedSource, route: ModelRoute, definitionFile: string | undefined): PlannedSpending | PlanningRefusal {
  const modelName = `${route.provider}/${route.model}`;
  const prices = context.providers.find((choice) => choice.name === route.provider)?.prices?.[route.model];
  const caps = chooseCaps({
    request: { timeBudgetSecs: request.time_budget, costBudgetUsd: request.cost_budget_usd },
    definition: { timeBudgetSecs: source.settings.timeBudgetSecs, costBudgetUsd: source.settings.costBudgetUsd, file: definitionFile },
    parent: { timeMs: parent.remainingTimeMs, costMicroUsd: parent.remainingCostMicroUsd },
    operator: context.caps ?? {},
    model: modelName,
    prices,
  });
  if (!caps.ok) return caps;
  const tokenBudget = childCap(request.token_budget, parent.remainingBudget);
  if (!request.fork && request.context === undefined) return { ...caps, tokenBudget };
  const ownTokens = [source.instructions, request.context, request.persona, source.prompt].reduce((sum, part) => sum + (part ? estimateMessageTokens({ role: 'user', content: part }) : 0), 0);
  const forkTokens = request.fork ? parent.conversationTokens : undefined;
  const refused = firstPromptRefusal(
    { ownTokens, forkTokens, fork: request.fork === true },
    { tokens: tokenBudget, costMicroUsd: caps.costBudgetMicroUsd },
    { name: modelName, prices },
  );
  // A fork's prompt is its conversation; another's grows with `context`.
  if (refused) return refuse('first-prompt-too-large', request.fork ? 'fork' : 'context', refused);
  const tokens = ownTokens + (forkTokens ?? 0);
  const firstPrompt = { tokens, ...(prices ? { costMicroUsd: Math.round(tokens * prices.input) } : {}), fork: request.fork === true };
  return { ...caps, tokenBudget, firstPrompt };
}

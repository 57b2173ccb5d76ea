import type { ModelRoute } from '../contracts/model';
import { refuse, type PlanningRefusal } from '../contracts/planning-failure';
import type { ModelPrices } from './model-cost';
import { suggestNames } from './name-suggestions';

/**
 * Provider / model / temperature / reasoning effort / max_turns precedence for a delegation (SEMANTICS §3,
 * §5 "Model routes"). Pure.
 */

/**
 * The output-token limit of a call to a model whose entry sets none (and no delegation or recipe does): the
 * configured default (`ERRAND_MAX_OUTPUT_TOKENS`, 8192), but never more than half the model's context window,
 * so the prompt (compacted to fit the other half) and the answer together fit it, as the strictest providers
 * require (OpenAI refuses a request whose prompt and `max_tokens` exceed the window).
 */
export function defaultOutputTokensFor(contextWindow: number, configuredDefault: number): number {
  return Math.max(1, Math.min(configuredDefault, Math.floor(contextWindow / 2)));
}

/** The reasoning efforts one model takes (its provider entry's `reasoningEfforts`), and its default. */
export interface ModelEfforts {
  efforts: readonly string[];
  default?: string;
}

/** A configured provider as precedence needs it: its name and allow-list. */
export interface ProviderChoice {
  name: string;
  models: readonly string[];
  defaultModel?: string;
  /** Reasoning efforts by model id; a model not listed takes none. */
  efforts?: Readonly<Record<string, ModelEfforts>>;
  /** Output-token limits by model id, where the model's entry sets one. */
  maxOutputTokens?: Readonly<Record<string, number>>;
  /** Prices by model id, where the model's entry sets them (cost caps and estimates need them). */
  prices?: Readonly<Record<string, ModelPrices>>;
}

/** Everything that may choose a delegation's model, from strongest to weakest. */
export interface ModelChoiceInputs {
  providers: readonly ProviderChoice[];
  /** `ERRAND_SUBAGENT_PROVIDER` / `ERRAND_SUBAGENT_MODEL`: the operator's override. */
  override: { provider?: string; model?: string };
  /** `delegate` fields (must be on the allow-list; an effort must be one the chosen model takes). */
  request: { provider?: string; model?: string; temperature?: number; reasoningEffort?: string };
  /** The delegated recipe's `settings`. */
  recipe: { provider?: string; model?: string; temperature?: number; reasoningEffort?: string };
  /** The delegated agent file's `model` (after alias mapping; `inherit` arrives as undefined). */
  agentModel?: string;
  /** The delegated agent file's `effort` (Claude Code's level): ranks where the recipe's effort does. */
  agentEffort?: string;
  /** The configured default route. */
  configuredDefault?: { provider: string; model: string };
  /** The delegating workflow's route; an MCP session has none (its client's model is not errand's to route). */
  parent?: ModelRoute;
}

/** The chosen route, warnings for choices that were skipped, or an error for the calling model. */
export type ModelChoice = { ok: true; route: ModelRoute; warnings: string[] } | PlanningRefusal;

/** How an operator configures model providers: said wherever a start fails for want of one. */
export const configureProvidersHint = 'Set ERRAND_PROVIDERS (a JSON list of providers, each with name, kind and models) and ERRAND_DEFAULT_MODEL (provider/model)';

/** Applies SEMANTICS §3: override > delegate > recipe settings > agent model > configured default > parent. */
export function chooseModel(inputs: ModelChoiceInputs): ModelChoice {
  const warnings: string[] = [];
  const known = (name: string | undefined) => inputs.providers.find((provider) => provider.name === name);
  const configured = inputs.providers.map((provider) => provider.name).join(', ') || '(none)';

  if (inputs.request.provider !== undefined && !known(inputs.request.provider)) {
    const message = `provider "${inputs.request.provider}" is not allowed; allowed providers: ${configured} (see list_subagent_models)`;
    return refuse('provider-not-allowed', 'provider', message, suggestNames(inputs.request.provider, inputs.providers.map((provider) => provider.name)));
  }
  let providerName = inputs.override.provider ?? inputs.request.provider;
  if (providerName === undefined && inputs.recipe.provider !== undefined) {
    if (known(inputs.recipe.provider)) providerName = inputs.recipe.provider;
    else warnings.push(`the recipe's provider "${inputs.recipe.provider}" is not configured here; it was not used`);
  }
  providerName ??= inputs.configuredDefault?.provider ?? inputs.parent?.provider;
  if (inputs.providers.length === 0) {
    return refuse('provider-not-configured', 'provider', `no usable provider: none is configured. ${configureProvidersHint}.`);
  }
  if (providerName === undefined) {
    return refuse('no-model', 'model', `no model could be chosen: no default model is configured and the delegating session has none of its own (an MCP session). Set ERRAND_DEFAULT_MODEL (provider/model), or name provider and model in the delegation (see list_subagent_models)`);
  }
  const provider = known(providerName);
  if (!provider) {
    return refuse('provider-not-configured', 'provider', `no usable provider: "${providerName}" is not configured (configured: ${configured}). Set ERRAND_DEFAULT_MODEL or configure providers.`);
  }

  if (inputs.request.model !== undefined && !inputs.override.model && !provider.models.includes(inputs.request.model)) {
    const message = `model "${inputs.request.model}" is not allowed for provider "${provider.name}"; allowed: ${provider.models.join(', ')} (see list_subagent_models)`;
    return refuse('model-not-allowed', 'model', message, suggestNames(inputs.request.model, provider.models));
  }
  const candidates: Array<{ model: string | undefined; what: string; strict: boolean }> = [
    { model: inputs.override.model, what: 'ERRAND_SUBAGENT_MODEL', strict: true },
    { model: inputs.request.model, what: 'delegate model', strict: true },
    { model: inputs.recipe.model, what: "the recipe's model", strict: false },
    { model: inputs.agentModel, what: "the agent's model", strict: false },
    { model: inputs.configuredDefault?.provider === provider.name ? inputs.configuredDefault.model : undefined, what: 'the configured default model', strict: false },
    { model: inputs.parent?.provider === provider.name ? inputs.parent.model : undefined, what: "the parent's model", strict: false },
    { model: provider.defaultModel, what: `provider ${provider.name}'s defaultModel`, strict: false },
  ];
  for (const candidate of candidates) {
    if (candidate.model === undefined) continue;
    if (provider.models.includes(candidate.model)) {
      const temperature = inputs.request.temperature ?? inputs.recipe.temperature ?? inputs.parent?.temperature;
      const route: ModelRoute = { provider: provider.name, model: candidate.model, ...(temperature !== undefined ? { temperature } : {}) };
      const effort = chooseReasoningEffort({ route, efforts: provider.efforts?.[candidate.model], request: inputs.request.reasoningEffort, recipe: inputs.recipe.reasoningEffort, ...(inputs.agentEffort !== undefined ? { agent: inputs.agentEffort } : {}), ...(inputs.parent ? { parent: inputs.parent } : {}) });
      if (!effort.ok) return effort;
      warnings.push(...effort.warnings);
      return { ok: true, route: { ...route, ...(effort.effort !== undefined ? { reasoningEffort: effort.effort } : {}) }, warnings };
    }
    if (candidate.strict) {
      // The operator's override names the setting; the request's, its field.
      const field = candidate.what === 'ERRAND_SUBAGENT_MODEL' ? 'ERRAND_SUBAGENT_MODEL' : 'model';
      return refuse('model-not-allowed', field, `${candidate.what} "${candidate.model}" is not one of provider "${provider.name}"'s models (${provider.models.join(', ')})`, suggestNames(candidate.model, provider.models));
    }
    warnings.push(`${candidate.what} "${candidate.model}" is not one of provider "${provider.name}"'s models; it was not used`);
  }
  return refuse('no-model', 'model', `no model could be chosen for provider "${provider.name}": set ERRAND_DEFAULT_MODEL (e.g. "${provider.name}/${provider.models[0] ?? 'model'}") or the provider's defaultModel`);
}

/** What {@link chooseReasoningEffort} weighs. */
export interface EffortChoiceInputs {
  /** The chosen route (provider and model). */
  route: Pick<ModelRoute, 'provider' | 'model'>;
  /** What the chosen model takes; undefined: no efforts. */
  efforts: ModelEfforts | undefined;
  /** `delegate`'s `reasoning_effort`. */
  request?: string;
  /** The delegated recipe's `settings.reasoning_effort`. */
  recipe?: string;
  /** The delegated agent file's `effort` (an agent has no recipe settings, so the two never meet). */
  agent?: string;
  /** The delegating workflow's route (its effort is kept only on the same provider and model); none for an MCP session. */
  parent?: ModelRoute;
}

/** The chosen effort (none: send none), or an error for the calling model. */
export type EffortChoice = { ok: true; effort?: string; warnings: string[] } | PlanningRefusal;

/** "low, medium (default), high", or what to say when a model takes none. */
export function describeEfforts(efforts: ModelEfforts | undefined): string {
  const list = efforts?.efforts ?? [];
  if (list.length === 0) return 'none (its provider entry lists no reasoningEfforts)';
  return list.map((effort) => (effort === efforts?.default ? `${effort} (default)` : effort)).join(', ');
}

/**
 * Reasoning effort precedence (SEMANTICS §5 "Model routes"): `delegate` > the recipe's settings > the
 * parent's effort when the child keeps the parent's provider and model > the model's default > none.
 * A route that changes provider or model without naming an effort gets the new model's default, never the
 * parent's: another model may not take that effort at all. An effort named by `delegate` that the model
 * does not take is an error naming the valid ones; a recipe's is a warning and is not used (a recipe is
 * written once and runs on whatever model the operator and the caller choose, like its goose_model).
 * An agent file's `effort` ranks where a recipe's does; one the model does not take is mapped to the
 * nearest it takes on {@link effortScale}, with a warning (SEMANTICS §6), since Claude Code's levels are
 * a scale of their own that a provider's names only partly share.
 */
export function chooseReasoningEffort(inputs: EffortChoiceInputs): EffortChoice {
  const valid = inputs.efforts?.efforts ?? [];
  const name = `${inputs.route.provider}/${inputs.route.model}`;
  const warnings: string[] = [];
  if (inputs.request !== undefined) {
    if (valid.includes(inputs.request)) return { ok: true, effort: inputs.request, warnings };
    return refuse(
      'effort-not-allowed',
      'reasoning_effort',
      valid.length === 0
        ? `reasoning_effort "${inputs.request}" cannot be used: model ${name} takes no reasoning effort (its provider entry lists no reasoningEfforts); leave reasoning_effort out (see list_subagent_models)`
        : `reasoning_effort "${inputs.request}" is not one model ${name} takes; valid efforts: ${describeEfforts(inputs.efforts)} (see list_subagent_models("${inputs.route.provider}", "${inputs.route.model}"))`,
    );
  }
  if (inputs.recipe !== undefined) {
    if (valid.includes(inputs.recipe)) return { ok: true, effort: inputs.recipe, warnings };
    warnings.push(`the recipe's reasoning_effort "${inputs.recipe}" is not one model ${name} takes (valid: ${describeEfforts(inputs.efforts)}); it was not used`);
  }
  if (inputs.agent !== undefined) {
    if (valid.includes(inputs.agent)) return { ok: true, effort: inputs.agent, warnings };
    const nearest = nearestEffort(inputs.agent, valid);
    if (nearest !== undefined) {
      warnings.push(`the agent's effort "${inputs.agent}" is not one model ${name} takes (valid: ${describeEfforts(inputs.efforts)}); the nearest, "${nearest}", is used`);
      return { ok: true, effort: nearest, warnings };
    }
    warnings.push(`the agent's effort "${inputs.agent}" cannot be used: model ${name} takes ${valid.length === 0 ? 'no reasoning effort' : `no effort on the low-to-max scale (valid: ${describeEfforts(inputs.efforts)})`}; it was not used`);
  }
  const sameModel = inputs.parent?.provider === inputs.route.provider && inputs.parent.model === inputs.route.model;
  if (sameModel && inputs.parent?.reasoningEffort !== undefined && valid.includes(inputs.parent.reasoningEffort)) {
    return { ok: true, effort: inputs.parent.reasoningEffort, warnings };
  }
  return { ok: true, ...(inputs.efforts?.default !== undefined ? { effort: inputs.efforts.default } : {}), warnings };
}

/**
 * Effort names from least to most reasoning: Claude Code's levels (`low` … `max`) with the lower names
 * OpenAI-compatible providers use (`none`, `minimal`). What "nearest" is measured on.
 */
export const effortScale = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;

/**
 * The effort of `offered` nearest to `wanted` on {@link effortScale}; between two as near, the lower (it
 * never spends more than the author asked for). Undefined when `wanted` or every offered effort is off
 * the scale.
 */
export function nearestEffort(wanted: string, offered: readonly string[]): string | undefined {
  const scale: readonly string[] = effortScale;
  const target = scale.indexOf(wanted);
  if (target === -1) return undefined;
  let best: { effort: string; distance: number; rank: number } | undefined;
  for (const effort of offered) {
    const rank = scale.indexOf(effort);
    if (rank === -1) continue;
    const distance = Math.abs(rank - target);
    if (best === undefined || distance < best.distance || (distance === best.distance && rank < best.rank)) best = { effort, distance, rank };
  }
  return best?.effort;
}

/** max_turns precedence: delegate > delegated recipe (or agent `maxTurns`) > parent recipe > configured (ERRAND_SUBAGENT_MAX_TURNS, default 25). */
export function chooseMaxTurns(request: number | undefined, recipe: number | undefined, parentRecipe: number | undefined, configured: number): number {
  return request ?? recipe ?? parentRecipe ?? configured;
}

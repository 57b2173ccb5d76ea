import type { ModelRoute } from '../contracts/model';

/**
 * Provider / model / temperature / max_turns precedence for a delegation (SEMANTICS §3). Pure.
 */

/** A configured provider as precedence needs it: its name and allow-list. */
export interface ProviderChoice {
  name: string;
  models: readonly string[];
  defaultModel?: string;
}

/** Everything that may choose a delegation's model, from strongest to weakest. */
export interface ModelChoiceInputs {
  providers: readonly ProviderChoice[];
  /** `ERRAND_SUBAGENT_PROVIDER` / `ERRAND_SUBAGENT_MODEL`: the operator's override. */
  override: { provider?: string; model?: string };
  /** `delegate` fields (must be on the allow-list). */
  request: { provider?: string; model?: string; temperature?: number };
  /** The delegated recipe's `settings`. */
  recipe: { provider?: string; model?: string; temperature?: number };
  /** The delegated agent file's `model` (after alias mapping; `inherit` arrives as undefined). */
  agentModel?: string;
  /** The configured default route. */
  configuredDefault?: { provider: string; model: string };
  /** The delegating workflow's route. */
  parent: ModelRoute;
}

/** The chosen route, warnings for choices that were skipped, or an error for the calling model. */
export type ModelChoice = { ok: true; route: ModelRoute; warnings: string[] } | { ok: false; message: string };

/** Applies SEMANTICS §3: override > delegate > recipe settings > agent model > configured default > parent. */
export function chooseModel(inputs: ModelChoiceInputs): ModelChoice {
  const warnings: string[] = [];
  const known = (name: string | undefined) => inputs.providers.find((provider) => provider.name === name);
  const configured = inputs.providers.map((provider) => provider.name).join(', ') || '(none)';

  if (inputs.request.provider !== undefined && !known(inputs.request.provider)) {
    return { ok: false, message: `provider "${inputs.request.provider}" is not allowed; allowed providers: ${configured} (see list_subagent_models)` };
  }
  let providerName = inputs.override.provider ?? inputs.request.provider;
  if (providerName === undefined && inputs.recipe.provider !== undefined) {
    if (known(inputs.recipe.provider)) providerName = inputs.recipe.provider;
    else warnings.push(`the recipe's provider "${inputs.recipe.provider}" is not configured here; it was not used`);
  }
  providerName ??= inputs.configuredDefault?.provider ?? inputs.parent.provider;
  const provider = known(providerName);
  if (!provider) {
    return { ok: false, message: `no usable provider: "${providerName}" is not configured (configured: ${configured}). Set ERRAND_DEFAULT_MODEL or configure providers.` };
  }

  if (inputs.request.model !== undefined && !inputs.override.model && !provider.models.includes(inputs.request.model)) {
    return { ok: false, message: `model "${inputs.request.model}" is not allowed for provider "${provider.name}"; allowed: ${provider.models.join(', ')} (see list_subagent_models)` };
  }
  const candidates: Array<{ model: string | undefined; what: string; strict: boolean }> = [
    { model: inputs.override.model, what: 'ERRAND_SUBAGENT_MODEL', strict: true },
    { model: inputs.request.model, what: 'delegate model', strict: true },
    { model: inputs.recipe.model, what: "the recipe's model", strict: false },
    { model: inputs.agentModel, what: "the agent's model", strict: false },
    { model: inputs.configuredDefault?.provider === provider.name ? inputs.configuredDefault.model : undefined, what: 'the configured default model', strict: false },
    { model: inputs.parent.provider === provider.name ? inputs.parent.model : undefined, what: "the parent's model", strict: false },
    { model: provider.defaultModel, what: `provider ${provider.name}'s defaultModel`, strict: false },
  ];
  for (const candidate of candidates) {
    if (candidate.model === undefined) continue;
    if (provider.models.includes(candidate.model)) {
      const temperature = inputs.request.temperature ?? inputs.recipe.temperature ?? inputs.parent.temperature;
      return { ok: true, route: { provider: provider.name, model: candidate.model, ...(temperature !== undefined ? { temperature } : {}) }, warnings };
    }
    if (candidate.strict) {
      return { ok: false, message: `${candidate.what} "${candidate.model}" is not one of provider "${provider.name}"'s models (${provider.models.join(', ')})` };
    }
    warnings.push(`${candidate.what} "${candidate.model}" is not one of provider "${provider.name}"'s models; it was not used`);
  }
  return {
    ok: false,
    message: `no model could be chosen for provider "${provider.name}": set ERRAND_DEFAULT_MODEL (e.g. "${provider.name}/${provider.models[0] ?? 'model'}") or the provider's defaultModel`,
  };
}

/** max_turns precedence: delegate > delegated recipe (or agent `maxTurns`) > parent recipe > configured (ERRAND_SUBAGENT_MAX_TURNS, default 25). */
export function chooseMaxTurns(request: number | undefined, recipe: number | undefined, parentRecipe: number | undefined, configured: number): number {
  return request ?? recipe ?? parentRecipe ?? configured;
}

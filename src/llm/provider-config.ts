import { z } from 'zod';
import type { ModelRoute } from '../contracts/model';
import { anthropicThinkingBudgets, defaultContextWindow, defaultMaxOutputTokens } from '../contracts/limits/llm';
import type { ModelEfforts, ProviderChoice } from '../domain/model-precedence';
import type { CatalogModel, CatalogProvider } from '../domain/route-discovery';
import { modelPricesSchema } from './model-prices';
import { ProviderKind } from './model-port';

/**
 * Configuration of the model providers errand may call (the registry built from it: model-registry.ts). Strict (DESIGN.md convention 6): an unknown key
 * is an error, so a typo does not silently fall back to a default. API keys never live here — only the
 * name of the environment variable that holds one.
 */

const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

// A refinement, not `.int()`: zod reports a failed `.int()` as a type mismatch, and a union of a string and
// an entry would then hide it behind its own generic message instead of naming the field.
const positiveTokens = (field: string, example: number) =>
  z
    .number({ error: `${field} must be a whole number of tokens, e.g. ${example}` })
    .refine(Number.isInteger, `${field} must be a whole number of tokens, e.g. ${example}`)
    .refine((value) => value > 0, `${field} must be positive, e.g. ${example}`);

/**
 * Schema of a model entry with settings: `{id, contextWindow?, maxOutputTokens?, reasoningEfforts?,
 * defaultReasoningEffort?, prices?}`. A plain string entry is the same as `{id}`.
 */
export const modelEntrySchema = z
  .object({
    /** The model id at the provider. */
    id: z.string({ error: 'id must be the model id at the provider, e.g. "gpt-4.1-mini"' }).min(1, 'id must not be empty'),
    /** Tokens of prompt plus answer the model accepts. */
    contextWindow: positiveTokens('contextWindow', defaultContextWindow).optional(),
    /** Output-token limit of one call to this model (below a delegation's, a recipe's and an agent's). */
    maxOutputTokens: positiveTokens('maxOutputTokens', defaultMaxOutputTokens).optional(),
    /** Reasoning efforts the model takes, e.g. ["low", "medium", "high"]. */
    reasoningEfforts: z.array(z.string().min(1, 'reasoningEfforts must not contain an empty name')).optional(),
    /** The effort sent when a delegation names none; must be one of `reasoningEfforts`. */
    defaultReasoningEffort: z.string().min(1).optional(),
    /** What a call costs: US dollars per million tokens (SEMANTICS §6 "Spend"); without it calls count as unpriced. */
    prices: modelPricesSchema.optional(),
  })
  .strict()
  .superRefine((entry, context) => {
    if (entry.defaultReasoningEffort !== undefined && !(entry.reasoningEfforts ?? []).includes(entry.defaultReasoningEffort)) {
      context.addIssue({
        code: 'custom',
        path: ['defaultReasoningEffort'],
        message: `defaultReasoningEffort "${entry.defaultReasoningEffort}" is not in reasoningEfforts (${(entry.reasoningEfforts ?? []).join(', ') || 'none are listed'})`,
      });
    }
    if (entry.contextWindow !== undefined && entry.maxOutputTokens !== undefined && entry.maxOutputTokens >= entry.contextWindow) {
      context.addIssue({
        code: 'custom',
        path: ['maxOutputTokens'],
        message: `maxOutputTokens (${entry.maxOutputTokens}) must be smaller than contextWindow (${entry.contextWindow}), or nothing of the prompt would fit`,
      });
    }
  });

/** A model entry with settings. */
export type ModelEntry = z.infer<typeof modelEntrySchema>;

/** The model id of an entry (a plain string is its own id). */
export function modelEntryId(entry: string | ModelEntry): string {
  return typeof entry === 'string' ? entry : entry.id;
}

/** The model ids of a provider's allow-list, in configured order. */
export function modelIds(config: Pick<ProviderConfig, 'models'>): string[] {
  return config.models.map(modelEntryId);
}

/**
 * What errand knows about one model entry, with its defaults applied (the context window): what
 * `ModelRegistry.modelInfo`, `list_subagent_models` and `GET /v1/models` all say about it.
 */
export function catalogModel(entry: string | ModelEntry): CatalogModel {
  if (typeof entry === 'string') return { id: entry, contextWindow: defaultContextWindow, reasoningEfforts: [] };
  return {
    id: entry.id,
    contextWindow: entry.contextWindow ?? defaultContextWindow,
    ...(entry.maxOutputTokens === undefined ? {} : { maxOutputTokens: entry.maxOutputTokens }),
    reasoningEfforts: [...(entry.reasoningEfforts ?? [])],
    ...(entry.defaultReasoningEffort === undefined ? {} : { defaultReasoningEffort: entry.defaultReasoningEffort }),
    ...(entry.prices === undefined ? {} : { prices: { ...entry.prices } }),
  };
}

/** The route catalog of a provider list: every allowed model with its settings (SEMANTICS §5 "Model routes"). */
export function routeCatalog(configs: readonly ProviderConfig[]): CatalogProvider[] {
  return configs.map((config) => ({
    name: config.name,
    kind: config.kind,
    ...(config.defaultModel === undefined ? {} : { defaultModel: config.defaultModel }),
    models: config.models.map(catalogModel),
  }));
}

/** The reasoning efforts of one configured model (none for a plain id or an entry that lists none). */
export function modelEfforts(config: Pick<ProviderConfig, 'models'>, modelId: string): ModelEfforts | undefined {
  const entry = config.models.find((candidate) => modelEntryId(candidate) === modelId);
  if (entry === undefined || typeof entry === 'string' || (entry.reasoningEfforts ?? []).length === 0) return undefined;
  return { efforts: [...(entry.reasoningEfforts ?? [])], ...(entry.defaultReasoningEffort !== undefined ? { default: entry.defaultReasoningEffort } : {}) };
}

/** The providers as model precedence weighs them: names, allow-lists, default models and efforts. */
export function providerChoices(configs: readonly ProviderConfig[]): ProviderChoice[] {
  return configs.map((config) => {
    const efforts = Object.fromEntries(modelIds(config).flatMap((id) => {
      const found = modelEfforts(config, id);
      return found ? [[id, found] as const] : [];
    }));
    // The operator's output-token limit of each model whose entry sets one (a definition may not exceed it).
    const outputLimits = Object.fromEntries(config.models.flatMap((entry) => (typeof entry !== 'string' && entry.maxOutputTokens !== undefined ? [[entry.id, entry.maxOutputTokens] as const] : [])));
    const prices = Object.fromEntries(config.models.flatMap((entry) => (typeof entry !== 'string' && entry.prices !== undefined ? [[entry.id, { ...entry.prices }] as const] : [])));
    return {
      name: config.name,
      models: modelIds(config),
      ...(config.defaultModel ? { defaultModel: config.defaultModel } : {}),
      ...(Object.keys(efforts).length > 0 ? { efforts } : {}),
      ...(Object.keys(outputLimits).length > 0 ? { maxOutputTokens: outputLimits } : {}),
      ...(Object.keys(prices).length > 0 ? { prices } : {}),
    };
  });
}

/**
 * A configured route with its model's default reasoning effort (a session's route: the configured default
 * model, which thinks as hard as its entry says unless something names an effort).
 */
export function withDefaultEffort(configs: readonly ProviderConfig[], route: ModelRoute): ModelRoute {
  if (route.reasoningEffort !== undefined) return route;
  const config = configs.find((candidate) => candidate.name === route.provider);
  const effort = config ? modelEfforts(config, route.model)?.default : undefined;
  return effort === undefined ? route : { ...route, reasoningEffort: effort };
}

/** Schema of one provider's configuration. */
export const providerConfigSchema = z
  .object({
    /** The provider name that model routes, recipes and `delegate` use. */
    name: z.string().min(1, 'name must not be empty'),
    kind: z.enum([ProviderKind.openaiCompatible, ProviderKind.anthropic, ProviderKind.scripted], {
      error: `kind must be one of ${ProviderKind.openaiCompatible}, ${ProviderKind.anthropic}, ${ProviderKind.scripted}`,
    }),
    /** Base URL including the API version (`…/v1`). Required for openai-compatible. */
    baseUrl: z.url({ protocol: /^https?$/, error: 'baseUrl must be an http(s) URL, e.g. https://api.openai.com/v1' }).optional(),
    /** Name of the environment variable holding the API key (the key itself never goes in config). */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'apiKeyEnv must be the NAME of an environment variable (e.g. OPENAI_API_KEY), not the key itself')
      .optional(),
    /** Extra HTTP headers sent with every request (e.g. OpenRouter's HTTP-Referer). */
    headers: z.record(z.string().regex(headerName, 'header names must be HTTP tokens'), z.string()).optional(),
    /**
     * The models a route may name at this provider (allow-list): model ids, or entries with settings
     * (`{id, contextWindow?, maxOutputTokens?, reasoningEfforts?, defaultReasoningEffort?, prices?}`).
     */
    models: z
      .array(z.union([z.string().min(1, 'a model id must not be empty'), modelEntrySchema], { error: 'each model must be a model id or {id, contextWindow?, maxOutputTokens?, reasoningEfforts?, defaultReasoningEffort?, prices?}' }))
      .min(1, 'models must list at least one model id (the allow-list)'),
    /** The model used when a route gives none; must be one of `models`. */
    defaultModel: z.string().min(1).optional(),
    /** Time limit of one HTTP request in milliseconds. */
    requestTimeoutMs: z.number().int().positive().optional(),
  })
  .strict()
  .superRefine((config, context) => {
    const ids = config.models.map(modelEntryId);
    if (config.defaultModel !== undefined && !ids.includes(config.defaultModel)) {
      context.addIssue({
        code: 'custom',
        path: ['defaultModel'],
        message: `defaultModel "${config.defaultModel}" is not in models (${ids.join(', ')})`,
      });
    }
    ids.forEach((id, index) => {
      if (ids.indexOf(id) !== index) context.addIssue({ code: 'custom', path: ['models', index], message: `model "${id}" is listed twice` });
    });
    if (config.kind === ProviderKind.anthropic) {
      config.models.forEach((entry, index) => {
        if (typeof entry === 'string') return;
        (entry.reasoningEfforts ?? []).forEach((effort, effortIndex) => {
          if (!Object.hasOwn(anthropicThinkingBudgets, effort)) {
            context.addIssue({
              code: 'custom',
              path: ['models', index, 'reasoningEfforts', effortIndex],
              message: `reasoning effort "${effort}" has no thinking budget for kind anthropic; use ${Object.keys(anthropicThinkingBudgets).join(', ')}`,
            });
          }
        });
      });
    }
    if (config.kind === ProviderKind.openaiCompatible && config.baseUrl === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['baseUrl'],
        message: 'baseUrl is required for kind openai-compatible (e.g. https://api.openai.com/v1, http://localhost:11434/v1 for Ollama)',
      });
    }
    if (config.kind === ProviderKind.scripted && (config.baseUrl !== undefined || config.apiKeyEnv !== undefined)) {
      context.addIssue({ code: 'custom', path: ['kind'], message: 'a scripted provider takes no baseUrl or apiKeyEnv' });
    }
  });

/** One provider's configuration. */
export type ProviderConfig = z.infer<typeof providerConfigSchema>;

/** Schema of the provider list: names are unique. */
export const providerConfigListSchema = z.array(providerConfigSchema).superRefine((providers, context) => {
  const seen = new Set<string>();
  providers.forEach((provider, index) => {
    if (seen.has(provider.name)) {
      context.addIssue({ code: 'custom', path: [index, 'name'], message: `provider name "${provider.name}" is configured twice` });
    }
    seen.add(provider.name);
  });
});

/**
 * Parses a provider list from untrusted input (a config file, an env var).
 *
 * @param where names the setting, e.g. `ERRAND_PROVIDERS` or `errand.config.yaml: providers`
 */
export function parseProviderConfigs(value: unknown, where: string): ProviderConfig[] {
  const parsed = providerConfigListSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${where}[${issue.path.join('.')}]: ${issue.message}`);
    throw new Error(`invalid provider configuration:\n  ${problems.join('\n  ')}`);
  }
  return parsed.data;
}

/** Environment variable an Anthropic provider reads its key from when `apiKeyEnv` is not set. */
export const defaultAnthropicApiKeyEnv = 'ANTHROPIC_API_KEY';

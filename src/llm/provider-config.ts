import { z } from 'zod';
import type { ModelRoute } from '../contracts/model';
import { defaultModelRequestTimeoutMs } from '../contracts/limits';
import type { AnthropicSettings } from './anthropic-adapter';
import { modelNotConfiguredFailure } from './model-failures';
import { ProviderKind, type ChatModel, type ModelRegistry, type ProviderInfo } from './model-port';
import type { OpenAICompatibleSettings } from './openai-compatible-adapter';

/**
 * Configuration of the model providers errand may call, and the registry built from it. Strict (DESIGN.md convention 6): an unknown key
 * is an error, so a typo does not silently fall back to a default. API keys never live here — only the
 * name of the environment variable that holds one.
 */

const headerName = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

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
    /** The models a route may name at this provider (allow-list). */
    models: z.array(z.string().min(1)).min(1, 'models must list at least one model id (the allow-list)'),
    /** The model used when a route gives none; must be one of `models`. */
    defaultModel: z.string().min(1).optional(),
    /** Time limit of one HTTP request in milliseconds. */
    requestTimeoutMs: z.number().int().positive().optional(),
  })
  .strict()
  .superRefine((config, context) => {
    if (config.defaultModel !== undefined && !config.models.includes(config.defaultModel)) {
      context.addIssue({
        code: 'custom',
        path: ['defaultModel'],
        message: `defaultModel "${config.defaultModel}" is not in models (${config.models.join(', ')})`,
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

// ---- the registry ------------------------------------------------------------------------------

/** Inputs of `createModelRegistry` besides the provider list. */
export interface ModelRegistryOptions {
  /** The environment API keys are read from (named by `apiKeyEnv`); usually `process.env`. */
  env: Record<string, string | undefined>;
  /** In-process models for providers of kind `scripted`, by provider name. */
  scripted?: Record<string, ChatModel>;
}

/** Environment variable an Anthropic provider reads its key from when `apiKeyEnv` is not set. */
export const defaultAnthropicApiKeyEnv = 'ANTHROPIC_API_KEY';

interface ConfiguredProvider {
  info: ProviderInfo;
  modelFor: (modelId: string) => ChatModel;
}

/**
 * Models of one provider whose adapter module (and with it the vendor's AI SDK) is loaded at the first
 * model call, not when configuration is read: the CLI, the API and every process that only reads the
 * provider list would otherwise spend a few hundred ms loading SDKs they never call.
 */
function lazyModels(load: () => Promise<(modelId: string) => ChatModel>): (modelId: string) => ChatModel {
  let factory: Promise<(modelId: string) => ChatModel> | undefined;
  return (modelId) => {
    let model: Promise<ChatModel> | undefined;
    return {
      async generate(request, options) {
        model ??= (factory ??= load()).then((create) => create(modelId));
        return (await model).generate(request, options);
      },
    };
  };
}

/**
 * Builds the model registry from provider configuration. Everything that can be checked without a
 * network call is checked here, once, so a worker with a broken configuration fails at start with a
 * message naming the setting, not at its first model call:
 * the list is valid (names unique, default models allowed), every `apiKeyEnv` variable is set, and
 * every `scripted` provider has a model supplied.
 */
export function createModelRegistry(providers: ProviderConfig[], options: ModelRegistryOptions): ModelRegistry {
  const checked = providerConfigListSchema.safeParse(providers);
  if (!checked.success) {
    const problems = checked.error.issues.map((issue) => `providers[${issue.path.join('.')}]: ${issue.message}`);
    throw modelNotConfiguredFailure(`invalid provider configuration: ${problems.join('; ')}`);
  }
  const configured = new Map<string, ConfiguredProvider>();
  for (const config of checked.data) configured.set(config.name, configureProvider(config, options));
  // Adapters are cheap, but one ChatModel per route keeps object identity stable for callers that cache.
  const resolved = new Map<string, ChatModel>();

  const describeConfigured = (): string =>
    configured.size === 0
      ? 'no providers are configured'
      : `configured: ${[...configured.values()].map(({ info }) => `${info.name} (${info.models.join(', ')})`).join('; ')}`;

  return {
    resolve(route: ModelRoute): ChatModel {
      const provider = configured.get(route.provider);
      if (provider === undefined) {
        throw modelNotConfiguredFailure(`model provider "${route.provider}" is not configured; ${describeConfigured()}`);
      }
      if (!provider.info.models.includes(route.model)) {
        throw modelNotConfiguredFailure(
          `model "${route.model}" is not allowed for provider "${route.provider}"; allowed: ${provider.info.models.join(', ')}`,
        );
      }
      const key = `${route.provider}\u0000${route.model}`;
      let model = resolved.get(key);
      if (model === undefined) {
        model = provider.modelFor(route.model);
        resolved.set(key, model);
      }
      return model;
    },
    providers(): ProviderInfo[] {
      return [...configured.values()].map(({ info }) => ({ ...info, models: [...info.models] }));
    },
  };
}

function configureProvider(config: ProviderConfig, options: ModelRegistryOptions): ConfiguredProvider {
  const info: ProviderInfo = {
    name: config.name,
    kind: config.kind,
    models: [...config.models],
    ...(config.defaultModel === undefined ? {} : { defaultModel: config.defaultModel }),
  };
  const requestTimeoutMs = config.requestTimeoutMs ?? defaultModelRequestTimeoutMs;
  const headers = config.headers === undefined ? {} : { headers: config.headers };

  switch (config.kind) {
    case ProviderKind.scripted: {
      const model = options.scripted?.[config.name];
      if (model === undefined) {
        const supplied = Object.keys(options.scripted ?? {});
        throw modelNotConfiguredFailure(
          `provider "${config.name}" is of kind scripted, but no scripted model named "${config.name}" was supplied` +
            (supplied.length === 0 ? ' (none were)' : ` (supplied: ${supplied.join(', ')})`),
        );
      }
      return { info, modelFor: () => model };
    }
    case ProviderKind.openaiCompatible: {
      const apiKey = config.apiKeyEnv === undefined ? undefined : readApiKey(config, config.apiKeyEnv, options.env);
      // The schema requires baseUrl for this kind; the check keeps the type narrow without a cast.
      if (config.baseUrl === undefined) throw modelNotConfiguredFailure(`provider "${config.name}": baseUrl is required for kind openai-compatible`);
      const settings: OpenAICompatibleSettings = {
        name: config.name,
        baseUrl: config.baseUrl,
        requestTimeoutMs,
        ...(apiKey === undefined ? {} : { apiKey }),
        ...headers,
      };
      return { info, modelFor: lazyModels(async () => (await import('./openai-compatible-adapter.js')).createOpenAICompatibleModels(settings)) };
    }
    case ProviderKind.anthropic: {
      const apiKey = readApiKey(config, config.apiKeyEnv ?? defaultAnthropicApiKeyEnv, options.env);
      const settings: AnthropicSettings = {
        name: config.name,
        apiKey,
        requestTimeoutMs,
        ...(config.baseUrl === undefined ? {} : { baseUrl: config.baseUrl }),
        ...headers,
      };
      return { info, modelFor: lazyModels(async () => (await import('./anthropic-adapter.js')).createAnthropicModels(settings)) };
    }
  }
}

function readApiKey(config: ProviderConfig, variable: string, env: Record<string, string | undefined>): string {
  const value = env[variable];
  if (value === undefined || value.trim() === '') {
    throw modelNotConfiguredFailure(
      `provider "${config.name}" needs an API key in the environment variable ${variable} (named by its apiKeyEnv setting${
        config.apiKeyEnv === undefined ? `, default ${variable}` : ''
      }), but ${variable} is not set`,
    );
  }
  return value.trim();
}

import type { ModelRoute } from '../contracts/model';
import { defaultModelRequestTimeoutMs } from '../contracts/limits/llm';
import type { AnthropicSettings } from './anthropic-adapter';
import { modelNotConfiguredFailure } from './model-failures';
import { pricedModel } from './model-prices';
import { ProviderKind, type ChatModel, type ModelInfo, type ModelRegistry, type ProviderInfo } from './model-port';
import type { OpenAICompatibleSettings } from './openai-compatible-adapter';
import type { AnswerLimits } from './sdk-chat-model';
import { catalogModel, defaultAnthropicApiKeyEnv, modelIds, providerConfigListSchema, type ModelEntry, type ProviderConfig } from './provider-config';

/**
 * The model registry built from the providers' configuration (provider-config.ts): each provider's models,
 * their adapters loaded at the first call, every key and scripted model checked at start.
 */

// ---- the registry ------------------------------------------------------------------------------

/** Inputs of `createModelRegistry` besides the provider list. */
export interface ModelRegistryOptions {
  /** The environment API keys are read from (named by `apiKeyEnv`); usually `process.env`. */
  env: Record<string, string | undefined>;
  /** In-process models for providers of kind `scripted`, by provider name. */
  scripted?: Record<string, ChatModel>;
  /** errand's caps on one answer of an HTTP provider (`ERRAND_MODEL_ANSWER_MAX_BYTES`, `ERRAND_MODEL_ANSWER_MAX_MS`). */
  answerLimits?: AnswerLimits;
}

interface ConfiguredProvider {
  info: ProviderInfo;
  /** Settings of the models listed as entries, by id. */
  entries: Map<string, ModelEntry>;
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

  const allowedProvider = (route: ModelRoute): ConfiguredProvider => {
    const provider = configured.get(route.provider);
    if (provider === undefined) {
      throw modelNotConfiguredFailure(`model provider "${route.provider}" is not configured; ${describeConfigured()}`);
    }
    if (!provider.info.models.includes(route.model)) {
      throw modelNotConfiguredFailure(
        `model "${route.model}" is not allowed for provider "${route.provider}"; allowed: ${provider.info.models.join(', ')}`,
      );
    }
    return provider;
  };

  return {
    modelInfo(route: ModelRoute): ModelInfo {
      const provider = allowedProvider(route);
      const { id, ...settings } = catalogModel(provider.entries.get(route.model) ?? route.model);
      return { provider: provider.info.name, model: id, kind: provider.info.kind, ...settings, reasoningEfforts: [...settings.reasoningEfforts] };
    },
    resolve(route: ModelRoute): ChatModel {
      const provider = allowedProvider(route);
      const key = `${route.provider}\u0000${route.model}`;
      let model = resolved.get(key);
      if (model === undefined) {
        model = pricedModel(provider.modelFor(route.model), provider.entries.get(route.model)?.prices);
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
  const entries = new Map<string, ModelEntry>();
  for (const entry of config.models) if (typeof entry !== 'string') entries.set(entry.id, entry);
  const info: ProviderInfo = {
    name: config.name,
    kind: config.kind,
    models: modelIds(config),
    ...(config.defaultModel === undefined ? {} : { defaultModel: config.defaultModel }),
  };
  const requestTimeoutMs = config.requestTimeoutMs ?? defaultModelRequestTimeoutMs;
  const headers = config.headers === undefined ? {} : { headers: config.headers };
  const answerLimits = options.answerLimits === undefined ? {} : { answerLimits: options.answerLimits };

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
      return { info, entries, modelFor: () => model };
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
        ...answerLimits,
      };
      return { info, entries, modelFor: lazyModels(async () => (await import('./openai-compatible-adapter.js')).createOpenAICompatibleModels(settings)) };
    }
    case ProviderKind.anthropic: {
      const apiKey = readApiKey(config, config.apiKeyEnv ?? defaultAnthropicApiKeyEnv, options.env);
      const settings: AnthropicSettings = {
        name: config.name,
        apiKey,
        requestTimeoutMs,
        ...(config.baseUrl === undefined ? {} : { baseUrl: config.baseUrl }),
        ...headers,
        ...answerLimits,
      };
      return { info, entries, modelFor: lazyModels(async () => (await import('./anthropic-adapter.js')).createAnthropicModels(settings)) };
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

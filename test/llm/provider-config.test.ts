import { describe, expect, it } from 'vitest';
import { classifyModelError } from '../../src/llm/classify-model-error';
import { defaultContextWindow } from '../../src/contracts/limits/llm';
import { modelIds, parseProviderConfigs, providerConfigSchema, type ProviderConfig } from '../../src/llm/provider-config';
import { createModelRegistry } from '../../src/llm/model-registry';
import { ScriptedModel } from '../../src/llm/scripted-model';

const openai: ProviderConfig = {
  name: 'openai',
  kind: 'openai-compatible',
  baseUrl: 'https://api.openai.com/v1',
  apiKeyEnv: 'OPENAI_API_KEY',
  models: ['gpt-4.1-mini', 'gpt-4.1'],
  defaultModel: 'gpt-4.1-mini',
};
const ollama: ProviderConfig = { name: 'ollama', kind: 'openai-compatible', baseUrl: 'http://localhost:11434/v1', models: ['qwen3:8b'] };

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  return expect.fail('expected an error');
}

describe('provider configuration', () => {
  it('accepts a valid list and rejects unknown keys, an empty allow-list and a default model outside it', () => {
    expect(parseProviderConfigs([openai, ollama], 'providers')).toEqual([openai, ollama]);
    expect(providerConfigSchema.safeParse({ ...ollama, apiKey: 'sk-secret' }).success).toBe(false);
    expect(() => parseProviderConfigs([{ ...ollama, models: [] }], 'ERRAND_PROVIDERS')).toThrow(/ERRAND_PROVIDERS\[0\.models\]: models must list at least one model/);
    expect(() => parseProviderConfigs([{ ...openai, defaultModel: 'gpt-5' }], 'providers')).toThrow(/defaultModel "gpt-5" is not in models \(gpt-4\.1-mini, gpt-4\.1\)/);
  });

  it('requires baseUrl for openai-compatible, a variable NAME for apiKeyEnv, and unique names', () => {
    expect(() => parseProviderConfigs([{ name: 'x', kind: 'openai-compatible', models: ['m'] }], 'providers')).toThrow(/baseUrl is required for kind openai-compatible/);
    expect(() => parseProviderConfigs([{ ...openai, apiKeyEnv: 'sk-abc123-def' }], 'providers')).toThrow(/apiKeyEnv must be the NAME of an environment variable/);
    expect(() => parseProviderConfigs([ollama, ollama], 'providers')).toThrow(/provider name "ollama" is configured twice/);
    expect(() => parseProviderConfigs([{ ...ollama, kind: 'gemini' }], 'providers')).toThrow(/kind must be one of openai-compatible, anthropic, scripted/);
  });
});

describe('model registry', () => {
  const env = { OPENAI_API_KEY: 'sk-test' };

  it('lists providers with their models and defaults', () => {
    const registry = createModelRegistry([openai, ollama], { env });
    expect(registry.providers()).toEqual([
      { name: 'openai', kind: 'openai-compatible', models: ['gpt-4.1-mini', 'gpt-4.1'], defaultModel: 'gpt-4.1-mini' },
      { name: 'ollama', kind: 'openai-compatible', models: ['qwen3:8b'] },
    ]);
  });

  it('rejects an unknown provider, naming it and what is configured', () => {
    const registry = createModelRegistry([openai, ollama], { env });
    const error = thrown(() => registry.resolve({ provider: 'anthropic', model: 'claude-sonnet-4-5' }));
    const classification = classifyModelError(error);
    expect(classification.type).toBe('ModelNotConfigured');
    expect(classification.retryable).toBe(false);
    expect(classification.message).toBe(
      'model provider "anthropic" is not configured; configured: openai (gpt-4.1-mini, gpt-4.1); ollama (qwen3:8b)',
    );
  });

  it('rejects a model that is not on the allow-list, listing the allowed ones', () => {
    const registry = createModelRegistry([openai], { env });
    const classification = classifyModelError(thrown(() => registry.resolve({ provider: 'openai', model: 'o3' })));
    expect(classification).toEqual({
      type: 'ModelNotConfigured',
      message: 'model "o3" is not allowed for provider "openai"; allowed: gpt-4.1-mini, gpt-4.1',
      retryable: false,
    });
  });

  it('says which environment variable is missing for an API key', () => {
    const missing = classifyModelError(thrown(() => createModelRegistry([openai], { env: {} })));
    expect(missing.type).toBe('ModelNotConfigured');
    expect(missing.message).toContain('provider "openai" needs an API key in the environment variable OPENAI_API_KEY');
    const anthropic = classifyModelError(thrown(() => createModelRegistry([{ name: 'claude', kind: 'anthropic', models: ['claude-sonnet-4-5'] }], { env: {} })));
    expect(anthropic.message).toContain('ANTHROPIC_API_KEY');
    expect(anthropic.message).toContain('default ANTHROPIC_API_KEY');
  });

  it('needs no key for an openai-compatible provider without apiKeyEnv (Ollama, llama.cpp)', () => {
    const registry = createModelRegistry([ollama], { env: {} });
    expect(typeof registry.resolve({ provider: 'ollama', model: 'qwen3:8b' }).generate).toBe('function');
  });

  it('resolves scripted providers to the supplied model and fails clearly when none is supplied', async () => {
    const scripted = new ScriptedModel([{ text: 'hi', usage: { inputTokens: 3, outputTokens: 1 } }]);
    const config: ProviderConfig = { name: 'fake', kind: 'scripted', models: ['m'] };
    const registry = createModelRegistry([config], { env: {}, scripted: { fake: scripted } });
    // The supplied model answers; the registry adds what the call cost (here: unpriced, the entry has no prices).
    const answer = await registry.resolve({ provider: 'fake', model: 'm' }).generate({ route: { provider: 'fake', model: 'm' }, messages: [{ role: 'user', content: 'hello' }], tools: [] }, {});
    expect(answer).toMatchObject({ text: 'hi', usage: { inputTokens: 3, outputTokens: 1, unpricedCalls: 1 } });
    expect(scripted.calls).toHaveLength(1);
    expect(registry.resolve({ provider: 'fake', model: 'm' })).toBe(registry.resolve({ provider: 'fake', model: 'm' }));

    const error = classifyModelError(thrown(() => createModelRegistry([config], { env: {}, scripted: { other: scripted } })));
    expect(error.message).toBe('provider "fake" is of kind scripted, but no scripted model named "fake" was supplied (supplied: other)');
  });

  it('reports an invalid provider list as ModelNotConfigured naming the field', () => {
    const error = classifyModelError(thrown(() => createModelRegistry([{ ...openai, defaultModel: 'nope' }], { env })));
    expect(error.type).toBe('ModelNotConfigured');
    expect(error.message).toContain('providers[0.defaultModel]');
  });
});

describe('model entries with settings', () => {
  const env = { OPENAI_API_KEY: 'sk-test', ANTHROPIC_API_KEY: 'sk-ant-test' };
  const withEntries: ProviderConfig = {
    ...openai,
    models: [
      'gpt-4.1-mini',
      { id: 'o4-mini', contextWindow: 200_000, maxOutputTokens: 32_000, reasoningEfforts: ['low', 'medium', 'high'], defaultReasoningEffort: 'medium' },
      { id: 'small-local', contextWindow: 4_096 },
    ],
  };

  it('accepts objects next to plain ids, and lists and resolves them by id', () => {
    expect(parseProviderConfigs([withEntries], 'providers')).toEqual([withEntries]);
    const registry = createModelRegistry([withEntries], { env });
    expect(registry.providers()[0]?.models).toEqual(['gpt-4.1-mini', 'o4-mini', 'small-local']);
    expect(typeof registry.resolve({ provider: 'openai', model: 'o4-mini' }).generate).toBe('function');
    expect(modelIds(withEntries)).toEqual(['gpt-4.1-mini', 'o4-mini', 'small-local']);
  });

  it("exposes each model's settings through modelInfo, with the defaults from limits.ts for what an entry leaves out", () => {
    const registry = createModelRegistry([withEntries], { env });
    expect(registry.modelInfo({ provider: 'openai', model: 'o4-mini' })).toEqual({
      provider: 'openai',
      model: 'o4-mini',
      kind: 'openai-compatible',
      contextWindow: 200_000,
      maxOutputTokens: 32_000,
      reasoningEfforts: ['low', 'medium', 'high'],
      defaultReasoningEffort: 'medium',
    });
    expect(registry.modelInfo({ provider: 'openai', model: 'gpt-4.1-mini' })).toEqual({
      provider: 'openai',
      model: 'gpt-4.1-mini',
      kind: 'openai-compatible',
      contextWindow: defaultContextWindow,
      reasoningEfforts: [],
    });
    expect(registry.modelInfo({ provider: 'openai', model: 'small-local' }).contextWindow).toBe(4_096);
    expect(classifyModelError(thrown(() => registry.modelInfo({ provider: 'openai', model: 'gpt-5' }))).type).toBe('ModelNotConfigured');
  });

  it('names the field and what would be valid when an entry is wrong', () => {
    const bad = (entry: unknown, kind: ProviderConfig['kind'] = 'openai-compatible'): string =>
      String(thrown(() => parseProviderConfigs([{ ...ollama, kind, models: [entry] }], 'ERRAND_PROVIDERS')));
    expect(bad({ id: 'm', contextWindow: 0 })).toContain('ERRAND_PROVIDERS[0.models.0.contextWindow]: contextWindow must be positive, e.g. 128000');
    expect(bad({ id: 'm', maxOutputTokens: 1.5 })).toContain('ERRAND_PROVIDERS[0.models.0.maxOutputTokens]: maxOutputTokens must be a whole number of tokens, e.g. 8192');
    expect(bad({ id: 'm', contextWindow: 1000, maxOutputTokens: 1000 })).toContain('ERRAND_PROVIDERS[0.models.0.maxOutputTokens]: maxOutputTokens (1000) must be smaller than contextWindow (1000)');
    expect(bad({ id: 'm', reasoningEfforts: ['low'], defaultReasoningEffort: 'high' })).toContain(
      'ERRAND_PROVIDERS[0.models.0.defaultReasoningEffort]: defaultReasoningEffort "high" is not in reasoningEfforts (low)',
    );
    expect(bad({ id: 'm', contextWindows: 10 })).toContain('ERRAND_PROVIDERS[0.models.0]');
    expect(bad({ id: 'm', reasoningEfforts: ['minimal'] }, 'anthropic')).toContain(
      'ERRAND_PROVIDERS[0.models.0.reasoningEfforts.0]: reasoning effort "minimal" has no thinking budget for kind anthropic; use low, medium, high',
    );
    expect(String(thrown(() => parseProviderConfigs([{ ...ollama, models: ['m', { id: 'm' }] }], 'providers')))).toContain('providers[0.models.1]: model "m" is listed twice');
  });

  it('takes prices in US dollars per million tokens, and names the field and what would be valid when one is wrong', () => {
    const priced = { id: 'gpt-4.1', prices: { input: 2, output: 8, cachedInput: 0.5 } };
    expect(parseProviderConfigs([{ ...openai, models: ['gpt-4.1-mini', priced] }], 'providers')[0]?.models).toEqual(['gpt-4.1-mini', priced]);
    expect(parseProviderConfigs([{ ...ollama, models: [{ id: 'local', prices: { input: 0, output: 0 } }] }], 'providers')[0]?.models).toEqual([{ id: 'local', prices: { input: 0, output: 0 } }]);
    const bad = (prices: unknown): string => String(thrown(() => parseProviderConfigs([{ ...ollama, models: [{ id: 'm', prices }] }], 'ERRAND_PROVIDERS')));
    expect(bad({ input: -1, output: 8 })).toContain('ERRAND_PROVIDERS[0.models.0.prices.input]: prices.input must not be negative (US dollars per million tokens, e.g. 2.5)');
    expect(bad({ input: 2, output: '8' })).toContain('ERRAND_PROVIDERS[0.models.0.prices.output]: prices.output must be a number of US dollars per million tokens, e.g. 10');
    expect(bad({ input: 2, output: 8, cachedInput: -0.5 })).toContain('ERRAND_PROVIDERS[0.models.0.prices.cachedInput]: prices.cachedInput must not be negative');
    expect(bad({ input: 2 })).toContain('ERRAND_PROVIDERS[0.models.0.prices.output]: prices.output must be a number of US dollars per million tokens');
    expect(bad({ input: 2, output: 8, cached: 1 })).toMatch(/ERRAND_PROVIDERS\[0\.models\.0\.prices\]: .*cached/);
    // Not an object at all: the entry is not an entry, and the message lists what one holds.
    expect(bad(2.5)).toContain('ERRAND_PROVIDERS[0.models.0]: each model must be a model id or {id, contextWindow?, maxOutputTokens?, reasoningEfforts?, defaultReasoningEffort?, prices?}');
  });

  it('lets defaultModel name an entry by its id', () => {
    expect(parseProviderConfigs([{ ...ollama, models: [{ id: 'qwen3:8b', contextWindow: 32_768 }], defaultModel: 'qwen3:8b' }], 'providers')[0]?.defaultModel).toBe('qwen3:8b');
  });
});

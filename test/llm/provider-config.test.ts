import { describe, expect, it } from 'vitest';
import { classifyModelError } from '../../src/llm/classify-model-error';
import { createModelRegistry, parseProviderConfigs, providerConfigSchema, type ProviderConfig } from '../../src/llm/provider-config';
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
    expect(registry.resolve({ provider: 'ollama', model: 'qwen3:8b' })).toBeDefined();
  });

  it('resolves scripted providers to the supplied model and fails clearly when none is supplied', () => {
    const scripted = new ScriptedModel([{ text: 'hi' }]);
    const config: ProviderConfig = { name: 'fake', kind: 'scripted', models: ['m'] };
    const registry = createModelRegistry([config], { env: {}, scripted: { fake: scripted } });
    expect(registry.resolve({ provider: 'fake', model: 'm' })).toBe(scripted);
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

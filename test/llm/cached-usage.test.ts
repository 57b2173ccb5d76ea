import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelPrices } from '../../src/domain/model-cost';
import { createModelRegistry } from '../../src/llm/model-registry';
import { ScriptedModel } from '../../src/llm/scripted-model';
import { parseScript } from '../../src/llm/scripted-step';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { modelAgainst, simpleRequest } from './llm-test-helpers';

/**
 * Cached prompt tokens as each vendor reports them, through the real adapters, and what the call costs with
 * the model entry's prices (SEMANTICS §6 "Spend").
 */

const prices: ModelPrices = { input: 3, output: 15, cachedInput: 0.3, cacheWriteInput: 3.75 };
const priced = (kind: 'openai-compatible' | 'anthropic') => modelAgainst(server, kind, { models: [{ id: 'scripted-model-1', prices }] });

let server: ScriptedOpenAIServer;
beforeAll(async () => {
  server = await startScriptedOpenAIServer();
});
afterEach(() => {
  server.reset();
});
afterAll(async () => {
  await server.close();
});

describe('OpenAI Chat Completions: prompt_tokens_details.cached_tokens', () => {
  it('reports the cached part of the prompt and prices it at the cached-input price', async () => {
    const { model, route } = priced('openai-compatible');
    server.enqueue({ text: 'cached answer', usage: { inputTokens: 2_000, outputTokens: 100, cachedInputTokens: 1_500 } });
    const response = await model.generate(simpleRequest(route), {});
    // 500 plain × 3 + 1,500 cached × 0.3 + 100 out × 15 micro-dollars.
    expect(response.usage).toEqual({ inputTokens: 2_000, outputTokens: 100, cachedInputTokens: 1_500, costMicroUsd: 1_500 + 450 + 1_500 });
    expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(server.rejectedRequests).toEqual([]);
  });

  it('without cached tokens reports none, and a cache write is plain input on this wire (OpenAI bills none)', async () => {
    const { model, route } = priced('openai-compatible');
    server.enqueue({ text: 'plain', usage: { inputTokens: 1_000, outputTokens: 10, cacheWriteInputTokens: 400 } });
    const response = await model.generate(simpleRequest(route), {});
    expect(response.usage).toEqual({ inputTokens: 1_000, outputTokens: 10, costMicroUsd: 3_000 + 150 });
  });
});

describe('Anthropic Messages: cache_read_input_tokens and cache_creation_input_tokens', () => {
  it('counts both inside inputTokens, reports each, and prices reads, writes and plain input apart', async () => {
    const { model, route } = priced('anthropic');
    server.enqueue({ text: 'cached answer', usage: { inputTokens: 2_000, outputTokens: 100, cachedInputTokens: 1_200, cacheWriteInputTokens: 600 } });
    const response = await model.generate(simpleRequest(route), {});
    // 200 plain × 3 + 1,200 read × 0.3 + 600 written × 3.75 + 100 out × 15.
    expect(response.usage).toEqual({ inputTokens: 2_000, outputTokens: 100, cachedInputTokens: 1_200, cacheWriteInputTokens: 600, costMicroUsd: 600 + 360 + 2_250 + 1_500 });
    expect(server.requests[0]?.api).toBe('messages');
    expect(server.rejectedRequests).toEqual([]);
  });

  it('a model entry without prices counts the call as unpriced', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    server.enqueue({ text: 'unpriced', usage: { inputTokens: 50, outputTokens: 5, cachedInputTokens: 20 } });
    const response = await model.generate(simpleRequest(route), {});
    expect(response.usage).toEqual({ inputTokens: 50, outputTokens: 5, cachedInputTokens: 20, unpricedCalls: 1 });
  });
});

describe('the in-process scripted model', () => {
  it('reports cached tokens as the port carries them, and the registry prices them', async () => {
    const scripted = new ScriptedModel([{ text: 'cached', usage: { inputTokens: 1_000, outputTokens: 10, cachedInputTokens: 800, cacheWriteInputTokens: 100 } }]);
    const registry = createModelRegistry([{ name: 'fake', kind: 'scripted', models: [{ id: 'm', prices }] }], { env: {}, scripted: { fake: scripted } });
    const route = { provider: 'fake', model: 'm' };
    const response = await registry.resolve(route).generate(simpleRequest(route), {});
    // 100 plain × 3 + 800 cached × 0.3 + 100 written × 3.75 + 10 out × 15.
    expect(response.usage).toEqual({ inputTokens: 1_000, outputTokens: 10, cachedInputTokens: 800, cacheWriteInputTokens: 100, costMicroUsd: 300 + 240 + 375 + 150 });
  });
});

describe('the scripted step', () => {
  it('refuses cached tokens without the prompt size they are part of, or more than it', () => {
    expect(() => parseScript([{ text: 'x', usage: { cachedInputTokens: 5 } }], 'script.json')).toThrow(/usage\.inputTokens must be scripted with cachedInputTokens or cacheWriteInputTokens/);
    expect(() => parseScript([{ text: 'x', usage: { inputTokens: 5, cachedInputTokens: 4, cacheWriteInputTokens: 2 } }], 'script.json')).toThrow(/usage\.cachedInputTokens \+ cacheWriteInputTokens \(6\) must not exceed inputTokens \(5\)/);
  });
});

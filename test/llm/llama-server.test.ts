import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest, ModelRoute } from '../../src/contracts/model';
import { classifyModelError, modelCallAborted } from '../../src/llm/classify-model-error';
import type { ChatModel } from '../../src/llm/model-port';
import { createModelRegistry } from '../../src/llm/provider-config';
import { startLlamaServer, type LlamaServer } from '../support/llama-server';
import { rejectionOf } from './llm-test-helpers';

/**
 * The real OpenAI-compatible adapter against a real model server: llama.cpp's server with Gemma 3 270M.
 * The server runs with `--ignore-eos`, so a generation always runs to its output-token limit (the base
 * model rarely stops by itself), and with a small context window, so an overflow is cheap to provoke.
 */
describe('OpenAI-compatible adapter against llama.cpp', () => {
  const ctxSize = 512;
  let server: LlamaServer;
  let model: ChatModel;
  const route: ModelRoute = { provider: 'llama', model: 'gemma3-270m', temperature: 0 };
  const ask = (text: string, maxOutputTokens: number): ModelRequest => ({
    route,
    tools: [],
    maxOutputTokens,
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: text },
    ],
  });

  beforeAll(async () => {
    server = await startLlamaServer({ ctxSize, ignoreEos: true });
    const registry = createModelRegistry([{ name: 'llama', kind: 'openai-compatible', baseUrl: server.url, models: [{ id: 'gemma3-270m', contextWindow: ctxSize }] }], { env: {} });
    model = registry.resolve(route);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('completes a generation with text and the usage the server counted', async () => {
    const response = await model.generate(ask('Write one sentence about the sea.', 16), {});

    expect(response.text.trim()).not.toBe('');
    expect(response.toolCalls).toEqual([]);
    expect(['stop', 'length']).toContain(response.finishReason);
    expect(response.usage.inputTokens).toBeGreaterThan(0);
    expect(response.usage.outputTokens).toBeGreaterThan(0);
    expect(response.usage.outputTokens).toBeLessThanOrEqual(16);
  });

  it('stops at maxOutputTokens with finish reason length', async () => {
    const response = await model.generate(ask('Tell me a long story about a lighthouse keeper.', 8), {});

    expect(response.finishReason).toBe('length');
    expect(response.usage.outputTokens).toBe(8);
  });

  it('streams the text through onText in pieces that add up to the answer', async () => {
    const seen: string[] = [];

    const response = await model.generate(ask('List some colours.', 24), { onText: (soFar) => seen.push(soFar) });

    expect(seen.length).toBeGreaterThan(1);
    expect(seen.at(-1)).toBe(response.text);
    seen.forEach((piece, index) => {
      expect(response.text.startsWith(piece)).toBe(true);
      if (index > 0) expect(piece.length).toBeGreaterThan(seen[index - 1]!.length);
    });
  });

  it("classifies a prompt over the server's context size as ModelContextOverflow", async () => {
    const error = await rejectionOf(model.generate(ask('hello world '.repeat(400), 16), {}));

    const classification = classifyModelError(error);
    expect(classification).toMatchObject({ type: 'ModelContextOverflow', retryable: false, status: 400 });
    expect(classification.message).toMatch(/exceeds the available context size \(512 tokens\)/);
  });

  it('frees the server slot when a streaming generation is aborted', async () => {
    const maxOutputTokens = 400;
    const before = await server.metrics();
    const controller = new AbortController();
    let pieces = 0;

    const error = await rejectionOf(
      model.generate(ask('Count from one to one thousand.', maxOutputTokens), {
        abortSignal: controller.signal,
        onText: () => {
          pieces += 1;
          if (pieces === 2) controller.abort();
        },
      }),
    );
    expect(classifyModelError(error).type).toBe(modelCallAborted);

    // The slot goes idle once the server notices the closed connection; the generation did not run on.
    await waitUntil(async () => (await server.slots()).every((slot) => !slot.isProcessing), 'the slot to be released');
    const after = await server.metrics();
    expect(after.requests_processing).toBe(0);
    const predicted = (after.tokens_predicted_total ?? 0) - (before.tokens_predicted_total ?? 0);
    expect(predicted).toBeGreaterThanOrEqual(2);
    expect(predicted).toBeLessThan(maxOutputTokens);
    // And the server takes the next request at once.
    expect((await model.generate(ask('Say hi.', 4), {})).finishReason).toBe('length');
  });
});

async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

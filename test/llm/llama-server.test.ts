import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest, ModelRoute } from '../../src/contracts/model';
import { classifyModelError, modelCallAborted } from '../../src/llm/classify-model-error';
import type { ChatModel } from '../../src/llm/model-port';
import { createModelRegistry } from '../../src/llm/model-registry';
import { startLlamaServer, type LlamaServer } from '../support/llama-server';
import { rejectionOf } from './llm-test-helpers';

/**
 * The real OpenAI-compatible adapter against a real model server: llama.cpp's server with Gemma 3 270M, a
 * base model that on its own writes until its output-token limit. One server ends turns early (a logit
 * bias on the end-of-turn token), for answers that finish by themselves; the other runs with
 * `--ignore-eos`, so a generation always runs to its limit, and with a small context window, so an
 * overflow is cheap to provoke.
 */
const route: ModelRoute = { provider: 'llama', model: 'gemma3-270m', temperature: 0 };

function ask(text: string, maxOutputTokens: number): ModelRequest {
  return {
    route,
    tools: [],
    maxOutputTokens,
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: text },
    ],
  };
}

function modelOf(server: LlamaServer): ChatModel {
  const registry = createModelRegistry([{ name: 'llama', kind: 'openai-compatible', baseUrl: server.url, models: [{ id: 'gemma3-270m', contextWindow: server.ctxSize }] }], { env: {} });
  return registry.resolve(route);
}

describe('OpenAI-compatible adapter against llama.cpp: answers that finish', () => {
  let server: LlamaServer;
  let model: ChatModel;

  beforeAll(async () => {
    server = await startLlamaServer({ ctxSize: 1024, finishEarly: true });
    model = modelOf(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('completes a generation: text, finish reason stop, and the usage the server counted', async () => {
    const response = await model.generate(ask('What is the capital of France?', 64), {});

    expect(response.text.trim()).not.toBe('');
    expect(response.toolCalls).toEqual([]);
    expect(response.finishReason).toBe('stop');
    expect(response.usage.inputTokens).toBeGreaterThan(0);
    expect(response.usage.outputTokens).toBeGreaterThan(0);
    expect(response.usage.outputTokens).toBeLessThan(64);
  });

  it('streams the text through onText in pieces that add up to the answer', async () => {
    const seen: string[] = [];

    const response = await model.generate(ask('Name a colour.', 64), { onText: (soFar) => seen.push(soFar) });

    expect(seen.length).toBeGreaterThan(1);
    expect(seen.at(-1)).toBe(response.text);
    seen.forEach((piece, index) => {
      expect(response.text.startsWith(piece)).toBe(true);
      if (index > 0) expect(piece.length).toBeGreaterThan(seen[index - 1]!.length);
    });
  });
});

describe('OpenAI-compatible adapter against llama.cpp: limits and aborts', () => {
  const ctxSize = 512;
  let server: LlamaServer;
  let model: ChatModel;

  beforeAll(async () => {
    server = await startLlamaServer({ ctxSize, ignoreEos: true });
    model = modelOf(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('stops at maxOutputTokens with finish reason length', async () => {
    const response = await model.generate(ask('Tell me a long story about a lighthouse keeper.', 8), {});

    expect(response.finishReason).toBe('length');
    expect(response.usage.outputTokens).toBe(8);
    expect(response.text.trim()).not.toBe('');
  });

  it("classifies a prompt over the server's context size as ModelContextOverflow", async () => {
    const error = await rejectionOf(model.generate(ask('hello world '.repeat(400), 16), {}));

    const classification = classifyModelError(error);
    expect(classification).toMatchObject({ type: 'ModelContextOverflow', retryable: false, status: 400 });
    expect(classification.message).toMatch(new RegExp(`exceeds the available context size \\(${ctxSize} tokens\\)`));
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

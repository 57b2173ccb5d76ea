import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startApiStack, type ApiStack } from '../api/api-harness';
import { awaitResult, startDelegation, watchStatus, type Partial } from '../api/live-stack';
import { startLlamaServer, type LlamaServer } from '../support/llama-server';
import { until } from '../support/run-harness';

/**
 * Live output from a real model server: llama.cpp's server with Gemma 3 270M behind the real
 * OpenAI-compatible adapter, through the whole stack (worker, dev server, API server). The server runs
 * with `--ignore-eos`, so the base model writes until its output-token limit; the limit is high enough
 * that the generation runs for seconds even on a fast machine (on a busy one the model may write two
 * tokens a second), so the test cancels once it has seen the text in the peek rather than wait for the end:
 * what was written is the partial output, and the server's slot is free again (the stream was aborted).
 */

const maxOutputTokens = 1_500;
let server: LlamaServer;
let stack: ApiStack;

beforeAll(async () => {
  server = await startLlamaServer({ ignoreEos: true });
  stack = await startApiStack({
    extraEnv: {
      ERRAND_PROVIDERS: JSON.stringify([{ name: 'llama', kind: 'openai-compatible', baseUrl: server.url, models: [{ id: 'gemma3-270m', contextWindow: server.ctxSize }] }]),
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await server?.stop();
});

describe('live output from llama.cpp', () => {
  it('shows the text the model streams through the API peek before the answer is complete', { timeout: 240_000 }, async () => {
    const id = await startDelegation(stack, {
      instructions: 'Write a long story about a lighthouse keeper and the sea.',
      extensions: [],
      max_output_tokens: maxOutputTokens,
      temperature: 0,
    });

    const seen = await watchStatus(stack, id, (status) => status.state !== 'running' || (status.peek?.partial?.chars ?? 0) > 0, 180_000);
    const writing = seen[seen.length - 1];
    await stack.request(`/v1/delegations/${id}/cancel`, postJson({ reason: 'seen it write' }));
    const result = await awaitResult(stack, id);

    expect(writing?.state).toBe('running');
    const partial: Partial | undefined = writing?.peek?.partial;
    expect(partial?.turn).toBe(1);
    expect(partial?.text.length).toBeGreaterThan(0);
    expect(result.status).toBe('cancelled');
    expect(result.partialOutput.startsWith(partial?.text ?? '∅')).toBe(true);
    const slots = await until(() => server.slots(), (current) => current.every((slot) => !slot.isProcessing), 'the server to stop generating', 30_000);
    expect(slots.length).toBeGreaterThan(0);
  });
});

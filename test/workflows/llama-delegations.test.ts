import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cancelSignal, peekQuery, sendMessageUpdate, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import type { SubagentInput } from '../../src/contracts/subagent';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import { startLlamaServer, type LlamaServer } from '../support/llama-server';
import { defaultModelCallTimeoutMs, defaultModelHeartbeatTimeoutMs } from '../../src/contracts/limits/workflow';
import { subagentInput, testActivitySettings } from '../support/temporal';
import { until } from '../support/polling';
import { useWorkerStack } from '../support/worker-stack';

/**
 * Delegations end to end against a real model server: llama.cpp's server with Gemma 3 270M behind the real
 * OpenAI-compatible adapter, through the real workflow and activities. The model is a base model that
 * writes text and makes no tool calls, so these delegations have no tools; they check the transport and
 * the limits: a run that completes, one cut off at its output-token limit, a conversation compacted to
 * stay inside a small context window, a prompt that can never fit, and a cancel that stops the generation.
 */

let finishing: LlamaServer;
let endless: LlamaServer;
let counter = 0;

/**
 * The product's model-call limits, not the tests' short ones: a CPU model answering 256 tokens while the rest
 * of the suite keeps both cores busy can take more than a minute, and under the tests' 60 s limit four
 * attempts of one call timed out in a row in a full run (the turn failed; the server's log showed each
 * generation cancelled at 60 s).
 */
const llamaActivitySettings = { ...testActivitySettings, modelCallTimeoutMs: defaultModelCallTimeoutMs, modelHeartbeatTimeoutMs: defaultModelHeartbeatTimeoutMs };

beforeAll(async () => {
  [finishing, endless] = await Promise.all([
    startLlamaServer({ ctxSize: 2048, finishEarly: true }),
    startLlamaServer({ ctxSize: 4096, ignoreEos: true }),
  ]);
}, 600_000);
afterAll(async () => {
  await finishing?.stop();
  await endless?.stop();
});

const stack = useWorkerStack(() => ({
  label: 'llama',
  providers: [
    { name: 'llama', kind: 'openai-compatible', baseUrl: finishing.url, models: [{ id: 'gemma3-270m', contextWindow: finishing.ctxSize, maxOutputTokens: 256 }] },
    { name: 'llama-endless', kind: 'openai-compatible', baseUrl: endless.url, models: [{ id: 'gemma3-270m', contextWindow: endless.ctxSize, maxOutputTokens: 2_000 }] },
  ],
}));

function start(prompt: string, provider: 'llama' | 'llama-endless', overrides: Partial<SubagentInput> = {}) {
  counter += 1;
  return stack.client.workflow.start('subagentWorkflow', {
    taskQueue: stack.taskQueue,
    workflowId: `errand-llama-${Date.now()}-${counter}`,
    args: [subagentInput({ prompt, workingDir: stack.workingDir, toolsets: [], route: { provider, model: 'gemma3-270m', temperature: 0 }, activity: llamaActivitySettings, ...overrides })],
  });
}

describe('delegations against llama.cpp', () => {
  test('a delegation completes with the text the model wrote', async () => {
    const handle = await start('What is the capital of France?', 'llama');
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.output.trim()).not.toBe('');
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBeLessThan(256);
  }, 180_000);

  test('a delegation cut off by max_output_tokens ends truncated and says so', async () => {
    const handle = await start('Write a long story about a lighthouse.', 'llama-endless', { maxOutputTokens: 16 });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('truncated');
    expect(result.diagnostic).toBe('its answer was cut off at the output token limit (16 tokens)');
    expect(result.partialOutput.trim()).not.toBe('');
    expect(result.usage.outputTokens).toBe(16);
  }, 180_000);

  test('a conversation that outgrows the context window is compacted by the model and goes on', async () => {
    const handle = await start('You keep a diary of short notes. Acknowledge each note briefly.', 'llama', { continuable: true });
    // A turn that compacts first makes two model calls; with the rest of the suite on both cores that takes minutes.
    const waitTurn = (turns: number) => until(() => handle.query(peekQuery) as Promise<SubagentPeek>, (peek) => peek.turns >= turns && peek.state === 'waiting', `turn ${turns}`, 300_000);
    await waitTurn(1);
    let turn = 1;
    let peek: SubagentPeek = await handle.query(peekQuery);
    while ((peek.compactions ?? 0) === 0 && turn < 40) {
      turn += 1;
      await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Note ${turn}: ${'Today the harbour was calm, the boats came in early and the market was busy. '.repeat(8)}` }] });
      peek = await waitTurn(turn);
    }
    expect(peek.compactions ?? 0).toBeGreaterThanOrEqual(1);
    // One more turn after the compaction completes as usual.
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'Last note: all quiet.' }] });
    peek = await waitTurn(turn + 1);
    expect(peek.state).toBe('waiting');
    const transcript: TranscriptView = await handle.query(transcriptQuery);
    expect(transcript.entries.some((entry) => entry.role === 'event' && entry.text.startsWith('[compaction 1]'))).toBe(true);
    // A failed turn would show here with its diagnostic (the reason the model call or the compaction failed).
    expect(transcript.entries.filter((entry) => entry.role === 'event' && entry.text.startsWith('[failed]')).map((entry) => entry.text)).toEqual([]);
    await handle.signal(cancelSignal, { reason: 'test done' });
    await handle.result();
  }, 1_200_000);

  test("a task that cannot fit the window fails with the server's words", async () => {
    const handle = await start(`Summarise this: ${'The quick brown fox jumps over the lazy dog. '.repeat(300)}`, 'llama');
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('failed');
    expect(result.diagnostic).toMatch(/^ModelContextOverflow: .*exceeds the available context size/);
  }, 180_000);

  test('cancel stops the generation: the server frees its slot long before the output limit', async () => {
    const handle = await start('Write a very long story about the sea.', 'llama-endless');
    await until(() => endless.slots(), (slots) => slots.some((slot) => slot.isProcessing), 'the generation to start', 60_000);
    const before = await endless.metrics();
    await handle.signal(cancelSignal, { reason: 'enough' });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('cancelled');
    await until(() => endless.slots(), (slots) => slots.every((slot) => !slot.isProcessing), 'the slot to be free', 30_000);
    const after = await endless.metrics();
    // Far fewer than the 2000 tokens the call was allowed: the generation stopped when the request was aborted.
    expect((after.tokens_predicted_total ?? 0) - (before.tokens_predicted_total ?? 0)).toBeLessThan(1_000);
  }, 180_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endedLine, truncationDiagnostic } from '../../src/domain/delegation-texts';
import { FailureType } from '../../src/contracts/failures';
import { estimateTextTokens, estimateTokens } from '../../src/domain/token-estimate';
import { classifyModelError } from '../../src/llm/classify-model-error';
import { createModelRegistry } from '../../src/llm/model-registry';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { simpleRequest, testApiKey } from './llm-test-helpers';

/**
 * errand's own caps on one model answer (`ERRAND_MODEL_ANSWER_MAX_BYTES`, `ERRAND_MODEL_ANSWER_MAX_MS`),
 * through the real HTTP adapter against the scripted vendor server: past either cap errand closes the
 * stream and the answer ends with finish reason `length`, naming the cap; below both, nothing changes.
 */

let server: ScriptedOpenAIServer;

beforeAll(async () => {
  server = await startScriptedOpenAIServer();
});

afterAll(async () => {
  await server.close();
});

function cappedModel(answerLimits: { maxBytes: number; maxMs: number }) {
  const registry = createModelRegistry(
    [{ name: 'local', kind: 'openai-compatible', baseUrl: server.url, apiKeyEnv: 'ERRAND_TEST_API_KEY', models: ['scripted-model-1'] }],
    { env: { ERRAND_TEST_API_KEY: testApiKey }, answerLimits },
  );
  const route = { provider: 'local', model: 'scripted-model-1' };
  return { model: registry.resolve(route), route };
}

describe("errand's caps on a model answer", () => {
  it('closes a stream that never ends at the byte cap: truncated, with the text read so far', async () => {
    server.reset();
    server.enqueue({ text: 'Once upon a time ', endless: true });
    const { model, route } = cappedModel({ maxBytes: 64 * 1024, maxMs: 60_000 });
    let live = '';
    const answer = await model.generate(simpleRequest(route), { onText: (text) => (live = text) });
    expect(answer.finishReason).toBe('length');
    expect(answer.answerCap).toEqual({ cap: 'bytes', limit: 64 * 1024, setting: 'ERRAND_MODEL_ANSWER_MAX_BYTES' });
    expect(answer.text.startsWith('Once upon a time endless')).toBe(true);
    // At most one chunk past the cap was read.
    expect(Buffer.byteLength(answer.text)).toBeLessThan(64 * 1024 + 32 * 1024);
    expect(answer.usage.outputTokens).toBeGreaterThan(0);
    // The provider read the whole prompt before errand cut its answer: estimated from the request, not 0.
    expect(answer.usage.inputTokens).toBe(estimateTokens(simpleRequest(route).messages, simpleRequest(route).tools));
    expect(answer.usage.inputTokens).toBeGreaterThan(0);
    expect(live).toBe(answer.text);
    await server.waitFor((requests) => requests[0]?.finishedAt !== undefined, 10_000, 'the stream to be closed');
    expect(server.requests[0]?.aborted).toBe(true);
    expect(server.rejectedRequests).toEqual([]);
  });

  it('closes a slow stream at the time cap: truncated, naming the time cap', async () => {
    server.reset();
    server.enqueue({ text: 'word '.repeat(400), chunkDelayMs: 50 });
    const { model, route } = cappedModel({ maxBytes: 1024 * 1024, maxMs: 500 });
    const answer = await model.generate(simpleRequest(route), {});
    expect(answer.finishReason).toBe('length');
    expect(answer.answerCap).toEqual({ cap: 'time', limit: 500, setting: 'ERRAND_MODEL_ANSWER_MAX_MS' });
    expect(answer.usage.inputTokens).toBeGreaterThan(0);
    expect(answer.text.length).toBeGreaterThan(0);
    expect(answer.text.length).toBeLessThan(2_000);
    await server.waitFor((requests) => requests[0]?.finishedAt !== undefined, 10_000, 'the stream to be closed');
    expect(server.requests[0]?.aborted).toBe(true);
  });

  it('leaves an answer under both caps as the provider sent it', async () => {
    server.reset();
    server.enqueue({ text: 'A short answer.' });
    const { model, route } = cappedModel({ maxBytes: 1024, maxMs: 60_000 });
    const answer = await model.generate(simpleRequest(route), {});
    expect(answer).toMatchObject({ text: 'A short answer.', finishReason: 'stop' });
    expect(answer.answerCap).toBeUndefined();
  });

  it('cuts an answer where a llama.cpp server ran out of context space while writing it: truncated, the text kept', async () => {
    server.reset();
    server.enqueue({ text: 'The dragon flew over the hills and far away, '.repeat(10), contextRunOutAfterChars: 120 });
    const { model, route } = cappedModel({ maxBytes: 1024 * 1024, maxMs: 60_000 });
    let live = '';
    const answer = await model.generate(simpleRequest(route), { onText: (text) => (live = text) });
    expect(answer.finishReason).toBe('length');
    expect(answer.text).toBe('The dragon flew over the hills and far away, '.repeat(10).slice(0, 120));
    expect(answer.answerCap).toEqual({ cap: 'context', limit: estimateTextTokens(answer.text), setting: 'model server' });
    expect(answer.usage.inputTokens).toBe(estimateTokens(simpleRequest(route).messages, simpleRequest(route).tools));
    expect(live).toBe(answer.text);
    // One request: it is not retried as an outage.
    expect(server.requests).toHaveLength(1);
    const diagnostic = truncationDiagnostic(8192, answer.answerCap);
    expect(endedLine({ status: 'truncated', turns: 1, diagnostic })).toBe(
      `The subagent did not finish: its answer was cut off when the model server ran out of context space, about ${estimateTextTokens(answer.text)} tokens into it (give each of the server's requests more context, or set a smaller maxOutputTokens on the model entry).`,
    );
  });

  it("takes a llama.cpp server's context run-out before any of the answer as a context overflow (compact and try again)", async () => {
    server.reset();
    server.enqueue({ text: 'never sent', contextRunOutAfterChars: 0 });
    const { model, route } = cappedModel({ maxBytes: 1024 * 1024, maxMs: 60_000 });
    const failure = await model.generate(simpleRequest(route), {}).then(() => undefined, (error: unknown) => error);
    expect(classifyModelError(failure)).toMatchObject({ type: FailureType.modelContextOverflow, retryable: false, message: 'Context size has been exceeded.' });
  });

  it("tells the delegating model which cap cut the answer, and keeps the token limit's wording", () => {
    const size = truncationDiagnostic(8192, { cap: 'bytes', limit: 4_194_304, setting: 'ERRAND_MODEL_ANSWER_MAX_BYTES' });
    expect(endedLine({ status: 'truncated', turns: 1, diagnostic: size })).toBe(
      "The subagent did not finish: its answer was cut off at errand's answer size cap (4194304 bytes, ERRAND_MODEL_ANSWER_MAX_BYTES).",
    );
    const time = truncationDiagnostic(8192, { cap: 'time', limit: 240_000, setting: 'ERRAND_MODEL_ANSWER_MAX_MS' });
    expect(endedLine({ status: 'truncated', turns: 1, diagnostic: time })).toBe("The subagent did not finish: its answer was cut off at errand's answer time cap (240000 ms, ERRAND_MODEL_ANSWER_MAX_MS).");
    expect(endedLine({ status: 'truncated', turns: 1, diagnostic: truncationDiagnostic(12, undefined) })).toBe('The subagent did not finish: its answer was cut off at the output token limit (12 tokens).');
  });
});

import { createServer } from 'node:http';
import { CancelledFailure } from '@temporalio/common';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaultMaxOutputTokens } from '../../src/contracts/limits/llm';
import type { ModelRequest } from '../../src/contracts/model';
import { estimateTokens, truncateToTokens } from '../../src/domain/token-estimate';
import { classifyModelError, modelCallAborted } from '../../src/llm/classify-model-error';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { listDirectoryTool, modelAgainst, readFileTool, rejectionOf, simpleRequest, testApiKey } from './llm-test-helpers';

describe('OpenAI-compatible adapter against the scripted server', () => {
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

  it('returns a text answer with usage and sends model, messages, key and headers', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ text: 'Hello there.', usage: { inputTokens: 11, outputTokens: 3 } });

    const response = await model.generate(simpleRequest({ ...route, temperature: 0.2 }), {});

    expect(response).toEqual({ text: 'Hello there.', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 11, outputTokens: 3, unpricedCalls: 1 } });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.api).toBe('chat-completions');
    expect(request?.streamed).toBe(true);
    expect(request?.headers.authorization).toBe(`Bearer ${testApiKey}`);
    expect(request?.headers['x-errand-test']).toBe('yes');
    expect(request?.body).toMatchObject({
      model: 'scripted-model-1',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: defaultMaxOutputTokens,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'You are a test.' },
        { role: 'user', content: 'Say hello' },
      ],
    });
    expect(request?.body).not.toHaveProperty('tools');
    expect(request?.aborted).toBe(false);
    expect(server.exhaustedRequests).toEqual([]);
  });

  it('offers tools as JSON schema and parses two parallel tool calls', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({
      toolCalls: [
        { name: 'developer__list_directory', arguments: { path: '.' }, id: 'call_a' },
        { name: 'developer__read_file', arguments: { path: 'README.md', nested: { lines: [1, 2] } }, id: 'call_b' },
      ],
    });

    const response = await model.generate(simpleRequest(route, 'Look around', [listDirectoryTool, readFileTool]), {});

    expect(response.finishReason).toBe('tool-calls');
    expect(response.text).toBe('');
    expect(response.toolCalls).toEqual([
      { id: 'call_a', name: 'developer__list_directory', arguments: { path: '.' } },
      { id: 'call_b', name: 'developer__read_file', arguments: { path: 'README.md', nested: { lines: [1, 2] } } },
    ]);
    expect(server.requests[0]?.body).toMatchObject({
      tools: [
        { type: 'function', function: { name: 'developer__list_directory', description: 'List a directory', parameters: listDirectoryTool.inputSchema } },
        { type: 'function', function: { name: 'developer__read_file', parameters: readFileTool.inputSchema } },
      ],
      tool_choice: 'auto',
    });
  });

  it('sends the assistant tool calls and the tool results in the follow-up request', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ text: 'The directory has two files.' });
    const request: ModelRequest = {
      route,
      tools: [listDirectoryTool, readFileTool],
      messages: [
        { role: 'system', content: 'You are a test.' },
        { role: 'user', content: 'Look around' },
        {
          role: 'assistant',
          content: 'Looking.',
          toolCalls: [
            { id: 'call_a', name: 'developer__list_directory', arguments: { path: '.' } },
            { id: 'call_b', name: 'developer__read_file', arguments: { path: 'missing.md' } },
          ],
        },
        { role: 'tool', toolCallId: 'call_a', toolName: 'developer__list_directory', content: 'a.txt\nb.txt' },
        { role: 'tool', toolCallId: 'call_b', toolName: 'developer__read_file', content: 'Error: no such file', isError: true },
      ],
    };

    const response = await model.generate(request, {});

    expect(response.text).toBe('The directory has two files.');
    expect(server.requests[0]?.body).toMatchObject({
      messages: [
        { role: 'system', content: 'You are a test.' },
        { role: 'user', content: 'Look around' },
        {
          role: 'assistant',
          content: 'Looking.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'developer__list_directory', arguments: '{"path":"."}' } },
            { id: 'call_b', type: 'function', function: { name: 'developer__read_file', arguments: '{"path":"missing.md"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'a.txt\nb.txt' },
        { role: 'tool', tool_call_id: 'call_b', content: 'Error: no such file' },
      ],
    });
  });

  it('classifies 429 as ModelRateLimited with the retry-after delay', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ error: { status: 429, message: 'Rate limit reached for requests', retryAfterSeconds: 7 } });

    const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));

    expect(classification).toEqual({ type: 'ModelRateLimited', message: 'Rate limit reached for requests', retryable: true, retryAfterMs: 7000, status: 429 });
    expect(server.requests[0]?.status).toBe(429);
  });

  it('classifies 400 as ModelRequestRejected with the provider message, not retryable', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ error: { status: 400, message: "Invalid 'tools[0].function.name': string does not match pattern." } });

    const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));

    expect(classification).toEqual({
      type: 'ModelRequestRejected',
      message: "Invalid 'tools[0].function.name': string does not match pattern.",
      retryable: false,
      status: 400,
    });
  });

  it('classifies 503 as ModelUnavailable, retryable', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ error: { status: 503, message: 'overloaded' } });

    const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));

    expect(classification).toMatchObject({ type: 'ModelUnavailable', retryable: true, status: 503, message: 'overloaded' });
  });

  it('aborts the HTTP request when the signal fires during a delayed response', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ text: 'too late', delayMs: 30_000 });
    const controller = new AbortController();

    const call = rejectionOf(model.generate(simpleRequest(route), { abortSignal: controller.signal }));
    await server.waitForRequests(1);
    const abortedAt = Date.now();
    controller.abort();
    const error = await call;

    expect(classifyModelError(error).type).toBe(modelCallAborted);
    expect(classifyModelError(error).retryable).toBe(false);
    await server.waitFor((requests) => requests[0]?.aborted === true, 1_000, 'the server to notice the disconnect');
    expect((server.requests[0]?.finishedAt ?? Infinity) - abortedAt).toBeLessThan(1_000);
  });

  it("rejects with the signal's reason, so a Temporal cancellation stays a CancelledFailure", async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ text: 'too late', delayMs: 30_000 });
    const controller = new AbortController();

    const call = rejectionOf(model.generate(simpleRequest(route), { abortSignal: controller.signal }));
    await server.waitForRequests(1);
    const reason = new CancelledFailure('activity cancelled');
    controller.abort(reason);

    expect(await call).toBe(reason);
    expect(classifyModelError(reason).type).toBe(modelCallAborted);
    await server.waitFor((requests) => requests[0]?.aborted === true, 1_000, 'the server to notice the disconnect');
  });

  it('does not send a request when the signal has already fired', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    const error = await rejectionOf(model.generate(simpleRequest(route), { abortSignal: AbortSignal.abort() }));
    expect(classifyModelError(error).type).toBe(modelCallAborted);
    expect(server.requests).toHaveLength(0);
  });

  it('times out after requestTimeoutMs as a retryable ModelUnavailable', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible', { requestTimeoutMs: 300 });
    server.enqueue({ text: 'too late', delayMs: 30_000 });

    const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));

    expect(classification.type).toBe('ModelUnavailable');
    expect(classification.retryable).toBe(true);
    expect(classification.message).toContain('300 ms');
    await server.waitFor((requests) => requests[0]?.aborted === true, 1_000, 'the server to notice the disconnect');
  });

  it('fails loudly and non-retryably when the script is exhausted, and records the request', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ text: 'only one' });
    await model.generate(simpleRequest(route), {});

    const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));

    expect(classification.type).toBe('ScriptExhausted');
    expect(classification.retryable).toBe(false);
    expect(classification.message).toContain('script exhausted');
    expect(classification.message).toContain('1 step(s) were scripted');
    expect(server.exhaustedRequests).toHaveLength(1);
    expect(server.exhaustedRequests[0]?.callIndex).toBe(1);
  });

  it('keeps a tool call whose arguments are not a JSON object, marked invalid (the run answers it with a tool error)', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ toolCalls: [{ name: 'developer__list_directory', arguments: '{"path": ".', id: 'call_x' }] });

    const response = await model.generate(simpleRequest(route, 'x', [listDirectoryTool]), {});

    expect(response.toolCalls).toEqual([{ id: 'call_x', name: 'developer__list_directory', arguments: {}, invalidArguments: '{"path": ".' }]);
  });

  it('classifies a 200 response that is not JSON as ModelBadResponse', async () => {
    // A broken proxy in front of a provider: answers 200 with HTML. The scripted server only speaks valid
    // API JSON, so this uses a bare loopback server.
    const broken = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>gateway says hi</html>');
    });
    await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
    const address = broken.address();
    if (address === null || typeof address === 'string') throw new Error('no address');
    try {
      const { model, route } = modelAgainst(server, 'openai-compatible', { baseUrl: `http://127.0.0.1:${address.port}/v1` });
      const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));
      expect(classification).toMatchObject({ type: 'ModelBadResponse', retryable: false, status: 200 });
    } finally {
      await new Promise<void>((resolve) => broken.close(() => resolve()));
    }
  });

  it('classifies a refused connection as ModelUnavailable, retryable', async () => {
    const spare = await startScriptedOpenAIServer();
    await spare.close();
    const { model, route } = modelAgainst(spare, 'openai-compatible');

    const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));

    expect(classification.type).toBe('ModelUnavailable');
    expect(classification.retryable).toBe(true);
  });

  it('sends maxOutputTokens as max_tokens and reasoningEffort as reasoning_effort', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ text: 'ok' });

    await model.generate({ ...simpleRequest(route), maxOutputTokens: 321, reasoningEffort: 'high' }, {});

    expect(server.requests[0]?.body).toMatchObject({ max_tokens: 321, reasoning_effort: 'high' });
  });

  it('streams the text through onText in pieces and returns the same response as the whole answer', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    const text = 'Streaming works: every piece arrives in order, and the last one is the whole answer.';
    server.enqueue({ text, toolCalls: [{ name: 'developer__read_file', arguments: { path: 'README.md' }, id: 'call_r' }] });
    const seen: string[] = [];

    const response = await model.generate(simpleRequest(route, 'Stream please', [readFileTool]), { onText: (soFar) => seen.push(soFar) });

    expect(response).toMatchObject({ text, finishReason: 'tool-calls', toolCalls: [{ id: 'call_r', name: 'developer__read_file', arguments: { path: 'README.md' } }] });
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.at(-1)).toBe(text);
    for (const piece of seen) expect(text.startsWith(piece)).toBe(true);
  });

  it('comes back with finish reason length when the answer reaches max_tokens, dropping a call cut in half', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    const text = 'This answer is far too long for the limit it was given, so the server cuts it. '.repeat(3);
    server.enqueue({ text }, { text: 'tiny', toolCalls: [{ name: 'developer__read_file', arguments: { path: 'a-rather-long-file-name-that-does-not-fit.md' }, id: 'call_cut' }] });

    const cut = await model.generate({ ...simpleRequest(route), maxOutputTokens: 12 }, {});
    const cutCall = await model.generate({ ...simpleRequest(route, 'x', [readFileTool]), maxOutputTokens: 12 }, {});

    expect(cut).toMatchObject({ text: truncateToTokens(text, 12), finishReason: 'length', toolCalls: [], usage: { outputTokens: 12 } });
    expect(cutCall).toMatchObject({ text: 'tiny', finishReason: 'length', toolCalls: [] });
  });

  it('turns a stream broken off mid-answer into a retryable ModelUnavailable, and the retry succeeds', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    const text = 'The first attempt of this answer is cut off by a dropped connection.';
    server.enqueue({ text, breakAfterChars: 20 }, { text });
    const seen: string[] = [];

    const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), { onText: (soFar) => seen.push(soFar) })));
    const retry = await model.generate(simpleRequest(route), {});

    expect(classification).toMatchObject({ type: 'ModelUnavailable', retryable: true });
    expect(seen.at(-1)).toBe(text.slice(0, 20));
    expect(server.requests[0]?.broken).toBe(true);
    expect(retry.text).toBe(text);
  });

  it('stops the stream at once when aborted after the first text, and the server sees the disconnect', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ text: 'first piece, then a very long pause before the rest', chunkDelayMs: 30_000 });
    const controller = new AbortController();
    const seen: string[] = [];

    const error = await rejectionOf(
      model.generate(simpleRequest(route), {
        abortSignal: controller.signal,
        onText: (soFar) => {
          seen.push(soFar);
          controller.abort();
        },
      }),
    );

    expect(classifyModelError(error).type).toBe(modelCallAborted);
    expect(seen).toHaveLength(1);
    await server.waitFor((requests) => requests[0]?.aborted === true, 5_000, 'the server to notice the disconnect');
  });

  it('is rejected like OpenAI when a tool call has no result, without using a script step', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ text: 'never sent' });
    const request: ModelRequest = {
      route,
      tools: [listDirectoryTool],
      messages: [
        { role: 'system', content: 'You are a test.' },
        { role: 'user', content: 'Look around' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'call_lost', name: 'developer__list_directory', arguments: { path: '.' } }] },
        { role: 'user', content: 'Another message' },
      ],
    };

    const classification = classifyModelError(await rejectionOf(model.generate(request, {})));

    expect(classification).toEqual({
      type: 'ModelRequestRejected',
      message:
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_lost",
      retryable: false,
      status: 400,
    });
    expect(server.rejectedRequests).toHaveLength(1);
    expect(server.remainingSteps).toBe(1);
  });

  it('leaves an assistant turn that said nothing out of the request', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ text: 'ok' });

    await model.generate({ ...simpleRequest(route), messages: [...simpleRequest(route).messages, { role: 'assistant', content: '  ' }, { role: 'user', content: 'Hello?' }] }, {});

    expect(server.requests[0]?.body).toMatchObject({
      messages: [
        { role: 'system', content: 'You are a test.' },
        { role: 'user', content: 'Say hello' },
        { role: 'user', content: 'Hello?' },
      ],
    });
  });

  it("answers a prompt over the context window with OpenAI's context_length_exceeded, classified ModelContextOverflow", async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    const request = { ...simpleRequest(route, 'word '.repeat(200)), maxOutputTokens: 100 };
    const prompt = estimateTokens(request.messages);
    server.setContextWindow(prompt + 99);
    server.enqueue({ text: 'fits' });

    const classification = classifyModelError(await rejectionOf(model.generate(request, {})));
    server.setContextWindow(prompt + 100);
    const fits = await model.generate(request, {});

    expect(classification).toEqual({
      type: 'ModelContextOverflow',
      message: `This model's maximum context length is ${prompt + 99} tokens. However, you requested ${prompt + 100} tokens (${prompt} in the messages, 100 in the completion). Please reduce the length of the messages or completion.`,
      retryable: false,
      status: 400,
    });
    expect(fits.text).toBe('fits');
  });
});

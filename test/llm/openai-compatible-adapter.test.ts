import { createServer } from 'node:http';
import { CancelledFailure } from '@temporalio/common';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/contracts/model';
import { classifyModelError, modelCallAborted } from '../../src/llm/classify-model-error';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../../src/llm/scripted-openai-server';
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

    expect(response).toEqual({ text: 'Hello there.', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 11, outputTokens: 3 } });
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.api).toBe('chat-completions');
    expect(request?.headers.authorization).toBe(`Bearer ${testApiKey}`);
    expect(request?.headers['x-errand-test']).toBe('yes');
    expect(request?.body).toMatchObject({
      model: 'scripted-model-1',
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
    server.enqueue({ error: { status: 400, message: "This model's maximum context length is 8192 tokens." } });

    const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));

    expect(classification).toEqual({
      type: 'ModelRequestRejected',
      message: "This model's maximum context length is 8192 tokens.",
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

  it('classifies tool-call arguments that are not a JSON object as ModelBadResponse', async () => {
    const { model, route } = modelAgainst(server, 'openai-compatible');
    server.enqueue({ toolCalls: [{ name: 'developer__list_directory', arguments: '{"path": ".', id: 'call_x' }] });

    const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route, 'x', [listDirectoryTool]), {})));

    expect(classification.type).toBe('ModelBadResponse');
    expect(classification.retryable).toBe(false);
    expect(classification.message).toContain('developer__list_directory');
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
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/contracts/model';
import { classifyModelError, modelCallAborted } from '../../src/llm/classify-model-error';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../../src/llm/scripted-openai-server';
import { listDirectoryTool, modelAgainst, readFileTool, rejectionOf, simpleRequest, testApiKey } from './llm-test-helpers';

describe('Anthropic adapter against the scripted server (Messages API)', () => {
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

  it('returns a text answer with usage and sends the key, system prompt and messages', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    server.enqueue({ text: 'Hello from Claude.', usage: { inputTokens: 21, outputTokens: 4 } });

    const response = await model.generate(simpleRequest(route), {});

    expect(response).toEqual({ text: 'Hello from Claude.', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 21, outputTokens: 4 } });
    const [request] = server.requests;
    expect(request?.api).toBe('messages');
    expect(request?.headers['x-api-key']).toBe(testApiKey);
    expect(request?.headers['x-errand-test']).toBe('yes');
    expect(request?.body).toMatchObject({
      model: 'scripted-model-1',
      system: [{ type: 'text', text: 'You are a test.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello' }] }],
    });
  });

  it('parses two parallel tool calls and offers tools with their input schema', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    server.enqueue({
      text: 'Let me look.',
      toolCalls: [
        { name: 'developer__list_directory', arguments: { path: '.' }, id: 'toolu_a' },
        { name: 'developer__read_file', arguments: { path: 'README.md' }, id: 'toolu_b' },
      ],
    });

    const response = await model.generate(simpleRequest(route, 'Look around', [listDirectoryTool, readFileTool]), {});

    expect(response).toMatchObject({
      text: 'Let me look.',
      finishReason: 'tool-calls',
      toolCalls: [
        { id: 'toolu_a', name: 'developer__list_directory', arguments: { path: '.' } },
        { id: 'toolu_b', name: 'developer__read_file', arguments: { path: 'README.md' } },
      ],
    });
    expect(server.requests[0]?.body).toMatchObject({
      tools: [
        { name: 'developer__list_directory', description: 'List a directory', input_schema: listDirectoryTool.inputSchema },
        { name: 'developer__read_file', input_schema: readFileTool.inputSchema },
      ],
    });
  });

  it('sends tool calls and results (with is_error) and turns a late system message into user text', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    server.enqueue({ text: 'Done.' });
    const request: ModelRequest = {
      route,
      tools: [listDirectoryTool, readFileTool],
      messages: [
        { role: 'system', content: 'You are a test.' },
        { role: 'user', content: 'Look around' },
        {
          role: 'assistant',
          content: '',
          toolCalls: [
            { id: 'toolu_a', name: 'developer__list_directory', arguments: { path: '.' } },
            { id: 'toolu_b', name: 'developer__read_file', arguments: { path: 'missing.md' } },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_a', toolName: 'developer__list_directory', content: 'a.txt' },
        { role: 'tool', toolCallId: 'toolu_b', toolName: 'developer__read_file', content: 'no such file', isError: true },
        { role: 'system', content: 'You have used 13 of 25 turns.' },
      ],
    };

    await model.generate(request, {});

    expect(server.requests[0]?.body).toMatchObject({
      system: [{ type: 'text', text: 'You are a test.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Look around' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_a', name: 'developer__list_directory', input: { path: '.' } },
            { type: 'tool_use', id: 'toolu_b', name: 'developer__read_file', input: { path: 'missing.md' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: 'a.txt' },
            { type: 'tool_result', tool_use_id: 'toolu_b', content: 'no such file', is_error: true },
            { type: 'text', text: '[system] You have used 13 of 25 turns.' },
          ],
        },
      ],
    });
  });

  it('classifies 429 with retry-after, 400 with the provider message, and 529 as unavailable', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    server.enqueue(
      { error: { status: 429, message: 'Number of request tokens has exceeded your per-minute rate limit', retryAfterSeconds: 3 } },
      { error: { status: 400, message: 'messages: text content blocks must be non-empty' } },
      { error: { status: 529, message: 'Overloaded' } },
    );

    const rateLimited = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));
    const rejected = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));
    const overloaded = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));

    expect(rateLimited).toEqual({
      type: 'ModelRateLimited',
      message: 'Number of request tokens has exceeded your per-minute rate limit',
      retryable: true,
      retryAfterMs: 3000,
      status: 429,
    });
    expect(rejected).toEqual({ type: 'ModelRequestRejected', message: 'messages: text content blocks must be non-empty', retryable: false, status: 400 });
    expect(overloaded).toMatchObject({ type: 'ModelUnavailable', retryable: true, status: 529 });
  });

  it('aborts the HTTP request when the signal fires', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    server.enqueue({ text: 'too late', delayMs: 30_000 });
    const controller = new AbortController();

    const call = rejectionOf(model.generate(simpleRequest(route), { abortSignal: controller.signal }));
    await server.waitForRequests(1);
    controller.abort();

    expect(classifyModelError(await call).type).toBe(modelCallAborted);
    await server.waitFor((requests) => requests[0]?.aborted === true, 1_000, 'the server to notice the disconnect');
  });

  it('fails loudly when the script is exhausted', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');

    const classification = classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {})));

    expect(classification).toMatchObject({ type: 'ScriptExhausted', retryable: false });
    expect(server.exhaustedRequests).toHaveLength(1);
  });
});

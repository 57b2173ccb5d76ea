import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { anthropicThinkingBudgets, defaultMaxOutputTokens } from '../../src/contracts/limits/llm';
import type { ModelRequest } from '../../src/contracts/model';
import { estimateTokens, truncateToTokens } from '../../src/domain/token-estimate';
import { classifyModelError, modelCallAborted } from '../../src/llm/classify-model-error';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
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

    expect(response).toEqual({ text: 'Hello from Claude.', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 21, outputTokens: 4, unpricedCalls: 1 } });
    const [request] = server.requests;
    expect(request?.api).toBe('messages');
    expect(request?.headers['x-api-key']).toBe(testApiKey);
    expect(request?.headers['x-errand-test']).toBe('yes');
    expect(request?.streamed).toBe(true);
    expect(request?.body).toMatchObject({
      model: 'scripted-model-1',
      stream: true,
      max_tokens: defaultMaxOutputTokens,
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

  it('sends a reasoning effort as a thinking budget on top of max_tokens, and refuses an effort it cannot map', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    server.enqueue({ text: 'Thought about it.' });

    await model.generate({ ...simpleRequest(route), maxOutputTokens: 2000, reasoningEffort: 'medium' }, {});
    const unknown = classifyModelError(await rejectionOf(model.generate({ ...simpleRequest(route), reasoningEffort: 'extreme' }, {})));

    expect(server.requests[0]?.body).toMatchObject({
      max_tokens: 2000 + anthropicThinkingBudgets.medium,
      thinking: { type: 'enabled', budget_tokens: anthropicThinkingBudgets.medium },
    });
    expect(unknown).toMatchObject({ type: 'InvalidInput', retryable: false });
    expect(unknown.message).toContain('reasoning effort "extreme" is not one Anthropic models take; use low, medium, high');
    expect(server.requests).toHaveLength(1);
  });

  it('streams text through onText, and maps stop_reason max_tokens to finish reason length', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    const text = 'An answer that is longer than twelve tokens, so the Messages API stops it at max_tokens.';
    server.enqueue({ text });
    const seen: string[] = [];

    const response = await model.generate({ ...simpleRequest(route), maxOutputTokens: 12 }, { onText: (soFar) => seen.push(soFar) });

    expect(response).toMatchObject({ text: truncateToTokens(text, 12), finishReason: 'length', usage: { outputTokens: 12 } });
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.at(-1)).toBe(response.text);
  });

  it("answers a prompt over the context window with Anthropic's prompt is too long, classified ModelContextOverflow", async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    const request = { ...simpleRequest(route, 'word '.repeat(100)), maxOutputTokens: 10 };
    const prompt = estimateTokens(request.messages);
    server.setContextWindow(prompt - 1);

    const tooLong = classifyModelError(await rejectionOf(model.generate(request, {})));
    server.setContextWindow(prompt + 5);
    const withOutput = classifyModelError(await rejectionOf(model.generate(request, {})));

    expect(tooLong).toEqual({ type: 'ModelContextOverflow', message: `prompt is too long: ${prompt} tokens > ${prompt - 1} maximum`, retryable: false, status: 400 });
    expect(withOutput).toMatchObject({ type: 'ModelContextOverflow', message: `input length and \`max_tokens\` exceed context limit: ${prompt} + 10 > ${prompt + 5}, decrease input length or \`max_tokens\` and try again` });
    expect(server.rejectedRequests).toHaveLength(2);
  });

  it('is rejected like Anthropic when a tool_use has no tool_result right after it', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    server.enqueue({ text: 'never sent' });
    const request: ModelRequest = {
      route,
      tools: [listDirectoryTool],
      messages: [
        { role: 'system', content: 'You are a test.' },
        { role: 'user', content: 'Look around' },
        { role: 'assistant', content: 'Looking.', toolCalls: [{ id: 'toolu_lost', name: 'developer__list_directory', arguments: { path: '.' } }] },
        { role: 'user', content: 'Another message' },
      ],
    };

    const classification = classifyModelError(await rejectionOf(model.generate(request, {})));

    expect(classification).toEqual({
      type: 'ModelRequestRejected',
      message:
        'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_lost. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
      retryable: false,
      status: 400,
    });
    expect(server.remainingSteps).toBe(1);
  });

  it('returns signed thinking, sends it back first in the assistant turn, and keeps thinking on for the tool results', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    server.enqueue(
      { reasoning: 'The user wants a listing; list_directory does that.', toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' }, id: 'toolu_think' }] },
      { text: 'Two files.' },
    );
    const first: ModelRequest = { ...simpleRequest(route, 'Look around', [listDirectoryTool]), reasoningEffort: 'low' };

    const answer = await model.generate(first, {});
    expect(answer.reasoning).toEqual([{ text: 'The user wants a listing; list_directory does that.', signature: 'scripted-signature-0' }]);
    const followUp: ModelRequest = {
      ...first,
      messages: [
        ...first.messages,
        { role: 'assistant', content: answer.text, toolCalls: answer.toolCalls, ...(answer.reasoning ? { reasoning: answer.reasoning } : {}) },
        { role: 'tool', toolCallId: 'toolu_think', toolName: 'developer__list_directory', content: 'a.txt\nb.txt' },
      ],
    };
    expect((await model.generate(followUp, {})).text).toBe('Two files.');

    expect(server.rejectedRequests).toEqual([]);
    expect(server.requests[1]?.body).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: anthropicThinkingBudgets.low },
      messages: [
        { role: 'user' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'The user wants a listing; list_directory does that.', signature: 'scripted-signature-0' },
            { type: 'tool_use', id: 'toolu_think' },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_think' }] },
      ],
    });
  });

  it('answers tool results without thinking when the calling turn kept none, instead of being refused', async () => {
    const { model, route } = modelAgainst(server, 'anthropic');
    server.enqueue({ text: 'Done without thinking.' });
    const request: ModelRequest = {
      route,
      tools: [listDirectoryTool],
      reasoningEffort: 'high',
      messages: [
        { role: 'system', content: 'You are a test.' },
        { role: 'user', content: 'Look around' },
        { role: 'assistant', content: '', toolCalls: [{ id: 'toolu_plain', name: 'developer__list_directory', arguments: { path: '.' } }] },
        { role: 'tool', toolCallId: 'toolu_plain', toolName: 'developer__list_directory', content: 'a.txt' },
      ],
    };

    expect((await model.generate(request, {})).text).toBe('Done without thinking.');
    expect(server.requests[0]?.body).not.toHaveProperty('thinking');
    expect(server.rejectedRequests).toEqual([]);
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { estimateTokens, truncateToTokens } from '../../src/domain/token-estimate';
import { classifyModelError } from '../../src/llm/classify-model-error';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { modelAgainst, rejectionOf, simpleRequest } from './llm-test-helpers';

const mainFile = resolve(__dirname, '../support/scripted-openai-server-main.ts');

/** Starts the server as a separate process and reads its URL from the first line of stdout. */
async function startServerProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', mainFile], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolveUrl, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => resolveUrl(line.trim()));
    child.once('exit', (code) => reject(new Error(`server process exited with ${String(code)}: ${stderr}`)));
  });
  return { child, url };
}

const requestLogSchema = z.object({
  requests: z.array(z.object({ callIndex: z.number(), api: z.string(), aborted: z.boolean(), exhausted: z.boolean(), body: z.unknown() })),
  remaining: z.number(),
});

const chunkSchema = z.object({
  object: z.string(),
  choices: z.array(
    z.object({
      delta: z
        .object({
          role: z.string().optional(),
          content: z.string().nullish(),
          tool_calls: z.array(z.object({ index: z.number(), id: z.string().optional(), type: z.string().optional(), function: z.object({ name: z.string().optional(), arguments: z.string().optional() }).optional() })).optional(),
        })
        .optional(),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: z.unknown().optional(),
});

const anthropicDeltaSchema = z.object({ type: z.literal('content_block_delta'), index: z.number(), delta: z.object({ type: z.string(), text: z.string().optional(), partial_json: z.string().optional() }) });

describe('scripted OpenAI-compatible server', () => {
  let server: ScriptedOpenAIServer;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
  });
  afterAll(async () => {
    await server.close();
  });

  afterEach(() => {
    server.reset();
  });

  const post = (path: string, body: unknown): Promise<Response> =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  /** The `data:` payloads of a server-sent event stream, and the event names (Anthropic names its events). */
  const readEvents = async (response: Response): Promise<{ names: string[]; data: unknown[]; raw: string }> => {
    const raw = await response.text();
    const blocks = raw.split('\n\n').filter((block) => block.trim() !== '');
    const names = blocks.flatMap((block) => block.split('\n').filter((line) => line.startsWith('event: ')).map((line) => line.slice('event: '.length)));
    const data = blocks.map((block) => {
      const line = block.split('\n').find((candidate) => candidate.startsWith('data: ')) ?? '';
      const payload = line.slice('data: '.length);
      if (payload === '[DONE]') return payload;
      const parsed: unknown = JSON.parse(payload);
      return parsed;
    });
    return { names, data, raw };
  };

  it('answers unknown routes with a 404 that lists the routes it serves', async () => {
    const unknown = await fetch(`${server.url}/embeddings`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('POST /v1/chat/completions');
  });

  it('streams an OpenAI answer as chat.completion.chunk events: role, text deltas, tool-call deltas, finish, usage, [DONE]', async () => {
    server.enqueue({ text: 'Hello there, streaming.', toolCalls: [{ name: 'ls', arguments: { path: '.' }, id: 'call_1' }], usage: { inputTokens: 7, outputTokens: 9 } });

    const response = await post('/chat/completions', {
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const { data } = await readEvents(response);

    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = chunkSchema.array().parse(data.slice(0, -1));
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0]?.choices[0]?.delta).toMatchObject({ role: 'assistant' });
    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('Hello there, streaming.');
    expect(chunks.filter((chunk) => (chunk.choices[0]?.delta?.content ?? '') !== '').length).toBeGreaterThan(1);
    const toolDeltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    expect(toolDeltas[0]).toMatchObject({ index: 0, id: 'call_1', type: 'function', function: { name: 'ls', arguments: '' } });
    expect(toolDeltas.map((delta) => delta.function?.arguments ?? '').join('')).toBe('{"path":"."}');
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter((reason) => reason !== null && reason !== undefined)).toEqual(['tool_calls']);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 9, total_tokens: 16 } });
  });

  it('streams an Anthropic answer as message_start … content_block_delta … message_delta, message_stop', async () => {
    server.enqueue({ text: 'Hi from Claude.', toolCalls: [{ name: 'ls', arguments: { path: '.' }, id: 'toolu_1' }] });

    const response = await post('/messages', { model: 'm', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const { names, data } = await readEvents(response);

    expect(names[0]).toBe('message_start');
    expect(names.at(-2)).toBe('message_delta');
    expect(names.at(-1)).toBe('message_stop');
    expect(names.filter((name) => name === 'content_block_start')).toHaveLength(2);
    expect(names.filter((name) => name === 'content_block_stop')).toHaveLength(2);
    const deltas = anthropicDeltaSchema.array().parse(data.filter((event) => anthropicDeltaSchema.safeParse(event).success));
    expect(deltas.map((event) => event.delta.text ?? '').join('')).toBe('Hi from Claude.');
    expect(deltas.map((event) => event.delta.partial_json ?? '').join('')).toBe('{"path":"."}');
    expect(data.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'tool_use' } });
  });

  it('cuts an answer at max_tokens with finish_reason length (OpenAI) and stop_reason max_tokens (Anthropic)', async () => {
    server.enqueue({ text: 'word '.repeat(50) }, { text: 'word '.repeat(50) });

    const openai = z.object({ choices: z.array(z.object({ finish_reason: z.string(), message: z.object({ content: z.string() }) })), usage: z.object({ completion_tokens: z.number() }) });
    const anthropic = z.object({ stop_reason: z.string(), content: z.array(z.object({ text: z.string() })), usage: z.object({ output_tokens: z.number() }) });
    const cutOpenAI = openai.parse(await (await post('/chat/completions', { model: 'm', max_completion_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).json());
    const cutAnthropic = anthropic.parse(await (await post('/messages', { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })).json());

    expect(cutOpenAI.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: truncateToTokens('word '.repeat(50), 5) } });
    expect(cutOpenAI.usage.completion_tokens).toBe(5);
    expect(cutAnthropic).toMatchObject({ stop_reason: 'max_tokens', content: [{ text: truncateToTokens('word '.repeat(50), 5) }], usage: { output_tokens: 5 } });
  });

  it("rejects what the Messages API rejects, with Anthropic's error body, and uses no step for it", async () => {
    server.enqueue({ text: 'unused' });
    const user = { role: 'user', content: 'hi' };
    const cases: Array<[unknown, string]> = [
      [{ model: 'm', messages: [user] }, 'max_tokens: Field required'],
      [{ model: 'm', max_tokens: 10, messages: [{ role: 'assistant', content: 'I start' }] }, 'messages: first message must use the "user" role'],
      [{ model: 'm', max_tokens: 10, messages: [user, user] }, 'messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row'],
      [{ model: 'm', max_tokens: 10, messages: [user, { role: 'system', content: 'late' }] }, "messages.1.role: Input should be 'user' or 'assistant'"],
      [{ model: 'm', max_tokens: 10, messages: [user, { role: 'assistant', content: [{ type: 'text', text: '' }] }, user] }, 'messages: text content blocks must be non-empty'],
      [
        { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'orphan' }] }] },
        'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
      ],
      [{ model: 'm', max_tokens: 1000, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [user] }, '`max_tokens` must be greater than `thinking.budget_tokens`.'],
      [
        {
          model: 'm',
          max_tokens: 3000,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          messages: [
            user,
            { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ls', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' }] },
          ],
        },
        'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`.',
      ],
    ];
    for (const [body, message] of cases) {
      const response = await post('/messages', body);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message }, request_id: 'req_scripted' });
    }
    expect(server.rejectedRequests).toHaveLength(cases.length);
    expect(server.remainingSteps).toBe(1);
  });

  it('takes the Anthropic betas Claude Code uses only when anthropic-beta names them: system messages between turns, deferred tools and their references', async () => {
    const user = { role: 'user', content: 'hi' };
    const deferred = { name: 'mcp__errand__delegate', description: 'delegate', input_schema: { type: 'object' }, defer_loading: true };
    const search = { name: 'ToolSearch', description: 'find tools', input_schema: { type: 'object' } };
    const referenced = (name: string) => [
      user,
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'ToolSearch', input: { query: 'select:x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'tool_reference', tool_name: name }] }] },
    ];
    const withBetas = (betas: string, body: unknown) =>
      fetch(`${server.url}/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-beta': betas }, body: JSON.stringify(body) });
    const refusals: Array<[string, unknown, string]> = [
      ['', { model: 'm', max_tokens: 10, messages: [user, { role: 'system', content: 'between turns' }] }, "messages.1.role: Input should be 'user' or 'assistant'"],
      ['per-turn-control-2026-07-01', { model: 'm', max_tokens: 10, messages: [user, { role: 'system', content: [{ type: 'image', source: {} }] }] }, "messages.1.content.0.type: Input should be 'text'"],
      ['', { model: 'm', max_tokens: 10, tools: [search, deferred], messages: [user] }, 'tools.1.custom.defer_loading: Extra inputs are not permitted'],
      ['advanced-tool-use-2025-11-20', { model: 'm', max_tokens: 10, tools: [search, deferred], messages: referenced('mcp__other__tool') }, "messages.2.content.0: tool_reference names tool 'mcp__other__tool', which is not in `tools`"],
    ];
    for (const [betas, body, message] of refusals) {
      const response = await withBetas(betas, body);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message }, request_id: 'req_scripted' });
    }
    expect(server.rejectedRequests).toHaveLength(refusals.length);
    server.enqueue({ text: 'one' }, { text: 'two' });
    const system = await withBetas('claude-code-20250219, per-turn-control-2026-07-01', { model: 'm', max_tokens: 10, messages: [user, { role: 'system', content: [{ type: 'text', text: 'between turns' }] }] });
    expect(system.status).toBe(200);
    const reference = await withBetas('advanced-tool-use-2025-11-20', { model: 'm', max_tokens: 10, tools: [search, deferred], messages: referenced('mcp__errand__delegate') });
    expect(reference.status).toBe(200);
    expect(server.rejectedRequests).toHaveLength(refusals.length);
  });

  it("rejects what Chat Completions rejects, with OpenAI's error body", async () => {
    const cases: Array<[unknown, { message: string; code: string | null; param: string | null }]> = [
      [{ model: 'm', messages: [] }, { message: "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", code: 'empty_array', param: 'messages' }],
      [
        { model: 'm', messages: [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'call_x', content: 'orphan' }] },
        { message: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", code: null, param: 'messages.[1].role' },
      ],
      [{ model: 'm', stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] }, { message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.", code: null, param: 'stream_options' }],
    ];
    for (const [body, error] of cases) {
      const response = await post('/chat/completions', body);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: { ...error, type: 'invalid_request_error' } });
    }
  });

  it('counts the window with the shared estimate: prompt plus max_tokens must fit', async () => {
    const messages = [{ role: 'user', content: 'x'.repeat(350) }];
    const prompt = estimateTokens([{ role: 'user', content: 'x'.repeat(350) }]);
    server.setContextWindow(prompt + 10);
    server.enqueue({ text: 'fits' });

    const over = await post('/chat/completions', { model: 'm', max_tokens: 11, messages });
    const fits = await post('/chat/completions', { model: 'm', max_tokens: 10, messages });

    expect(over.status).toBe(400);
    expect(await over.json()).toMatchObject({ error: { code: 'context_length_exceeded', param: 'messages', type: 'invalid_request_error' } });
    expect(fits.status).toBe(200);
  });

  it('drops the connection after breakAfterChars characters of a streamed answer', async () => {
    server.enqueue({ text: 'abcdefghijklmnopqrstuvwxyz', breakAfterChars: 10 });

    const response = await post('/chat/completions', { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const reader = response.body!.getReader();
    let received = '';
    const failure = await (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return undefined;
          received += new TextDecoder().decode(value);
        }
      } catch (error) {
        return error;
      }
    })();

    expect(failure).toBeInstanceOf(TypeError);
    expect(received).toContain('"content":"abcdefgh"');
    expect(received).toContain('"content":"ij"');
    expect(received).not.toContain('klmn');
    expect(received).not.toContain('[DONE]');
    expect(server.requests[0]).toMatchObject({ broken: true, aborted: false });
  });

  it('answers from a responder that sees the recorded request', async () => {
    server.setResponder((request) => ({ text: `you sent ${JSON.stringify(request.body).length} bytes as call ${request.callIndex}` }));
    const { model, route } = modelAgainst(server, 'openai-compatible');
    const response = await model.generate(simpleRequest(route), {});
    expect(response.text).toMatch(/^you sent \d+ bytes as call 0$/);
    server.setResponder(undefined);
  });
});

describe('scripted server as a separate process', () => {
  let child: ChildProcess | undefined;
  let url = '';
  let directory = '';

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'errand-scripted-'));
    const scriptFile = join(directory, 'script.json');
    writeFileSync(scriptFile, JSON.stringify({ steps: [{ text: 'from the file' }] }));
    ({ child, url } = await startServerProcess({ ERRAND_SCRIPTED_SERVER_SCRIPT: scriptFile }));
  });
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolveExit) => child?.once('exit', resolveExit));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(directory, { recursive: true, force: true });
  });

  it('serves the script from its file, then steps enqueued through the control API, and reports its log', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const base = url.replace(/\/v1$/, '');
    const { model, route } = modelAgainst({ url }, 'openai-compatible');

    expect((await model.generate(simpleRequest(route), {})).text).toBe('from the file');

    const enqueue = await fetch(`${base}/__script`, { method: 'POST', body: JSON.stringify([{ toolCalls: [{ name: 'ping', arguments: { n: 1 } }] }]) });
    expect(await enqueue.json()).toEqual({ queued: 1, remaining: 1 });
    expect((await model.generate(simpleRequest(route), {})).toolCalls).toEqual([{ id: 'call_1_0', name: 'ping', arguments: { n: 1 } }]);

    expect(classifyModelError(await rejectionOf(model.generate(simpleRequest(route), {}))).type).toBe('ScriptExhausted');

    const log = requestLogSchema.parse(await (await fetch(`${base}/__requests`)).json());
    expect(log.requests.map((request) => [request.callIndex, request.exhausted])).toEqual([
      [0, false],
      [1, false],
      [2, true],
    ]);

    const bad = await fetch(`${base}/__script`, { method: 'POST', body: JSON.stringify([{ txt: 'typo' }]) });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('not a valid model script');

    await fetch(`${base}/__reset`, { method: 'POST' });
    expect(requestLogSchema.parse(await (await fetch(`${base}/__requests`)).json())).toEqual({ requests: [], remaining: 0 });
  });
});

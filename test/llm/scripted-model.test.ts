import { describe, expect, it } from 'vitest';
import type { ChatMessage, ModelRequest } from '../../src/contracts/model';
import { estimateTextTokens, estimateTokens, truncateToTokens } from '../../src/domain/token-estimate';
import { classifyModelError, modelCallAborted } from '../../src/llm/classify-model-error';
import { ScriptedModel } from '../../src/llm/scripted-model';
import { rejectionOf } from './llm-test-helpers';

const route = { provider: 'fake', model: 'm' };
function request(text: string): ModelRequest {
  return { route, messages: [{ role: 'user', content: text }], tools: [] };
}

describe('scripted in-process model', () => {
  it('answers from a queue of steps and records deep copies of the requests with their call index', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'read', arguments: { path: 'a' } }, { name: 'read', arguments: { path: 'b' }, id: 'mine' }] },
      { text: 'done', usage: { inputTokens: 5, outputTokens: 2 } },
    ]);
    const first = request('go');
    const answer1 = await model.generate(first, {});
    first.messages.push({ role: 'user', content: 'mutated after the call' });
    const answer2 = await model.generate(request('again'), {});

    expect(answer1).toMatchObject({
      text: '',
      finishReason: 'tool-calls',
      toolCalls: [
        { id: 'call_0_0', name: 'read', arguments: { path: 'a' } },
        { id: 'mine', name: 'read', arguments: { path: 'b' } },
      ],
    });
    expect(answer2).toEqual({ text: 'done', toolCalls: [], finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 2 } });
    expect(model.calls.map((call) => call.callIndex)).toEqual([0, 1]);
    expect(model.requests[0]?.messages).toEqual([{ role: 'user', content: 'go' }]);
    expect(model.remainingSteps).toBe(0);
    expect(model.exhaustedCalls).toBe(0);
  });

  it('returns scripted thinking as a signed reasoning block', async () => {
    const model = new ScriptedModel([{ reasoning: 'Think first.', text: 'Then answer.' }, { text: 'No thinking.' }]);
    expect((await model.generate(request('a'), {})).reasoning).toEqual([{ text: 'Think first.', signature: 'scripted-signature-0' }]);
    expect(await model.generate(request('b'), {})).not.toHaveProperty('reasoning');
  });

  it('estimates usage deterministically when the step gives none', async () => {
    const model = new ScriptedModel([{ text: 'abcdefgh' }, { text: 'abcdefgh' }]);
    const a = await model.generate(request('same'), {});
    const b = await model.generate(request('same'), {});
    expect(a.usage).toEqual(b.usage);
    expect(a.usage.outputTokens).toBe(estimateTextTokens('abcdefgh'));
    expect(a.usage.inputTokens).toBe(estimateTokens(request('same').messages));
  });

  it('answers from a responder that sees the request and the call index', async () => {
    const model = new ScriptedModel((received, callIndex) => ({ text: `#${callIndex}: ${received.messages.at(-1)?.content ?? ''}` }));
    expect((await model.generate(request('one'), {})).text).toBe('#0: one');
    expect((await model.generate(request('two'), {})).text).toBe('#1: two');
  });

  it('fails loudly and non-retryably when the script runs out, saying how many calls were scripted', async () => {
    const model = new ScriptedModel([{ text: 'only' }], { name: 'subagent model' });
    await model.generate(request('first'), {});

    const error = await rejectionOf(model.generate(request('second'), {}));
    const classification = classifyModelError(error);

    expect(classification.type).toBe('ScriptExhausted');
    expect(classification.retryable).toBe(false);
    expect(classification.message).toBe(
      'subagent model: script exhausted — 1 call(s) were scripted, and call #2 has no step; last message: user: "second"',
    );
    expect(model.exhaustedCalls).toBe(1);
    expect(model.calls).toHaveLength(2);

    const responder = new ScriptedModel(() => undefined);
    expect(classifyModelError(await rejectionOf(responder.generate(request('x'), {}))).type).toBe('ScriptExhausted');
  });

  it('rejects with an abort when the signal fires during delayMs', async () => {
    const model = new ScriptedModel([{ text: 'late', delayMs: 30_000 }]);
    const controller = new AbortController();
    const started = Date.now();
    const call = rejectionOf(model.generate(request('wait'), { abortSignal: controller.signal }));
    setTimeout(() => controller.abort(), 20);

    const error = await call;

    expect(classifyModelError(error).type).toBe(modelCallAborted);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('raises scripted errors exactly as a provider would (429 with retry-after, 400 rejected)', async () => {
    const model = new ScriptedModel([
      { error: { status: 429, message: 'slow down', retryAfterSeconds: 2 } },
      { error: { status: 400, message: 'bad tool schema' } },
    ]);
    expect(classifyModelError(await rejectionOf(model.generate(request('a'), {})))).toEqual({
      type: 'ModelRateLimited',
      message: 'slow down',
      retryable: true,
      retryAfterMs: 2000,
      status: 429,
    });
    expect(classifyModelError(await rejectionOf(model.generate(request('b'), {})))).toEqual({
      type: 'ModelRequestRejected',
      message: 'bad tool schema',
      retryable: false,
      status: 400,
    });
  });

  it('keeps a call whose raw arguments are not a JSON object, with {} and the raw text marked invalid', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'read', arguments: '[1, 2]' }] }]);
    const response = await model.generate(request('a'), {});
    expect(response.toolCalls).toEqual([expect.objectContaining({ name: 'read', arguments: {}, invalidArguments: '[1, 2]' })]);
  });

  it('records a rejection instead of answering when the request is invalid, and keeps the step for the next call', async () => {
    const model = new ScriptedModel([{ text: 'fine' }]);
    const broken = conversation({ role: 'assistant', content: '', toolCalls: [{ id: 'call_a', name: 'read', arguments: {} }] }, { role: 'user', content: 'and now?' });

    const classification = classifyModelError(await rejectionOf(model.generate(broken, {})));

    expect(classification).toEqual({
      type: 'ModelRequestRejected',
      message:
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_a",
      retryable: false,
      status: 400,
    });
    expect(model.rejectedCalls.map((call) => call.callIndex)).toEqual([0]);
    expect(model.remainingSteps).toBe(1);
    expect((await model.generate(request('valid'), {})).text).toBe('fine');
  });

  it('rejects every way a tool call can go unanswered or a result can answer nothing', async () => {
    const call = (id: string): ChatMessage => ({ role: 'assistant', content: '', toolCalls: [{ id, name: 'read', arguments: {} }] });
    const result = (id: string): ChatMessage => ({ role: 'tool', toolCallId: id, toolName: 'read', content: 'ok' });
    const cases: Array<[ChatMessage[], RegExp]> = [
      [[call('a')], /did not have response messages: a$/],
      [[call('a'), { role: 'assistant', content: 'more' }], /did not have response messages: a$/],
      [[result('x')], /role 'tool' must be a response to a preceeding message with 'tool_calls'/],
      [[call('a'), result('b')], /tool_call_id b answers no pending call/],
      [[call('a'), result('a'), result('a')], /tool_call_id a answers no pending call/],
      [[{ role: 'assistant', content: 'two calls', toolCalls: [{ id: 'a', name: 'r', arguments: {} }, { id: 'b', name: 'r', arguments: {} }] }, result('b')], /did not have response messages: a$/],
    ];
    for (const [messages, expected] of cases) {
      const model = new ScriptedModel([{ text: 'unused' }]);
      const error = classifyModelError(await rejectionOf(model.generate(conversation(...messages), {})));
      expect(error.type).toBe('ModelRequestRejected');
      expect(error.message).toMatch(expected);
      expect(model.remainingSteps).toBe(1);
    }
  });

  it("rejects what Anthropic rejects: a late system message, an assistant first, empty user text", async () => {
    const cases: Array<[ChatMessage[], string]> = [
      [[{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }, { role: 'system', content: 'You have used 13 of 25 turns.' }], 'messages.[2]: a system message after the conversation has started is not accepted'],
      [[{ role: 'system', content: 'sys' }, { role: 'assistant', content: 'I start' }], 'messages: first message must use the "user" role'],
      [[{ role: 'user', content: '' }], 'messages: text content blocks must be non-empty'],
      [[{ role: 'user', content: '  \n' }], 'messages: text content blocks must contain non-whitespace text'],
    ];
    for (const [messages, expected] of cases) {
      const model = new ScriptedModel([{ text: 'unused' }]);
      const error = classifyModelError(await rejectionOf(model.generate({ route, messages, tools: [] }, {})));
      expect(error).toMatchObject({ type: 'ModelRequestRejected', status: 400 });
      expect(error.message).toContain(expected);
    }
  });

  it('accepts a valid conversation: parallel calls answered in any order, then more user text', async () => {
    const model = new ScriptedModel([{ text: 'done' }]);
    const valid = conversation(
      { role: 'assistant', content: 'Looking.', toolCalls: [{ id: 'a', name: 'read', arguments: { path: 'x' } }, { id: 'b', name: 'read', arguments: { path: 'y' } }] },
      { role: 'tool', toolCallId: 'b', toolName: 'read', content: 'y body' },
      { role: 'tool', toolCallId: 'a', toolName: 'read', content: 'not run: the turn limit was reached', isError: true },
      { role: 'user', content: 'Go on' },
      { role: 'user', content: 'Please' },
    );
    expect((await model.generate(valid, {})).text).toBe('done');
    expect(model.rejectedCalls).toEqual([]);
  });

  it('rejects a prompt that does not fit the context window with OpenAI\'s context_length_exceeded, classified ModelContextOverflow', async () => {
    const fits = { ...request('x'.repeat(400)), maxOutputTokens: 50 };
    const needed = estimateTokens(fits.messages) + 50;
    const model = new ScriptedModel([{ text: 'fits exactly' }], { contextWindow: needed });

    expect((await model.generate(fits, {})).text).toBe('fits exactly');
    const over = { ...fits, maxOutputTokens: 51 };
    const classification = classifyModelError(await rejectionOf(model.generate(over, {})));

    expect(classification).toEqual({
      type: 'ModelContextOverflow',
      message: `This model's maximum context length is ${needed} tokens. However, you requested ${needed + 1} tokens (${needed - 50} in the messages, 51 in the completion). Please reduce the length of the messages or completion.`,
      retryable: false,
      status: 400,
    });
    expect(model.rejectedCalls).toHaveLength(1);
  });

  it('cuts an answer at maxOutputTokens: finish reason length, usage at the limit, calls that do not fit dropped', async () => {
    const text = 'A long answer that goes on and on about many things. '.repeat(5);
    const model = new ScriptedModel([
      { text, toolCalls: [{ name: 'read', arguments: { path: 'a' } }] },
      { text: 'short', toolCalls: [{ name: 'read', arguments: { path: 'a' } }] },
    ]);

    const cut = await model.generate({ ...request('go'), maxOutputTokens: 10 }, {});
    const whole = await model.generate({ ...request('go'), maxOutputTokens: 1000 }, {});

    expect(cut).toMatchObject({ text: truncateToTokens(text, 10), toolCalls: [], finishReason: 'length', usage: { outputTokens: 10 } });
    expect(text.startsWith(cut.text)).toBe(true);
    expect(cut.text.length).toBeLessThan(text.length);
    expect(whole).toMatchObject({ text: 'short', finishReason: 'tool-calls', toolCalls: [{ name: 'read', arguments: { path: 'a' } }] });
  });

  it('streams the text through onText in growing pieces; the response is the same as without', async () => {
    const text = 'one two three four five six seven eight nine ten eleven twelve';
    const model = new ScriptedModel([{ text }, { text }], { streamChunkChars: 10 });
    const seen: string[] = [];

    const streamed = await model.generate(request('go'), { onText: (soFar) => seen.push(soFar) });
    const plain = await model.generate(request('go'), {});

    expect(streamed).toEqual(plain);
    expect(seen).toHaveLength(Math.ceil(text.length / 10));
    expect(seen.at(-1)).toBe(text);
    seen.forEach((piece, index) => {
      expect(text.startsWith(piece)).toBe(true);
      if (index > 0) expect(piece.length).toBeGreaterThan(seen[index - 1]!.length);
    });
  });

  it('breaks the answer off like a dropped connection (retryable), and the retry gets the next step', async () => {
    const model = new ScriptedModel([{ text: 'The answer is forty-two.', breakAfterChars: 8 }, { text: 'The answer is forty-two.' }], { streamChunkChars: 4 });
    const seen: string[] = [];

    const classification = classifyModelError(await rejectionOf(model.generate(request('go'), { onText: (soFar) => seen.push(soFar) })));
    const retry = await model.generate(request('go'), {});

    expect(seen).toEqual(['The ', 'The answ']);
    expect(classification).toMatchObject({ type: 'ModelUnavailable', retryable: true });
    expect(retry.text).toBe('The answer is forty-two.');
  });

  it('stops a slow stream at once when aborted after the first text', async () => {
    const model = new ScriptedModel([{ text: 'piece one, piece two, piece three', chunkDelayMs: 30_000 }], { streamChunkChars: 10 });
    const controller = new AbortController();
    const seen: string[] = [];

    const error = await rejectionOf(
      model.generate(request('go'), {
        abortSignal: controller.signal,
        onText: (soFar) => {
          seen.push(soFar);
          controller.abort();
        },
      }),
    );

    expect(classifyModelError(error).type).toBe(modelCallAborted);
    expect(seen).toEqual(['piece one,']);
  });
});

function conversation(...rest: ChatMessage[]): ModelRequest {
  return { route, messages: [{ role: 'system', content: 'You are a test.' }, { role: 'user', content: 'Start' }, ...rest], tools: [] };
}

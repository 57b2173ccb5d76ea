import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/contracts/model';
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

  it('estimates usage deterministically when the step gives none', async () => {
    const model = new ScriptedModel([{ text: 'abcdefgh' }, { text: 'abcdefgh' }]);
    const a = await model.generate(request('same'), {});
    const b = await model.generate(request('same'), {});
    expect(a.usage).toEqual(b.usage);
    expect(a.usage.outputTokens).toBe(2);
    expect(a.usage.inputTokens).toBeGreaterThan(0);
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

  it('classifies malformed raw tool arguments as ModelBadResponse', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'read', arguments: '[1, 2]' }] }]);
    expect(classifyModelError(await rejectionOf(model.generate(request('a'), {}))).type).toBe('ModelBadResponse');
  });
});

import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call, describeApiError, httpTransport, isApiRequestError } from '../../src/cli/api-transport';
import type { PlanDelegationOutput } from '../../src/contracts/activities';
import type { ModelRequest } from '../../src/contracts/model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { eventually, json, keys, postJson, scriptedAnswer, startApiStack, type ApiStack } from './api-harness';

/**
 * A planning failure's field, code and "did you mean" names arrive typed where it is rendered (decision
 * 0041): the API's 422, the CLI's message over that answer, and the session's `delegate` tool, whose
 * planning activity records the typed failure beside the text the model reads.
 */

/** A session model that delegates an unknown source when its task says so, then answers. */
function answer(request: ModelRequest): ScriptStep {
  const task = request.messages.find((message) => message.role === 'user')?.content ?? '';
  if (!task.includes('delegate dpeloy')) return scriptedAnswer(request);
  const answered = request.messages.some((message) => message.role === 'tool');
  return answered ? { text: 'the source does not exist' } : { toolCalls: [{ name: 'delegate', arguments: { source: 'dpeloy' } }] };
}

let stack: ApiStack;
beforeAll(async () => {
  stack = await startApiStack({ answer });
});
afterAll(async () => {
  await stack?.stop();
});

describe('a planning failure at the API', () => {
  it('an unknown source: the 422 names the field, its code and the close names', async () => {
    const response = await stack.request('/v1/delegations', postJson({ source: 'dpeloy' }));
    expect(response.status).toBe(422);
    expect(await json(response)).toMatchObject({
      type: 'urn:errand:problem:source-not-found',
      title: 'Unknown source',
      detail: expect.stringMatching(/^source: No source named "dpeloy" was found/),
      errors: [{ in: 'body', field: 'source', code: 'source-not-found', message: expect.stringContaining('Did you mean: deploy?') }],
      suggestions: ['deploy'],
    });
  });

  it('a model off the allow-list: field model, code model-not-allowed, and the close model name', async () => {
    const response = await stack.request('/v1/delegations', postJson({ instructions: 'x', model: 'other-modle' }));
    expect(response.status).toBe(422);
    expect(await json(response)).toMatchObject({
      type: 'urn:errand:problem:invalid-delegation',
      errors: [{ in: 'body', field: 'model', code: 'model-not-allowed', message: expect.stringContaining('allowed: scripted-model, other-model') }],
      suggestions: ['other-model'],
    });
  });

  it('parameters a recipe does not take: field parameters (the text names the source, which no longer decides the field)', async () => {
    const response = await stack.request('/v1/delegations', postJson({ source: 'deploy', parameters: { servce: 'api' } }));
    expect(response.status).toBe(422);
    expect(await json(response)).toMatchObject({ errors: [{ field: 'parameters', code: 'parameters-invalid', message: expect.stringMatching(/^source "deploy" cannot run with these parameters/) }] });
  });
});

describe("a planning failure in the CLI's message", () => {
  it('the lines the CLI prints for the 422 carry the field, the code and the suggestions', async () => {
    const error = await call(httpTransport(stack.url, keys.acme), 'POST', '/v1/delegations', z.unknown(), { body: { source: 'dpeloy' } }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    if (!isApiRequestError(error)) throw new Error(`expected an API error, got ${String(error)}`);
    const lines = describeApiError(error).split('\n');
    expect(lines[0]).toMatch(/^Unknown source: source: No source named "dpeloy" was found/);
    expect(lines.slice(1)).toEqual(['  - body source [source-not-found]', '  did you mean: deploy?']);
  });
});

describe("a planning failure in a session's delegate tool", () => {
  it("the model reads the failure's message; the planning activity's recorded result holds the typed failure", async () => {
    const started = await stack.request('/v1/sessions', postJson({ label: 'typed failure', message: 'delegate dpeloy please' }));
    expect(started.status).toBe(201);
    const { id } = (await json(started)) as { id: string };
    const toolResult = await eventually(async () => {
      const request = stack.model.requests.find((candidate) => candidate.messages.some((message) => message.role === 'user' && message.content.includes('delegate dpeloy')) && candidate.messages.some((message) => message.role === 'tool'));
      return request?.messages.find((message) => message.role === 'tool');
    });
    expect(toolResult).toMatchObject({ toolName: 'delegate', isError: true });
    expect(toolResult.content).toMatch(/^delegate was not started: No source named "dpeloy" was found\. Did you mean: deploy\?/);

    const history = await stack.client.workflow.getHandle(id).fetchHistory();
    const plans = (history.events ?? []).flatMap((event) => {
      const payload = event.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
      const output = payload ? defaultPayloadConverter.fromPayload<unknown>(payload) : undefined;
      return typeof output === 'object' && output !== null && 'ok' in output ? [output as PlanDelegationOutput] : [];
    });
    expect(plans).toEqual([
      {
        ok: false,
        message: expect.stringMatching(/^No source named "dpeloy"/) as unknown,
        failure: { field: 'source', code: 'source-not-found', message: expect.stringMatching(/^No source named "dpeloy"/) as unknown, suggestions: ['deploy'] },
      },
    ]);
    expect(toolResult.content).toBe(`delegate was not started: ${plans[0]?.ok === false ? plans[0].message : ''}`);
    await stack.client.workflow.getHandle(id).cancel();
  });
});

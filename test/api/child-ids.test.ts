import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaHandler } from '../../src/api/lambda';
import { httpTransport } from '../../src/cli/api-transport';
import type { CliContext } from '../../src/cli/cli-context';
import { peekCommand, resultCommand } from '../../src/cli/delegation-commands';
import { usageCommand } from '../../src/cli/usage-command';
import type { ModelRequest } from '../../src/contracts/model';
import { childWorkflowId } from '../../src/contracts/workflow-ids';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { gatewayEvent } from '../support/api-gateway-events';
import { temporalHttpUrl } from '../support/temporal';
import { eventually, json, keys, postJson, startApiStack, type ApiStack } from './api-harness';

/**
 * A session's child opens through the API on both of its ways to Temporal (decision 0026): Temporal's HTTP
 * API (the dev stack, the Lambda), which cannot address a workflow id with a `/`, and the SDK's gRPC client.
 * A child's id is `<session id>~task-<n>` (src/contracts/workflow-ids.ts), the session's peek lists it, and
 * `GET /v1/delegations/{id}` (through the Node server and the Lambda handler), its result, `errand peek`,
 * `errand result` and `errand usage` all reach it.
 */

/** The session delegates once (`[child]` marks the child's task), then answers; the child answers at once. */
function answer(request: ModelRequest): ScriptStep {
  const task = request.messages.find((message) => message.role === 'user')?.content ?? '';
  if (task.includes('[child]')) return { text: 'the child answered' };
  if (!request.messages.some((message) => message.role === 'tool')) {
    return { toolCalls: [{ name: 'delegate', arguments: { instructions: 'count the files [child]', description: 'count the files' } }] };
  }
  return { text: 'the session answered' };
}

const ways = [
  { name: "Temporal's HTTP API", env: (): NodeJS.ProcessEnv => ({ ERRAND_TEMPORAL_HTTP_URL: temporalHttpUrl() }) },
  { name: "the SDK's gRPC client", env: (): NodeJS.ProcessEnv => ({}) },
];

describe.each(ways)("a session's child through $name", (way) => {
  let stack: ApiStack;
  let sessionId = '';
  let childId = '';

  function cli(): { context: CliContext; stdout: string[] } {
    const stdout: string[] = [];
    const io = { stdout: (text: string) => void stdout.push(text), stderr: () => undefined, interactive: false };
    return { context: { io, env: {}, cwd: stack.workDir, transport: () => httpTransport(stack.url, keys.acme), close: () => Promise.resolve() }, stdout };
  }

  beforeAll(async () => {
    stack = await startApiStack({ answer, extraEnv: way.env() });
    const started = await stack.request('/v1/sessions', postJson({ message: 'please delegate' }));
    expect(started.status).toBe(201);
    sessionId = String((await json(started)).id);
    const task = await eventually(async () => {
      const body = await json(await stack.request(`/v1/sessions/${encodeURIComponent(sessionId)}`));
      const tasks = (body.peek as { tasks?: { taskId: string; workflowId?: string; state: string }[] } | undefined)?.tasks ?? [];
      return tasks.find((entry) => entry.state === 'completed');
    });
    childId = String(task.workflowId);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("the session's peek names the child by an id without '/'", () => {
    expect(childId).toBe(childWorkflowId(sessionId, 'task-1'));
    expect(childId).toBe(`${sessionId}~task-1`);
  });

  it('GET /v1/delegations/{id} and its result answer for the child', async () => {
    const status = await stack.request(`/v1/delegations/${encodeURIComponent(childId)}`);
    expect(status.status).toBe(200);
    expect(await json(status)).toMatchObject({ id: childId, state: 'completed' });
    const result = await json(await stack.request(`/v1/delegations/${encodeURIComponent(childId)}/result`));
    expect(result).toMatchObject({ done: true, result: { status: 'completed', output: expect.stringContaining('the child answered') } });
  });

  it("the API's Lambda handler answers GET of the child from an API Gateway event", async () => {
    const answer = await createLambdaHandler(stack.app)(gatewayEvent('GET', `/v1/delegations/${encodeURIComponent(childId)}`, { key: keys.acme }));
    expect(answer.statusCode).toBe(200);
    const body = answer.isBase64Encoded ? Buffer.from(answer.body, 'base64').toString('utf8') : answer.body;
    expect(JSON.parse(body)).toMatchObject({ id: childId, state: 'completed' });
  });

  it('errand result, errand peek and errand usage reach the child', async () => {
    const result = cli();
    expect(await resultCommand([childId], result.context)).toBe(0);
    expect(result.stdout.join('')).toContain('the child answered');
    const peek = cli();
    expect(await peekCommand([childId, '--json'], peek.context)).toBe(0);
    expect(JSON.parse(peek.stdout.join(''))).toMatchObject({ state: 'completed' });
    const usage = cli();
    expect(await usageCommand([sessionId, '--json'], usage.context)).toBe(0);
    const tree = JSON.parse(usage.stdout.join('')) as { tasks: { id: string; state: string; unavailable?: string }[] };
    expect(tree.tasks).toEqual([expect.objectContaining({ id: childId, state: 'completed' })]);
    expect(tree.tasks[0]?.unavailable).toBeUndefined();
  });
});

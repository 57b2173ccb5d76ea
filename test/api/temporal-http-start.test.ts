import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainHttpRequest } from '../../src/http/plain-http';
import { freePort } from '../../src/dev/free-port';
import { DelegationService } from '../../src/api/delegation-service';
import { TemporalHttpGateway } from '../../src/api/temporal-http-gateway';
import { startRequestJson, TemporalHttpStartError, TemporalHttpStarter } from '../../src/api/temporal-http-start';
import type { WorkflowStart } from '../../src/api/temporal-gateway';
import { subagentStartOptions } from '../../src/observability/start-options';
import { json, postJson, startApiStack, type ApiStack } from './api-harness';
import { subagentInput, temporalHttpUrl, testClient, uniqueTaskQueue } from '../support/temporal';

/**
 * Plain starts through Temporal's HTTP API (decision 0019), against the run's real dev server: the
 * workflow it starts is the one the SDK's `client.workflow.start` starts, byte for byte; the API with
 * ERRAND_TEMPORAL_HTTP_URL starts delegations and sessions that run; and failures say what happened.
 */

let client: Client;
let closeConnection: () => Promise<void>;
let stack: ApiStack;
beforeAll(async () => {
  const connected = await testClient();
  client = connected.client;
  closeConnection = () => connected.connection.close();
  stack = await startApiStack({ extraEnv: { ERRAND_TEMPORAL_HTTP_URL: temporalHttpUrl() } });
});
afterAll(async () => {
  await stack?.stop();
  await closeConnection?.();
});

function startFor(workflowId: string, taskQueue: string): WorkflowStart {
  const input = { ...subagentInput({ prompt: 'compare the two starts', workingDir: '/srv/errand/acme' }), tenant: 'acme' };
  return {
    workflowType: 'subagentWorkflow',
    workflowId,
    taskQueue,
    args: [input],
    visible: subagentStartOptions(input, { workflowId, tenant: 'acme', startedBy: 'errand HTTP API' }),
  };
}

/** The started event of a workflow as JSON, with what differs between any two starts (ids, times) left out. */
async function startedEvent(workflowId: string): Promise<{ attributes: Record<string, unknown>; userMetadata: Record<string, unknown> }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const event = history.events?.[0];
  if (!event) throw new Error(`no history for ${workflowId}`);
  const attributes = event.workflowExecutionStartedEventAttributes;
  const plain = (value: unknown) => JSON.parse(JSON.stringify(value, (_key, inner: unknown) => (inner instanceof Uint8Array ? Buffer.from(inner).toString('base64') : inner))) as Record<string, unknown>;
  const {
    originalExecutionRunId: _original,
    firstExecutionRunId: _first,
    workflowId: _id,
    workflowExecutionExpirationTime: _expires,
    ...rest
  } = plain(attributes);
  return { attributes: rest, userMetadata: plain(event.userMetadata) };
}

describe('TemporalHttpStarter', () => {
  const starter = new TemporalHttpStarter({ baseUrl: temporalHttpUrl(), namespace: 'default', headers: {} });

  it('starts the workflow the SDK starts: same input bytes, search attributes, summary, details, timeouts and identity', async () => {
    const taskQueue = uniqueTaskQueue('http-start-parity');
    const overHttp = startFor(`http-start-${randomUUID()}`, taskQueue);
    const overGrpc = startFor(`grpc-start-${randomUUID()}`, taskQueue);
    const { runId } = await starter.start(overHttp);
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    await client.workflow.start(overGrpc.workflowType, { taskQueue, workflowId: overGrpc.workflowId, args: [...overGrpc.args], ...overGrpc.visible });
    const fromHttp = await startedEvent(overHttp.workflowId);
    const fromGrpc = await startedEvent(overGrpc.workflowId);
    // The details name the workflow id (checked below through describe); everything else must be equal.
    expect(fromHttp.userMetadata).toEqual({
      summary: (fromGrpc.userMetadata as { summary: unknown }).summary,
      details: expect.objectContaining({ metadata: (fromGrpc.userMetadata as { details: { metadata: unknown } }).details.metadata }),
    });
    expect(fromHttp.attributes).toEqual(fromGrpc.attributes);
    const description = await client.workflow.getHandle(overHttp.workflowId).describe();
    expect(description.runId).toBe(runId);
    expect(await description.staticDetails()).toBe(overHttp.visible.staticDetails);
    expect(description.typedSearchAttributes.getAll()).toEqual(expect.arrayContaining(overHttp.visible.typedSearchAttributes));
    await client.workflow.getHandle(overHttp.workflowId).terminate('test over');
    await client.workflow.getHandle(overGrpc.workflowId).terminate('test over');
  });

  it('is answered with the same run when the same request is sent again (what makes its retries safe)', async () => {
    const request = startFor(`http-start-${randomUUID()}`, uniqueTaskQueue('http-start-dedupe'));
    const body = startRequestJson({ namespace: 'default' }, request, randomUUID());
    const agent = new Agent({ keepAlive: true });
    const send = () =>
      plainHttpRequest(`${temporalHttpUrl()}/api/v1/namespaces/default/workflows/${request.workflowId}`, {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json+no-payload-shorthand' },
        body,
      });
    const first = await send();
    const second = await send();
    agent.destroy();
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(JSON.parse(second.text).runId).toBe(JSON.parse(first.text).runId);
    await client.workflow.getHandle(request.workflowId).terminate('test over');
  });

  it('reports a workflow id already running with ALREADY_EXISTS, the code the SDK turns into WorkflowExecutionAlreadyStartedError', async () => {
    const request = startFor(`http-start-${randomUUID()}`, uniqueTaskQueue('http-start-twice'));
    await starter.start(request);
    await expect(starter.start(request)).rejects.toMatchObject({ name: 'TemporalHttpStartError', code: 6 });
    await client.workflow.getHandle(request.workflowId).terminate('test over');
  });

  it('passes on what Temporal refuses, with its status code and message', async () => {
    const elsewhere = new TemporalHttpStarter({ baseUrl: temporalHttpUrl(), namespace: 'no-such-namespace', headers: {} });
    const error = await elsewhere.start(startFor(`http-start-${randomUUID()}`, 'nowhere')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TemporalHttpStartError);
    expect(error).toMatchObject({ code: 5, message: expect.stringContaining('no-such-namespace') });
  });

  it('says Temporal cannot be reached (UNAVAILABLE, naming the address and the setting) when nothing listens there', async () => {
    const port = await freePort('127.0.0.1');
    // A short deadline: a refused connection is retried (as the SDK retries UNAVAILABLE) until it runs out.
    const nowhere = new TemporalHttpStarter({ baseUrl: `http://127.0.0.1:${port}`, namespace: 'default', headers: {}, deadlineMs: 1_000 });
    const error = await nowhere.start(startFor(`http-start-${randomUUID()}`, 'nowhere')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TemporalHttpStartError);
    expect(error).toMatchObject({ code: 14, message: expect.stringMatching(new RegExp(`127\\.0\\.0\\.1:${port}.*ERRAND_TEMPORAL_HTTP_URL.*ECONNREFUSED`)) });
  });
});

describe('the API with ERRAND_TEMPORAL_HTTP_URL', () => {
  it('starts delegations through it that run to their result', async () => {
    const response = await stack.request('/v1/delegations?wait=15s', postJson({ instructions: 'count to three', description: 'over http' }));
    const body = await json(response);
    expect(response.status).toBe(201);
    expect(body).toMatchObject({ created: true, state: 'completed', result: { status: 'completed', output: 'done: count to three' } });
    const description = await stack.client.workflow.getHandle(String(body.id)).describe();
    expect(await description.staticSummary()).toBe('over http — count to three');
    expect(description.typedSearchAttributes.getAll()).toEqual(expect.arrayContaining([expect.objectContaining({ key: expect.objectContaining({ name: 'ErrandTenant' }), value: 'acme' })]));
  });

  it('starts sessions through it', async () => {
    const started = await stack.request('/v1/sessions', postJson({ label: 'http session', message: 'hello there' }));
    const body = await json(started);
    expect(started.status).toBe(201);
    const description = await stack.client.workflow.getHandle(String(body.id)).describe();
    expect(description.type).toBe('sessionWorkflow');
    expect(description.status.name).toBe('RUNNING');
    expect((await stack.request(`/v1/sessions/${String(body.id)}/cancel`, postJson({}))).status).toBeLessThan(300);
  });

  it('answers 503 temporal-unavailable when the HTTP API cannot be reached', async () => {
    const port = await freePort('127.0.0.1');
    const baseUrl = `http://127.0.0.1:${port}`;
    const unreachable = await startApiStack({
      withoutWorker: true,
      extraEnv: { ERRAND_TEMPORAL_HTTP_URL: baseUrl },
      // The same start path with a short deadline (the default retries for 20 s, as the SDK would).
      adjust: (deps) => ({
        ...deps,
        delegations: new DelegationService({
          gateway: new TemporalHttpGateway({ baseUrl, namespace: 'default', headers: {}, deadlineMs: 1_000 }),
          taskQueue: deps.config.temporal.taskQueue,
          startedBy: 'errand HTTP API',
        }),
      }),
    });
    try {
      const response = await unreachable.request('/v1/delegations', postJson({ instructions: 'never starts' }));
      expect(response.status).toBe(503);
      expect(await json(response)).toMatchObject({ type: 'urn:errand:problem:temporal-unavailable', status: 503 });
      expect(response.headers.get('retry-after')).toBe('5');
    } finally {
      await unreachable.stop();
    }
  });
});

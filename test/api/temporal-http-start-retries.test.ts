import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DelegationService } from '../../src/api/delegation-service';
import { TemporalHttpGateway } from '../../src/api/temporal-http-gateway';
import { retryDelayMs, TemporalHttpStartError, TemporalHttpStarter } from '../../src/api/temporal-http-start';
import type { WorkflowStart } from '../../src/api/temporal-gateway';
import { rateLimitedRetryAfterSeconds, temporalHttpRetry } from '../../src/contracts/limits/api';
import { subagentStartOptions } from '../../src/observability/start-options';
import { temporalHttpHeaders } from '../../src/temporal/temporal-http-url';
import { json, postJson, startApiStack } from './api-harness';
import { startStubTemporalGateway, type GatewayBehaviour, type StubTemporalGateway } from '../support/stub-temporal-gateway';
import { until } from '../support/polling';
import { subagentInput, temporalHttpUrl, testClient, uniqueTaskQueue } from '../support/temporal';

/**
 * The HTTP start path (decision 0019) under the failures a busy Temporal or a proxy causes, each injected by a
 * real HTTP gateway in front of the run's dev server: it retries what the SDK's gRPC client retries, retries
 * a start whose answer was lost with the same request id (one workflow), stops at its deadline, sends gRPC
 * metadata as Temporal's HTTP API reads it, and the API answers a lasting rate limit with 429 + Retry-After.
 */

let client: Client;
let closeConnection: () => Promise<void>;
const gateways: StubTemporalGateway[] = [];
beforeAll(async () => {
  const connected = await testClient();
  client = connected.client;
  closeConnection = () => connected.connection.close();
});
afterEach(async () => {
  await Promise.all(gateways.splice(0).map((gateway) => gateway.close()));
});
afterAll(async () => {
  await closeConnection?.();
});

async function gateway(behaviours: GatewayBehaviour[]): Promise<StubTemporalGateway> {
  const started = await startStubTemporalGateway(temporalHttpUrl(), behaviours);
  gateways.push(started);
  return started;
}

function startFor(label: string): WorkflowStart {
  const workflowId = `http-retry-${label}-${randomUUID()}`;
  const input = { ...subagentInput({ prompt: 'retry me', workingDir: '/srv/errand/acme' }), tenant: 'acme' };
  return {
    workflowType: 'subagentWorkflow',
    workflowId,
    taskQueue: uniqueTaskQueue(`http-retry-${label}`),
    args: [input],
    visible: subagentStartOptions(input, { workflowId, tenant: 'acme', startedBy: 'errand HTTP API' }),
  };
}

function requestIdOf(body: string): unknown {
  return (JSON.parse(body) as { requestId?: unknown }).requestId;
}

/** The runs Temporal has under a workflow id (a second start would be a second run). */
async function runsOf(workflowId: string): Promise<string[]> {
  const runs: string[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push(execution.runId);
  return runs;
}

const rateLimited: GatewayBehaviour = { kind: 'answer', status: 429, body: JSON.stringify({ code: 8, message: 'namespace rate limit exceeded', details: [] }) };

describe('TemporalHttpStarter retries', () => {
  it('waits out a rate limit (429, RESOURCE_EXHAUSTED) and starts on the next attempt, with the same request id', async () => {
    const stub = await gateway([rateLimited, { kind: 'forward' }]);
    const request = startFor('429');
    const { runId } = await new TemporalHttpStarter({ baseUrl: stub.url, namespace: 'default', headers: {} }).start(request);
    expect(stub.requests.map((seen) => seen.behaviour)).toEqual(['answer', 'forward']);
    expect(requestIdOf(stub.requests[1]?.body ?? '{}')).toBe(requestIdOf(stub.requests[0]?.body ?? '{}'));
    expect((await client.workflow.getHandle(request.workflowId).describe()).runId).toBe(runId);
    await client.workflow.getHandle(request.workflowId).terminate('test over');
  });

  it('retries a proxy\'s 503 whose body is not Temporal\'s (an HTML error page)', async () => {
    const stub = await gateway([{ kind: 'answer', status: 503, body: '<html><body>503 Service Temporarily Unavailable</body></html>', contentType: 'text/html' }, { kind: 'forward' }]);
    const request = startFor('503');
    const { runId } = await new TemporalHttpStarter({ baseUrl: stub.url, namespace: 'default', headers: {} }).start(request);
    expect(stub.requests).toHaveLength(2);
    expect((await client.workflow.getHandle(request.workflowId).describe()).runId).toBe(runId);
    await client.workflow.getHandle(request.workflowId).terminate('test over');
  });

  it('retries a start whose answer never came with the same request id: Temporal answers with the run it started, one workflow', async () => {
    const stub = await gateway([{ kind: 'forward-and-hang' }, { kind: 'forward' }]);
    const request = startFor('hang');
    const { runId } = await new TemporalHttpStarter({ baseUrl: stub.url, namespace: 'default', headers: {}, timeoutMs: 1_500 }).start(request);
    const [lost, retried] = stub.requests;
    // The first attempt did land: Temporal started the workflow and answered, but the answer was lost
    // (the gateway records Temporal's answer when it arrives, which on a busy machine may be after the retry's).
    await until(() => Promise.resolve(lost?.upstream), (upstream) => upstream !== undefined, 'the lost attempt\'s answer from Temporal', 30_000);
    expect(lost?.upstream?.status).toBe(200);
    const landedRun = (JSON.parse(lost?.upstream?.body ?? '{}') as { runId?: string }).runId;
    expect(requestIdOf(retried?.body ?? '{}')).toBe(requestIdOf(lost?.body ?? '{}'));
    expect(runId).toBe(landedRun);
    expect(await runsOf(request.workflowId)).toEqual([landedRun]);
    await client.workflow.getHandle(request.workflowId).terminate('test over');
  });

  it('does not retry what the SDK does not retry (INVALID_ARGUMENT) and passes its code on', async () => {
    const stub = await gateway([{ kind: 'answer', status: 400, body: JSON.stringify({ code: 3, message: 'bad field', details: [] }) }, { kind: 'forward' }]);
    const error = await new TemporalHttpStarter({ baseUrl: stub.url, namespace: 'default', headers: {} }).start(startFor('400')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TemporalHttpStartError);
    expect(error).toMatchObject({ code: 3, message: expect.stringContaining('bad field') });
    expect(stub.requests).toHaveLength(1);
  });

  it('gives up at its deadline with the last failure, after more than one attempt', async () => {
    const stub = await gateway([{ kind: 'answer', status: 503, body: JSON.stringify({ code: 14, message: 'frontend overloaded', details: [] }) }]);
    const error = await new TemporalHttpStarter({ baseUrl: stub.url, namespace: 'default', headers: {}, deadlineMs: 1_500 }).start(startFor('deadline')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 14, message: expect.stringContaining('frontend overloaded') });
    expect(stub.requests.length).toBeGreaterThan(1);
    expect(stub.requests.length).toBeLessThan(temporalHttpRetry.maxAttempts);
  });

  it('backs off as the SDK does: 1.7× per attempt from 100 ms, from 1 s after RESOURCE_EXHAUSTED, at most 5 s, ±20 %', () => {
    const middle = () => 0.5;
    expect(retryDelayMs(1, 14, middle)).toBeCloseTo(170);
    expect(retryDelayMs(2, 14, middle)).toBeCloseTo(289);
    expect(retryDelayMs(1, 8, middle)).toBeCloseTo(1_700);
    expect(retryDelayMs(9, 14, middle)).toBe(5_000);
    expect(retryDelayMs(1, 14, () => 0)).toBeCloseTo(136);
    expect(retryDelayMs(1, 14, () => 1)).toBeCloseTo(204);
  });
});

describe('gRPC metadata over the HTTP API', () => {
  it('goes as Grpc-Metadata-<key> headers (what Temporal\'s HTTP API turns into metadata), and the dev server starts with them', async () => {
    const stub = await gateway([{ kind: 'forward' }]);
    const headers = temporalHttpHeaders({ address: 'unused:7233', metadata: { 'x-api-key': 'tenant-claim-123', 'x-route': 'blue' } });
    expect(headers).toEqual({ 'grpc-metadata-x-api-key': 'tenant-claim-123', 'grpc-metadata-x-route': 'blue' });
    const request = startFor('metadata');
    const { runId } = await new TemporalHttpStarter({ baseUrl: stub.url, namespace: 'default', headers }).start(request);
    expect(stub.requests[0]?.headers).toMatchObject({ 'grpc-metadata-x-api-key': 'tenant-claim-123', 'grpc-metadata-x-route': 'blue' });
    expect(stub.requests[0]?.headers['x-api-key']).toBeUndefined();
    expect(stub.requests[0]?.upstream?.status).toBe(200);
    expect((await client.workflow.getHandle(request.workflowId).describe()).runId).toBe(runId);
    await client.workflow.getHandle(request.workflowId).terminate('test over');
  });

  it('sends an API key as a bearer token beside the metadata', () => {
    expect(temporalHttpHeaders({ address: 'unused:7233', apiKey: 'k-1', metadata: { 'x-api-key': 'c' } })).toEqual({ authorization: 'Bearer k-1', 'grpc-metadata-x-api-key': 'c' });
  });
});

describe('the API when Temporal stays over its rate limit', () => {
  it('answers 429 temporal-rate-limited with Retry-After, and still serves other requests', async () => {
    const stub = await gateway([rateLimited]);
    const stack = await startApiStack({
      withoutWorker: true,
      extraEnv: { ERRAND_TEMPORAL_HTTP_URL: stub.url },
      adjust: (deps) => ({
        ...deps,
        delegations: new DelegationService({
          gateway: new TemporalHttpGateway({ baseUrl: stub.url, namespace: 'default', headers: {}, deadlineMs: 2_500 }),
          taskQueue: deps.config.temporal.taskQueue,
          startedBy: 'errand HTTP API',
        }),
      }),
    });
    try {
      const response = await stack.request('/v1/delegations', postJson({ instructions: 'never starts' }));
      expect(response.status).toBe(429);
      expect(response.headers.get('retry-after')).toBe(String(rateLimitedRetryAfterSeconds));
      expect(await json(response)).toMatchObject({ type: 'urn:errand:problem:temporal-rate-limited', status: 429, detail: expect.stringContaining('RESOURCE_EXHAUSTED') });
      expect(stub.requests.length).toBeGreaterThan(1);
      // The process still serves: a route that does not reach the rate-limited frontend answers as ever (a
      // listing now goes through the same HTTP API, decision 0026, and would be refused the same way).
      expect((await stack.request('/v1/models')).status).toBe(200);
    } finally {
      await stack.stop();
    }
  });
});

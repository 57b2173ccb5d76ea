import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiBundleHandler, buildApiBundle, type ApiBundle } from '../../infra/lib/api-bundle';
import { apiFunctionEnvironment, sharedEnvironment } from '../../infra/lib/api-function-environment';
import { parseSettings } from '../../infra/lib/settings';
import { readTenantSpend, recordTenantSpend } from '../../src/activities/tenant-spend-book';
import { hashApiKey } from '../../src/api/auth-config';
import { loadConfig } from '../../src/config';
import type { ModelRequest } from '../../src/contracts/model';
import { childWorkflowId } from '../../src/contracts/workflow-ids';
import { ScriptedModel } from '../../src/llm/scripted-model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { createWorkerDependencies } from '../../src/worker';
import { gatewayEvent } from '../support/api-gateway-events';
import { invokeJson, startLambdaEmulator, type LambdaAnswer, type LambdaEmulator } from '../support/lambda-emulator';
import { until } from '../support/polling';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { startTestWorker, temporalAddress, temporalHttpUrl, testClient, uniqueTaskQueue, type RunningWorker } from '../support/temporal';

/**
 * The API's Lambda bundle under the Runtime Interface Emulator (as test/deploy/lambda-runtime.test.ts runs
 * it: Temporal reached only through its HTTP API), on two seams that broke where the docs deploy it: a
 * session's child (`<session>~task-1`) opens through the API, and the daily cost cap per tenant holds. Every model call costs 1,000 × 2 + 100 × 8 = 2,800 micro-dollars.
 */

const suffix = randomBytes(4).toString('hex');
const sessionTenant = { tenant: `lambda-session-${suffix}`, key: `lambda-session-key-${suffix}-0123456789` };
const cappedTenant = { tenant: `lambda-capped-${suffix}`, key: `lambda-capped-key-${suffix}-0123456789` };
const usage = { inputTokens: 1_000, outputTokens: 100 };

/** A session asked to `[delegate]` hands the work to a child; everything else answers at once. */
function answer(request: ModelRequest): ScriptStep {
  const task = request.messages.find((message) => message.role === 'user')?.content ?? '';
  const toolResults = request.messages.filter((message) => message.role === 'tool').length;
  if (task.includes('[slow]')) return { text: `slowly: ${task}`, usage, delayMs: 30_000 };
  if (task.includes('[delegate]') && request.tools.some((tool) => tool.name === 'delegate')) {
    return toolResults === 0 ? { toolCalls: [{ name: 'delegate', arguments: { instructions: 'count the files', description: 'counter' } }], usage } : { text: 'the child counted', usage };
  }
  return { text: `done: ${task}`, usage };
}

let root: string;
let bundle: ApiBundle;
let worker: RunningWorker;
let connection: Connection;
let client: Client;
let emulator: LambdaEmulator;
let taskQueue: string;
let s3: S3TestServer;
let functionEnv: Record<string, string>;
const model = new ScriptedModel(answer, { name: 'lambda ids and caps model' });

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'errand-lambda-ids-caps-'));
  bundle = buildApiBundle(join(root, 'bundle'));
  s3 = await startS3Server();
  const s3Client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
  await s3Client.send(new CreateBucketCommand({ Bucket: 'errand-payloads' }));
  s3Client.destroy();
  taskQueue = uniqueTaskQueue('lambda-ids-caps');
  const workingRoot = join(root, 'work');
  mkdirSync(workingRoot, { recursive: true });
  const settings = parseSettings({
    temporalAddress: temporalAddress(),
    temporalHttpUrl: temporalHttpUrl(),
    temporalNamespace: 'default',
    temporalAuth: 'none',
    taskQueue,
    providers: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: [{ id: 'scripted-model', prices: { input: 2, output: 8 } }] }]),
  });
  functionEnv = {
    ...apiFunctionEnvironment({ temporal: sharedEnvironment(settings, '[]'), workingRoot, payloadBucket: 'errand-payloads', payloadPrefix: 'worker/' }),
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    ERRAND_BLOB_S3_ENDPOINT: s3.endpoint,
    ERRAND_BLOB_S3_REGION: s3.region,
    ERRAND_BLOB_S3_FORCE_PATH_STYLE: 'true',
    ERRAND_API_KEYS: JSON.stringify([sessionTenant, cappedTenant].map(({ tenant, key }) => ({ tenant, sha256: hashApiKey(key) }))),
    ERRAND_TENANT_DAILY_COST_USD: '0.25',
    ERRAND_DATA_DIR: join(root, 'lambda-tmp'),
  };
  const workerEnv: NodeJS.ProcessEnv = { ...functionEnv, ERRAND_DATA_DIR: join(root, 'worker-data'), ERRAND_TEMPORAL_ADDRESS: temporalAddress() };
  const config = loadConfig(workerEnv, root);
  // The AWS SDK of the in-process worker reads its credentials from the process (this file's own fork).
  process.env.AWS_ACCESS_KEY_ID = s3.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = s3.secretAccessKey;
  ({ client, connection } = await testClient());
  worker = await startTestWorker(taskQueue, createWorkerDependencies(config, { scripted: { scripted: model }, env: workerEnv, homeDirectory: join(root, 'home') }));
  emulator = await startLambdaEmulator({ taskRoot: bundle.directory, handler: apiBundleHandler, env: functionEnv });
}, 180_000);

afterAll(async () => {
  await emulator?.stop();
  await worker?.stop();
  await connection?.close();
  await s3?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function call(method: string, pathAndQuery: string, key: string, body?: unknown): Promise<LambdaAnswer & { json: Record<string, unknown> }> {
  return callOn(emulator, method, pathAndQuery, key, body);
}

async function callOn(on: LambdaEmulator, method: string, pathAndQuery: string, key: string, body?: unknown): Promise<LambdaAnswer & { json: Record<string, unknown> }> {
  return invokeJson(on, gatewayEvent(method, pathAndQuery, { key, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) }));
}

describe('the Lambda bundle: a session\'s children and the daily cap', () => {
  it("keeps a start's ?wait= inside the function's time limit: it answers 'running' before the function times out, and says why", async () => {
    const shortLived = await startLambdaEmulator({ taskRoot: bundle.directory, handler: apiBundleHandler, env: functionEnv, timeoutSeconds: 8 });
    try {
      const started = await callOn(shortLived, 'POST', '/v1/delegations?wait=25s', sessionTenant.key, { instructions: 'take your time [slow]' });
      // Without the cut the function would time out (an error, not an answer) while it waited 25 s.
      expect(started.statusCode, started.body).toBe(201);
      expect(started.json).toMatchObject({ state: 'running' });
      expect(started.headers['errand-wait-capped'] ?? started.headers['Errand-Wait-Capped']).toMatch(/what this function had left of its time limit/);
      const id = String(started.json.id);
      expect((await call('POST', `/v1/delegations/${id}/cancel`, sessionTenant.key, {})).statusCode).toBe(202);
    } finally {
      await shortLived.stop();
    }
  });

  it("opens a session's child by the id its session gave it: peek, result and the listing", async () => {
    const started = await call('POST', '/v1/sessions', sessionTenant.key, { label: 'lambda children', message: 'please [delegate] the count' });
    expect(started.statusCode, started.body).toBe(201);
    const sessionId = String(started.json.id);
    const childId = childWorkflowId(sessionId, 'task-1');
    expect(childId).not.toContain('/');
    await until(() => call('GET', `/v1/delegations/${childId}`, sessionTenant.key), (peek) => peek.json.state === 'completed', 'the child completed', 30_000);
    const result = await call('GET', `/v1/delegations/${childId}/result`, sessionTenant.key);
    expect(result.statusCode, result.body).toBe(200);
    expect(result.json).toMatchObject({ id: childId, done: true, result: { status: 'completed', output: 'done: count the files' } });
    // Another tenant's key does not open it.
    expect((await call('GET', `/v1/delegations/${childId}`, cappedTenant.key)).statusCode).toBe(404);
    expect((await call('POST', `/v1/sessions/${sessionId}/cancel`, sessionTenant.key, { reason: 'done' })).statusCode).toBe(202);
  });

  it('a tenant past its cap starts nothing through the bundle: 8 starts, each a 429 naming the cap', async () => {
    // $0.26 of the $0.25 cap spent already: the bundle must read the day (over Temporal's HTTP API, which could
    // not address the old `errand-spend/<tenant>/<day>` id and read it as $0) and refuse every start.
    await recordTenantSpend(client, taskQueue, cappedTenant.tenant, { key: `earlier-${suffix}`, costMicroUsd: 260_000 }, Date.now());
    await until(() => readTenantSpend(client, cappedTenant.tenant, Date.now()), (spent) => spent >= 260_000, 'the earlier spend');
    // One Lambda execution environment serves one request at a time: eight environments (emulators, each with a
    // runtime API of its own) take the eight starts at once, as a burst of requests does on Lambda.
    const environments = await Promise.all(Array.from({ length: 8 }, () => startLambdaEmulator({ taskRoot: bundle.directory, handler: apiBundleHandler, env: functionEnv })));
    let answers: Awaited<ReturnType<typeof call>>[];
    try {
      answers = await Promise.all(environments.map((environment, index) => callOn(environment, 'POST', '/v1/delegations', cappedTenant.key, { instructions: `one of eight ${index}` })));
    } finally {
      await Promise.all(environments.map((environment) => environment.stop()));
    }
    const statuses = answers.map((answered) => answered.statusCode);
    expect(statuses).toEqual([429, 429, 429, 429, 429, 429, 429, 429]);
    const refused = answers.find((answered) => answered.statusCode === 429);
    expect(refused?.json).toMatchObject({ detail: expect.stringContaining('$0.25') });
  });
});

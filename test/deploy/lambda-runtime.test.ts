import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiBundleHandler, buildApiBundle, type ApiBundle } from '../../infra/lib/api-bundle';
import { apiFunctionEnvironment, sharedEnvironment } from '../../infra/lib/api-function-environment';
import { parseSettings } from '../../infra/lib/settings';
import { hashApiKey } from '../../src/api/auth-config';
import { loadConfig } from '../../src/settings/config';
import { ScriptedModel } from '../../src/llm/scripted-model';
import { createWorkerDependencies } from '../../src/worker/worker-dependencies';
import { scriptedAnswer } from '../api/api-harness';
import { gatewayEvent } from '../support/api-gateway-events';
import { invokeJson, startLambdaEmulator, type LambdaAnswer, type LambdaEmulator } from '../support/lambda-emulator';
import { until } from '../support/polling';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { startTestWorker, temporalAddress, temporalHttpUrl, testClient, uniqueTaskQueue, type RunningWorker } from '../support/temporal';

/**
 * The API in a real Lambda runtime: the bundle the CDK app deploys (infra/lib/api-bundle.ts), run by the
 * Node runtime interface client under AWS's Runtime Interface Emulator, with the environment the CDK app
 * gives the function (infra/lib/api-function-environment.ts). What differs from a deployment is only where
 * things are: the run's Temporal dev server, SeaweedFS for the recipe and payload buckets, and the
 * secrets in the environment itself (the documented fallback when no Parameters and Secrets extension
 * runs). It is invoked with API Gateway HTTP API (payload 2.0) events, against a real worker.
 */

const apiKey = 'lambda-runtime-key-0123456789';
const otherKey = 'lambda-runtime-other-9876543210';

let root: string;
let bundle: ApiBundle;
let s3: S3TestServer;
let worker: RunningWorker;
let connection: Connection;
let client: Client;
let emulator: LambdaEmulator;
const model = new ScriptedModel((request) => scriptedAnswer(request), { name: 'lambda runtime test model' });

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'errand-lambda-runtime-'));
  bundle = buildApiBundle(join(root, 'bundle'));
  s3 = await startS3Server();
  const s3Client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
  await s3Client.send(new CreateBucketCommand({ Bucket: 'errand-recipes' }));
  await s3Client.send(new CreateBucketCommand({ Bucket: 'errand-payloads' }));
  await s3Client.send(
    new PutObjectCommand({
      Bucket: 'errand-recipes',
      Key: 'recipes/deploy.yaml',
      Body: ['version: 1.0.0', 'title: Deploy', 'description: Deploy a service', 'prompt: Deploy {{ service }}', 'parameters:', '  - key: service', '    input_type: string', '    requirement: required', '    description: Service name'].join('\n'),
    }),
  );
  s3Client.destroy();

  const taskQueue = uniqueTaskQueue('lambda-runtime');
  const workingRoot = join(root, 'work');
  mkdirSync(workingRoot, { recursive: true });
  const settings = parseSettings({
    temporalAddress: temporalAddress(),
    // The deployment's fast path (decision 0026): the function reaches Temporal only through its HTTP API.
    temporalHttpUrl: temporalHttpUrl(),
    temporalNamespace: 'default',
    temporalAuth: 'none',
    taskQueue,
    providers: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: ['scripted-model'] }]),
  });
  const recipeStores = JSON.stringify([{ type: 's3', bucket: 'errand-recipes', prefix: 'recipes/', region: s3.region, endpoint: s3.endpoint, forcePathStyle: true }]);
  const s3Access = { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey, ERRAND_BLOB_S3_ENDPOINT: s3.endpoint, ERRAND_BLOB_S3_REGION: s3.region, ERRAND_BLOB_S3_FORCE_PATH_STYLE: 'true' };
  const functionEnv = {
    ...apiFunctionEnvironment({ temporal: sharedEnvironment(settings, recipeStores), workingRoot, payloadBucket: 'errand-payloads', payloadPrefix: 'worker/' }),
    // The secret ERRAND_SECRET_ENV would name, from the environment (no secrets extension runs here).
    ERRAND_API_KEYS: JSON.stringify([
      { tenant: 'acme', sha256: hashApiKey(apiKey) },
      { tenant: 'globex', sha256: hashApiKey(otherKey) },
    ]),
    ...s3Access,
    // The function's /tmp: the emulator runs it on this machine, so give it a folder of its own.
    ERRAND_DATA_DIR: join(root, 'lambda-tmp'),
  };
  // The worker reads the same buckets and the same task queue (its own environment, as on ECS).
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

async function call(method: string, pathAndQuery: string, body?: unknown, key: string | null = apiKey): Promise<LambdaAnswer & { json: Record<string, unknown> }> {
  return invokeJson(emulator, gatewayEvent(method, pathAndQuery, { key, ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) }));
}

describe('the API bundle in a Lambda runtime (Runtime Interface Emulator + aws-lambda-ric)', () => {
  it('starts cold from the deployed bundle and refuses a request without a key', async () => {
    expect(bundle.codeBytes).toBeGreaterThan(0);
    const answer = await call('GET', '/v1/models', undefined, null);
    expect(answer.statusCode).toBe(401);
    expect(emulator.initDurationMs()).toBeGreaterThan(0);
    expect((await call('GET', '/healthz')).statusCode).toBe(200);
  });

  it('starts a delegation and waits for its result (?wait=), then peeks and reads the result', async () => {
    const started = await call('POST', '/v1/delegations?wait=20s', { instructions: 'hello from the runtime' });
    expect(started.statusCode).toBe(201);
    expect(started.json).toMatchObject({ created: true, state: 'completed', result: { output: 'done: hello from the runtime' } });
    const id = String(started.json.id);
    const peek = await call('GET', `/v1/delegations/${id}`);
    expect(peek.statusCode).toBe(200);
    expect(peek.json).toMatchObject({ id, state: 'completed' });
    const result = await call('GET', `/v1/delegations/${id}/result`);
    expect(result.statusCode).toBe(200);
    expect(result.json).toMatchObject({ id, done: true, result: { status: 'completed', output: 'done: hello from the runtime' } });
    // Another tenant's key sees nothing of it.
    expect((await call('GET', `/v1/delegations/${id}`, undefined, otherKey)).statusCode).toBe(404);
    // The workflow is real: Temporal has it, on the worker's task queue.
    const description = await client.workflow.getHandle(id).describe();
    expect(description.status.name).toBe('COMPLETED');
  });

  it('starts a delegation of a recipe from the S3 store the CDK app configures', async () => {
    const started = await call('POST', '/v1/delegations?wait=20s', { source: 'deploy', parameters: { service: 'billing' } });
    expect(started.statusCode, started.body).toBe(201);
    expect(started.json).toMatchObject({ state: 'completed', result: { output: 'done: Deploy billing' } });
    // A misspelt name is refused before anything starts, with the stored recipe suggested.
    const unknown = await call('POST', '/v1/delegations', { source: 'dpeloy' });
    expect(unknown.statusCode).toBe(422);
    expect(JSON.stringify(unknown.json)).toContain('deploy');
  });

  it('cancels a running delegation, and messages a continuable one', async () => {
    const slow = await call('POST', '/v1/delegations', { instructions: 'slow work' });
    expect(slow.statusCode).toBe(201);
    const slowId = String(slow.json.id);
    const cancelled = await call('POST', `/v1/delegations/${slowId}/cancel`, { reason: 'enough' });
    expect(cancelled.statusCode).toBe(202);
    await until(() => call('GET', `/v1/delegations/${slowId}`), (peek) => peek.json.state === 'cancelled', 'the cancelled state', 20_000);

    const continuable = await call('POST', '/v1/delegations', { instructions: 'first question', continuable: true });
    const id = String(continuable.json.id);
    await until(() => call('GET', `/v1/delegations/${id}`), (peek) => peek.json.state === 'waiting', 'the waiting state', 20_000);
    const callsBefore = model.calls.length;
    const sent = await call('POST', `/v1/delegations/${id}/messages`, { message: 'second question' });
    expect(sent.statusCode).toBe(202);
    expect(sent.json).toMatchObject({ id, accepted: true });
    await until(async () => model.calls.length, (calls) => calls > callsBefore, 'the second answer', 20_000);
    expect((await call('POST', `/v1/delegations/${id}/cancel`, {})).statusCode).toBe(202);
  });

  it('runs a session: start with a message, send another, read the transcript, cancel', async () => {
    const started = await call('POST', '/v1/sessions', { label: 'lambda session', message: 'hello there' });
    expect(started.statusCode).toBe(201);
    const id = String(started.json.id);
    const replies = async (): Promise<string[]> => {
      const body = (await call('GET', `/v1/sessions/${id}`)).json as { transcript?: { entries: { role: string; text: string }[] } };
      return (body.transcript?.entries ?? []).filter((entry) => entry.role === 'assistant').map((entry) => entry.text);
    };
    await until(replies, (texts) => texts.length === 1, 'the first reply', 20_000);
    expect((await call('POST', `/v1/sessions/${id}/messages`, { message: 'and again' })).statusCode).toBe(202);
    await until(replies, (texts) => texts.length === 2, 'the second reply', 20_000);
    expect(await replies()).toEqual(['done: hello there', 'done: hello there']);
    const cancelled = await call('POST', `/v1/sessions/${id}/cancel`, { reason: 'done for today' });
    expect(cancelled.statusCode).toBe(202);
    const result = (await client.workflow.getHandle(id).result()) as { status: string };
    expect(result.status).toBe('cancelled');
  });

  it('serves the routes whose code loads on demand: the listing, sources from S3, approvals and MCP', async () => {
    // The listing goes through Temporal's HTTP API; only the caller's delegations are in it.
    const started = await call('POST', '/v1/delegations?wait=20s', { instructions: 'listed later' });
    const id = String(started.json.id);
    const listed = await until(() => call('GET', '/v1/delegations?pageSize=50'), (page) => JSON.stringify(page.json).includes(id), 'the listing', 20_000);
    expect(listed.statusCode).toBe(200);
    expect(JSON.stringify((await call('GET', '/v1/delegations?pageSize=50', undefined, otherKey)).json)).not.toContain(id);
    // Sources (YAML, JSON Schema validation, the S3 SDK: chunks loaded by this request).
    const sources = await call('GET', '/v1/sources');
    expect(sources.statusCode, sources.body).toBe(200);
    expect(JSON.stringify(sources.json)).toContain('deploy');
    expect((await call('GET', '/v1/sources/deploy')).statusCode).toBe(200);
    // Approvals: a visibility listing and queries, none waiting.
    const approvals = await call('GET', '/v1/approvals');
    expect(approvals.statusCode, approvals.body).toBe(200);
    // MCP (the MCP SDK and ajv: a chunk loaded by this request): initialize, list the tools, end the session.
    const mcp = (body: unknown, sessionId?: string) =>
      emulator.invoke(
        gatewayEvent(sessionId === undefined || body !== undefined ? 'POST' : 'DELETE', '/v1/mcp', {
          key: apiKey,
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sessionId ? { 'mcp-session-id': sessionId } : {}) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
      );
    const initialized = await mcp({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'lambda-runtime-test', version: '1.0.0' } } });
    expect(initialized.statusCode, initialized.body).toBe(200);
    const sessionId = initialized.headers['mcp-session-id'] ?? '';
    expect(sessionId).not.toBe('');
    const tools = await mcp({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId);
    expect(tools.statusCode, tools.body).toBe(200);
    expect(tools.body).toContain('delegate');
    expect((await mcp(undefined, sessionId)).statusCode).toBe(204);
    expect(await client.workflow.getHandle(sessionId).result()).toMatchObject({ status: 'cancelled' });
  });

  it('projects and runs a workflow script: the bundle carries the sandbox engine, its rounds reuse the compiled module', async () => {
    // Three agents one after another: the projection runs four rounds in the function, the run on the worker.
    const script = "const a = await agent('first task');\nconst b = await agent('second task');\nconst c = await agent('third task');\nreturn [a, b, c];";
    const projected = await call('POST', '/v1/workflows', { script, dryRun: true });
    expect(projected.statusCode, projected.body).toBe(200);
    expect(projected.json).toMatchObject({ dryRun: true, projection: { agents: 3, complete: true, rounds: 4 } });
    // Warm: the same function again, its engine module already compiled.
    expect((await call('POST', '/v1/workflows', { script, dryRun: true })).json).toMatchObject({ projection: { agents: 3, rounds: 4 } });
    const started = await call('POST', '/v1/workflows?wait=25s', { script });
    expect(started.statusCode, started.body).toBe(201);
    expect(started.json.result).toMatchObject({ status: 'completed', result: ['done: first task', 'done: second task', 'done: third task'] });
  });

  it('answers the event stream with 501 (Lambda cannot stream it) and an unknown route with a problem', async () => {
    const created = await call('POST', '/v1/delegations?wait=20s', { instructions: 'quick one' });
    const stream = await call('GET', `/v1/delegations/${String(created.json.id)}/events`);
    expect(stream.statusCode).toBe(501);
    expect(stream.headers['content-type']).toContain('application/problem+json');
  });
});

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { taskId as asTaskId } from '@modelcontextprotocol/ext-tasks/core';
import type { Client as TemporalClient, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { hashApiKey } from '../../src/api/auth-config';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { connectTaskSession } from '../support/mcp-task-client';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { temporalAddress, temporalNamespace, testClient, uniqueTaskQueue, cancelRunningSessions } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

/**
 * MCP 2026-07-28 across processes (decision 0042): two `errand api` processes over one worker and the run's
 * Temporal server. A client's requests carry no session header and alternate between the two APIs, and its
 * conversation (a session handle) holds; a task started through the first API is read with `tasks/get` from
 * the second after the first is SIGKILLed, and after the worker is SIGKILLed in the middle of the task's
 * model call and another worker takes over; `tasks/cancel` of a task whose subagent has a child of its own
 * cancels both.
 */

const apiKey = 'test-key-mcp-tasks-0123456789';
let temporal: TemporalClient;
let connection: Connection;
let server: ScriptedOpenAIServer;
const workers: WorkerProcess[] = [];
const apis: ApiProcess[] = [];
const closers: (() => Promise<void>)[] = [];
let taskQueue: string;
let settings: Record<string, string>;
let workDir: string;

beforeAll(async () => {
  ({ client: temporal, connection } = await testClient());
  server = await startScriptedOpenAIServer();
  // The task that survives: its first model call is slow (the worker is killed meanwhile); any other answers at once.
  let survivals = 0;
  server.setResponder((request) => {
    const body = JSON.stringify(request.body);
    // The tree: a subagent that delegates in the foreground to a child whose model call takes a minute.
    if (body.includes('tree grandchild')) return { text: 'the grandchild answers far too late', delayMs: 60_000 };
    if (body.includes('tree parent')) return { toolCalls: [{ name: 'delegate', arguments: { instructions: 'tree grandchild: take your time' } }] };
    if (body.includes('survive the restarts')) {
      survivals += 1;
      return survivals === 1 ? { text: 'thinking slowly...', delayMs: 30_000 } : { text: 'Finished after the restarts.' };
    }
    return { text: 'Answered across two APIs.' };
  });
  const root = mkdtempSync(join(tmpdir(), 'errand-mcp-tasks-'));
  workDir = join(root, 'work');
  mkdirSync(join(workDir, 'tasks-durable'), { recursive: true });
  writeFileSync(join(workDir, 'tasks-durable', 'README.md'), '# tasks test\n');
  taskQueue = uniqueTaskQueue('mcp-tasks');
  settings = {
    ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
    ERRAND_TEMPORAL_NAMESPACE: temporalNamespace(),
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: join(root, 'data'),
    ERRAND_WORKING_DIR: workDir,
    // A session's subagents may delegate once more (the tree of the tasks/cancel test).
    ERRAND_MAX_DEPTH: '2',
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]),
    // A tenant of this file alone: the MCP session cap counts a tenant's sessions across the shared Temporal server.
    ERRAND_API_KEYS: JSON.stringify([{ tenant: 'tasks-durable', sha256: hashApiKey(apiKey) }]),
  };
  const worker = startWorkerProcess('mcp-tasks-first', settings);
  workers.push(worker);
  await worker.ready;
  apis.push(await startApiProcess(settings, workDir), await startApiProcess(settings, workDir));
}, 120_000);

afterAll(async () => {
  for (const close of closers) await close().catch(() => undefined);
  await cancelRunningSessions(temporal, taskQueue);
  for (const api of apis) await api.kill();
  for (const worker of workers) await worker.kill();
  await server?.close();
  await connection?.close();
});

test('a 2026-07-28 client\'s requests carry no session header, alternate between two API processes, and its conversation holds', async () => {
  const hits = new Map<string, number>();
  const headers: Headers[] = [];
  let next = 0;
  const alternate = (_url: string | URL, init?: RequestInit): Promise<Response> => {
    const base = apis[next++ % 2]?.url ?? '';
    hits.set(base, (hits.get(base) ?? 0) + 1);
    headers.push(new Headers(init?.headers));
    return fetch(`${base}/v1/mcp`, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${apis[0]?.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } }, fetch: alternate });
  const client = new Client({ name: 'errand-two-apis-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  closers.push(() => client.close());
  await client.connect(transport);
  expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  const call = async (args: Record<string, unknown>, name = 'load') => {
    const result = (await client.callTool({ name, arguments: args })) as { content: { text?: string }[]; _meta?: Record<string, unknown> };
    return { text: result.content.map((item) => item.text ?? '').join('\n'), session: result._meta?.['errand/session'] as string | undefined };
  };
  const started = await call({ instructions: 'answer across two APIs', async: true }, 'delegate');
  expect(started.session).toMatch(/^errand-[0-9a-f]{16}$/);
  const taskId = /Started (task-\d+)/.exec(started.text)?.[1] ?? '';
  expect(taskId).not.toBe('');
  const loaded = await call({ source: taskId, session: started.session });
  expect(loaded.session).toBe(started.session);
  expect(loaded.text).toContain('Answered across two APIs.');
  expect((await call({ session: started.session })).text).toContain(taskId);
  expect([...hits.values()].every((count) => count >= 2)).toBe(true);
  expect(hits.size).toBe(2);
  for (const sent of headers) expect(sent.get('mcp-session-id')).toBeNull();
}, 120_000);

test('a task started over HTTP is read with tasks/get from a second API process after the first is killed, and after a worker SIGKILL', async () => {
  const [first, second] = apis as [ApiProcess, ApiProcess];
  const starter = await connectTaskSession([first.url], apiKey);
  closers.push(starter.close);
  const execution = await starter.session.callTool('delegate', { instructions: 'survive the restarts', async: true });
  const taskId = execution.handle?.taskId ?? asTaskId('');
  expect(String(taskId)).toMatch(/^errand-[0-9a-f]{16}~task-1$/);
  await execution.detach();
  await server.waitFor((requests) => requests.some((request) => JSON.stringify(request.body).includes('survive the restarts')), 30_000, 'the task\'s slow model call');
  await first.kill();

  const reader = await connectTaskSession([second.url], apiKey);
  closers.push(reader.close);
  expect((await reader.session.task(taskId).snapshot()).status).toBe('working');

  await workers[0]?.kill();
  const replacement = startWorkerProcess('mcp-tasks-second', settings);
  workers.push(replacement);
  await replacement.ready;
  const deadline = Date.now() + 90_000;
  let status = 'working';
  while (status !== 'completed' && Date.now() < deadline) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_000));
    status = (await reader.session.task(taskId).snapshot()).status;
  }
  expect(status).toBe('completed');
  const outcome = await reader.session.task(taskId).result();
  expect(outcome.status).toBe('completed');
  expect(JSON.stringify(outcome)).toContain('Finished after the restarts.');
}, 180_000);

test('tasks/cancel cancels the whole tree: a delegation and the child delegation it waits for both end cancelled', async () => {
  // The second test killed the first API and the first worker: the second API and the replacement serve.
  const api = apis[1] as ApiProcess;
  const { session, close } = await connectTaskSession([api.url], apiKey);
  closers.push(close);
  const execution = await session.callTool('delegate', { instructions: 'tree parent: delegate and wait', async: true });
  const taskId = String(execution.handle?.taskId ?? '');
  expect(taskId).toMatch(/^errand-[0-9a-f]{16}~task-\d+$/);
  await execution.detach();
  // The subagent's own delegation is its task-1: a child workflow, running its slow model call.
  const childId = `${taskId}~task-1`;
  await server.waitFor((requests) => requests.some((request) => JSON.stringify(request.body).includes('tree grandchild')), 60_000, 'the child delegation\'s model call');
  expect((await temporal.workflow.getHandle(childId).describe()).status.name).toBe('RUNNING');
  expect((await session.task(asTaskId(taskId)).snapshot()).status).toBe('working');

  await session.task(asTaskId(taskId)).cancel();
  const deadline = Date.now() + 60_000;
  let status = 'working';
  while (status !== 'cancelled' && Date.now() < deadline) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 500));
    status = (await session.task(asTaskId(taskId)).snapshot()).status;
  }
  expect(status).toBe('cancelled');
  // Temporal has both closed as cancelled, the child before its model ever answered.
  for (const id of [taskId, childId]) {
    const handle = temporal.workflow.getHandle(id);
    const result = (await handle.result()) as { status?: string };
    expect({ id, status: result.status }).toEqual({ id, status: 'cancelled' });
    expect((await handle.describe()).status.name).toBe('COMPLETED');
  }
}, 180_000);

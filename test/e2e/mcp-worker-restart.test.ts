import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { callErrandTool, connectErrandMcp, nextNotice, startedTask } from '../support/mcp-errand-client';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { temporalAddress, temporalNamespace, testClient, uniqueTaskQueue } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

/**
 * Durability through MCP: a background task started by an MCP client survives the SIGKILL of the worker
 * (in the middle of its model call) and the end of the client and its `errand mcp` process; a new
 * `errand mcp --session <id>` finds the task, and its notice reaches the client with a tool result.
 */

let client: Client;
let connection: Connection;
let server: ScriptedOpenAIServer;
const workers: WorkerProcess[] = [];
const mcpClients: McpClient[] = [];
let sessionId: string | undefined;

beforeAll(async () => {
  ({ client, connection } = await testClient());
  server = await startScriptedOpenAIServer();
});

afterAll(async () => {
  for (const mcp of mcpClients) await mcp.close().catch(() => undefined);
  if (sessionId) await client.workflow.getHandle(sessionId).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  for (const worker of workers) await worker.kill();
  await server?.close();
  await connection?.close();
});

test('SIGKILL of the worker and a restart of the MCP client mid-task: the reconnected client gets the task\'s notice and result', async () => {
  const root = mkdtempSync(join(tmpdir(), 'errand-mcp-restart-'));
  const workDir = join(root, 'work');
  mkdirSync(workDir);
  writeFileSync(join(workDir, 'README.md'), '# restart test\n');
  // The subagent's one model call is slow the first time (its worker is killed meanwhile) and answers the second time.
  let calls = 0;
  server.setResponder(() => {
    calls += 1;
    return calls === 1 ? { text: 'thinking slowly...', delayMs: 30_000 } : { text: 'Finished after the restart.' };
  });
  const taskQueue = uniqueTaskQueue('mcp-restart');
  const settings = {
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: join(root, 'data'),
    ERRAND_WORKING_DIR: workDir,
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]),
  };
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: process.env.TMPDIR ?? tmpdir(), ERRAND_TEMPORAL_ADDRESS: temporalAddress(), ERRAND_TEMPORAL_NAMESPACE: temporalNamespace(), ...settings };
  const first = startWorkerProcess('mcp-restart-first', settings);
  workers.push(first);
  await first.ready;

  const before = await connectErrandMcp(env, workDir);
  mcpClients.push(before.client);
  sessionId = before.sessionId;
  const started = await callErrandTool(before.client, 'delegate', { instructions: 'survive the restart', async: true });
  expect(started.isError).toBe(false);
  const taskId = startedTask(started.texts[0] ?? '');
  await server.waitFor((requests) => requests.length >= 1, 30_000, 'the subagent\'s slow model call to start');
  await first.kill();
  await before.client.close();

  const second = startWorkerProcess('mcp-restart-second', settings);
  workers.push(second);
  await second.ready;
  const after = await connectErrandMcp(env, workDir, ['--session', before.sessionId]);
  mcpClients.push(after.client);
  expect(after.sessionId).toBe(before.sessionId);
  expect(after.stderr()).toContain(`reconnected to session ${before.sessionId}`);
  const listing = await callErrandTool(after.client, 'load');
  expect(listing.texts[0]).toContain(taskId);
  // The notice comes with the first tool result after the task settled: the listing's, when the retried call
  // finished before the reconnect (seen on a cluster under load), else a later one.
  const completed = (text: string) => text.includes(`Background task ${taskId} completed`);
  const notice = listing.texts.slice(1).find(completed) ?? (await nextNotice(after.client, completed, 90_000));
  expect(notice).toContain('Finished after the restart.');
  const loaded = await callErrandTool(after.client, 'load', { source: taskId });
  expect(loaded.texts.join('\n')).toContain('Finished after the restart.');
  expect(server.requests.filter((request) => !request.aborted)).toHaveLength(1);
  expect(server.rejectedRequests).toHaveLength(0);
  expect(server.exhaustedRequests).toHaveLength(0);
}, 180_000);

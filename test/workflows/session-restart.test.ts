import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sendMessageUpdate, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { sessionInput, testClient, uniqueTaskQueue } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { until } from '../support/polling';

/**
 * Durability of background results: a background task completes, the worker process is killed with
 * SIGKILL before the parent reads the result, a new worker process starts, and load(task_id) returns it.
 */

let client: Client;
let connection: Connection;
let server: ScriptedOpenAIServer;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  ({ client, connection } = await testClient());
  server = await startScriptedOpenAIServer();
});

afterAll(async () => {
  for (const worker of workers) await worker.kill();
  await server?.close();
  await connection?.close();
});

interface WireMessage {
  role: string;
  content: string;
}

function messagesOf(request: RecordedRequest): WireMessage[] {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body) || !Array.isArray(body.messages)) return [];
  return body.messages.map((message) => {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return { role: '?', content: '' };
    return { role: String(message.role), content: typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '') };
  });
}

test('a finished background result survives a worker SIGKILL before the parent reads it', async () => {
  let slowLoadAsked = false;
  server.setResponder((request) => {
    const messages = messagesOf(request);
    const firstUser = messages.find((message) => message.role === 'user')?.content ?? '';
    if (firstUser.includes('[child]')) return { text: 'child result: the answer is 7' };
    const tools = messages.filter((message) => message.role === 'tool');
    const noticed = messages.some((message) => message.role === 'user' && message.content.startsWith('[task notice]'));
    if (tools.length === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: 'compute [child]', async: true } }] };
    if (!noticed) return { text: 'started it' };
    if (tools.length === 1) {
      // The woken turn: slow the first time, so the worker can be killed before the result is read.
      if (!slowLoadAsked) {
        slowLoadAsked = true;
        return { delayMs: 60_000, toolCalls: [{ name: 'load', arguments: { source: 'task-1' } }] };
      }
      return { toolCalls: [{ name: 'load', arguments: { source: 'task-1' } }] };
    }
    return { text: 'read the result after the restart' };
  });
  const taskQueue = uniqueTaskQueue('session-restart');
  const env = {
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-restart-data-')),
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]),
  };
  const first = startWorkerProcess('session-restart-first', env);
  workers.push(first);
  await first.ready;

  const workingDir = mkdtempSync(join(tmpdir(), 'errand-restart-work-'));
  const handle = await client.workflow.start('sessionWorkflow', {
    taskQueue,
    workflowId: `errand-session-restart-${Date.now()}`,
    args: [sessionInput({ workingDir, route: { provider: 'http', model: 'gpt-test' } })],
  });
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'Start the background job' }] });
  // Requests: the session delegates, the child answers, the session replies, the notice wakes it (slow).
  await server.waitForRequests(4, 30_000);
  expect(slowLoadAsked).toBe(true);
  // The child sends its notice just before it closes: wait for the close.
  const child = await until(() => client.workflow.getHandle(`${handle.workflowId}~task-1`).describe(), (described) => described.status.name !== 'RUNNING', 'the child to close', 10_000);
  expect(child.status.name).toBe('COMPLETED');
  await first.kill();

  const second = startWorkerProcess('session-restart-second', env);
  workers.push(second);
  await second.ready;

  const deadline = Date.now() + 60_000;
  let view: TranscriptView = await handle.query(transcriptQuery);
  while (!view.entries.some((entry) => entry.text === 'read the result after the restart') && Date.now() < deadline) {
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
    view = await handle.query(transcriptQuery);
  }
  expect(view.entries.filter((entry) => entry.role === 'assistant').map((entry) => entry.text)).toEqual(['started it', 'read the result after the restart']);
  const last = server.requests.at(-1);
  const loadResult = messagesOf(last ?? server.requests[0]!).filter((message) => message.role === 'tool').at(-1)?.content ?? '';
  expect(loadResult).toMatch(/^Task: task-1\nStatus: completed/);
  expect(loadResult).toContain('child result: the answer is 7');
  await handle.cancel();
}, 150_000);

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { subagentInput, testClient, uniqueTaskQueue } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

/**
 * Worker crash: the worker runs as a child process and is killed with SIGKILL in the middle of a model
 * call; a new worker process takes over and the delegation completes with no turn lost or done twice.
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

function messageCount(request: RecordedRequest): number {
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return -1;
  const messages = body.messages;
  return Array.isArray(messages) ? messages.length : -1;
}

test('SIGKILL of the worker mid-run: a new worker finishes the delegation, no turn lost or repeated', async () => {
  const workingDir = mkdtempSync(join(tmpdir(), 'errand-crash-work-'));
  writeFileSync(join(workingDir, 'a.txt'), 'alpha');
  const dataDir = mkdtempSync(join(tmpdir(), 'errand-crash-data-'));
  // Turns 1-2 call a tool; turn 3 is slow the first time it is asked (the worker is killed meanwhile);
  // turn 4 answers. The answer depends only on the conversation length, as a real model's would.
  const seenLengths = new Set<number>();
  server.setResponder((request) => {
    const length = messageCount(request);
    const first = !seenLengths.has(length);
    seenLengths.add(length);
    if (length === 2) return { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] };
    if (length === 4) return { toolCalls: [{ name: 'developer__read_file', arguments: { path: 'a.txt' } }] };
    if (length === 6) return first ? { text: 'thinking slowly...', delayMs: 30_000, toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] } : { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] };
    if (length === 8) return { text: 'Finished after the crash.' };
    return undefined;
  });
  const taskQueue = uniqueTaskQueue('crash');
  const env = {
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: dataDir,
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]),
  };
  const first = startWorkerProcess('crash-first', env);
  workers.push(first);
  await first.ready;

  const handle = await client.workflow.start('subagentWorkflow', {
    taskQueue,
    workflowId: `errand-crash-${Date.now()}`,
    args: [subagentInput({ prompt: 'Work through the crash', workingDir, route: { provider: 'http', model: 'gpt-test' } })],
  });
  await server.waitFor((requests) => requests.some((request) => messageCount(request) === 6), 30_000, 'the slow third turn to start');
  await first.kill();
  await server.waitFor((requests) => requests.some((request) => messageCount(request) === 6 && request.aborted), 10_000, 'the killed call to be cut off');

  const second = startWorkerProcess('crash-second', env);
  workers.push(second);
  await second.ready;
  const result: SubagentResult = await handle.result();

  expect(result.status).toBe('completed');
  expect(result.output).toBe('Finished after the crash.');
  expect(result.turns).toBe(4);
  expect(result.toolCalls).toBe(3);
  // Every completed (not aborted) model call was for a different conversation length: no turn was
  // answered twice, and the lengths show no turn was lost.
  const completed = server.requests.filter((request) => !request.aborted).map(messageCount);
  expect(completed).toEqual([2, 4, 6, 8]);
  expect(server.exhaustedRequests).toHaveLength(0);
}, 120_000);

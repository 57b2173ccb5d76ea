import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { WorkflowRunView } from '../../src/contracts/workflow-run';
import { workflowViewQuery } from '../../src/contracts/workflow-run-messages';
import { startWorkflowRun } from '../../src/workflow-runs/workflow-run-start';
import { until } from '../support/polling';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { testClient, uniqueTaskQueue } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

/**
 * A workflow run survives its worker (SEMANTICS §7 "Journal by content"): a 200-agent pipeline at
 * concurrency 16 runs on a worker process that is killed with SIGKILL about half way; another worker
 * takes over, and the run ends with the result an uninterrupted run has, while no agent that had finished
 * asked the model again.
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

/** The task of a request: its first user message. */
function promptOf(request: RecordedRequest): string {
  const body = request.body as { messages?: Array<{ role: string; content: unknown }> };
  const first = body.messages?.find((message) => message.role === 'user');
  if (typeof first?.content === 'string') return first.content;
  return Array.isArray(first?.content) ? first.content.map((part: { text?: string }) => part.text ?? '').join('') : '';
}

const items = Array.from({ length: 100 }, (_, index) => `item${index}`);
const script = `
const firsts = args.items;
return await pipeline(firsts,
  (item) => agent('first ' + item, { label: 'first ' + item }),
  (first, item) => agent('second ' + first, { label: 'second ' + item }));
`;

test('SIGKILL of the worker half way through a 200-agent pipeline: the run completes, no finished agent asks the model again', async () => {
  // An answer takes a little while, as a model's does, so the kill finds agents running.
  server.setResponder((request) => ({ text: `done(${promptOf(request)})`, delayMs: 100 }));
  const taskQueue = uniqueTaskQueue('wf-crash');
  const env = {
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-wf-crash-data-')),
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]),
    ERRAND_MODEL_HEARTBEAT_TIMEOUT_MS: '3000',
  };
  const first = startWorkerProcess('wf-crash-first', env);
  workers.push(first);
  await first.ready;
  const workingDir = mkdtempSync(join(tmpdir(), 'errand-wf-crash-work-'));
  const handle = await startWorkflowRun(client, {
    workflowId: `errand-wf-crash-${Date.now()}`,
    taskQueue,
    input: { script, scriptName: 'crash.js', args: { items }, workingDir, caps: {}, concurrency: 16, maxAgents: 1_000, startedBy: 'test' },
  });
  const doneOf = (view: WorkflowRunView) => view.labels.reduce((sum, label) => sum + label.done, 0);
  // The view lists the agents of the current link of the run's chain (it continues as new every 100
  // agents): the finished ones are collected at each look.
  const finished = new Set<string>();
  await until(
    () => handle.query(workflowViewQuery),
    (view) => {
      for (const agent of view.agents) if (agent.state === 'done') finished.add(agent.label ?? '');
      return doneOf(view) >= 100;
    },
    'half the agents to finish',
    120_000,
  );
  await first.kill();
  const finishedBefore = [...finished];
  expect(finishedBefore.length).toBeGreaterThanOrEqual(50);

  const second = startWorkerProcess('wf-crash-second', env);
  workers.push(second);
  await second.ready;
  const result = await handle.result();

  expect(result.status).toBe('completed');
  // What an uninterrupted run returns: every item through both stages, in order.
  expect(result.result).toEqual(items.map((item) => `done(second done(first ${item}))`));
  expect(result.agents.done).toBe(200);
  const asked = new Map<string, number>();
  for (const request of server.requests) asked.set(promptOf(request), (asked.get(promptOf(request)) ?? 0) + 1);
  expect(asked.size).toBe(200);
  // An agent that had finished before the kill never asked again; one cut off by it may have.
  const promptOfLabel = (label: string) => (label.startsWith('first ') ? label : `second done(first ${label.slice('second '.length)})`);
  const repeated = finishedBefore.filter((label) => asked.get(promptOfLabel(label)) !== 1);
  expect(repeated).toEqual([]);
  expect(server.rejectedRequests).toHaveLength(0);
  expect(server.exhaustedRequests).toHaveLength(0);
}, 300_000);

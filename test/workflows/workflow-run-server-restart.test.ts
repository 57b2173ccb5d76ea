import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ModelRequest } from '../../src/contracts/model';
import type { WorkflowRunView } from '../../src/contracts/workflow-run';
import { workflowViewQuery } from '../../src/contracts/workflow-run-messages';
import { createScriptedModel } from '../../src/llm/scripted-model';
import { startWorkflowRun } from '../../src/workflow-runs/workflow-run-start';
import { ownTemporalServer, type OwnServer, type StartOwnServer } from '../support/own-temporal-server';
import { until } from '../support/polling';
import { freshFolder } from '../support/run-harness';
import { useWorkerStack } from '../support/worker-stack';

/**
 * A workflow run survives a restart of the Temporal server (a server of this file's own, restarted on its
 * state): a 60-agent pipeline is half way when the server stops; once it is back, the run completes with
 * the result an uninterrupted run has, and no agent that had finished asks the model again.
 */

let server: OwnServer;
let startServer: StartOwnServer;

function promptOf(request: ModelRequest): string {
  const first = request.messages.find((message) => message.role === 'user');
  return first?.role === 'user' ? first.content : '';
}

beforeAll(async () => {
  startServer = ownTemporalServer({ label: 'wf-restart' });
  server = await startServer();
}, 240_000);
afterAll(async () => {
  await server?.stop();
});

const model = createScriptedModel((request) => ({ text: `done(${promptOf(request)})`, delayMs: 100 }));
const stack = useWorkerStack(() => ({ label: 'wf-restart', address: server.address, scripted: { scripted: { model } } }));

test('the server restarts half way through a 60-agent pipeline: the run completes, no finished agent asks again', async () => {
  const items = Array.from({ length: 30 }, (_, index) => `item${index}`);
  const script = `return await pipeline(args.items,\n  (item) => agent('first ' + item, { label: 'first ' + item }),\n  (first, item) => agent('second ' + first, { label: 'second ' + item }));`;
  const handle = await startWorkflowRun(stack.client, {
    workflowId: `errand-wf-restart-${Date.now()}`,
    taskQueue: stack.taskQueue,
    input: { script, scriptName: 'restart.js', args: { items }, workingDir: freshFolder('errand-wf-restart-'), caps: {}, concurrency: 8, maxAgents: 100, startedBy: 'test' },
  });
  const doneOf = (view: WorkflowRunView) => view.labels.reduce((sum, label) => sum + label.done, 0);
  const before = await until(() => handle.query(workflowViewQuery), (view) => doneOf(view) >= 30, 'half the agents to finish', 120_000);
  await server.stop();
  server = await startServer();
  const result = await until(() => handle.result(), () => true, 'the run to end after the restart', 180_000);
  expect(result.status).toBe('completed');
  expect(result.result).toEqual(items.map((item) => `done(second done(first ${item}))`));
  const asked = new Map<string, number>();
  for (const request of model.requests) asked.set(promptOf(request), (asked.get(promptOf(request)) ?? 0) + 1);
  expect(asked.size).toBe(60);
  const promptOfLabel = (label: string) => (label.startsWith('first ') ? label : `second done(first ${label.slice('second '.length)})`);
  const finishedBefore = before.agents.filter((agent) => agent.state === 'done').map((agent) => agent.label ?? '');
  expect(finishedBefore.length).toBeGreaterThanOrEqual(30);
  expect(finishedBefore.filter((label) => asked.get(promptOfLabel(label)) !== 1)).toEqual([]);
  expect(model.rejectedCalls).toHaveLength(0);
}, 400_000);

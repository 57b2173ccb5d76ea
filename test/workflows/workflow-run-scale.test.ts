import type { WorkflowHandle } from '@temporalio/client';
import { expect, test } from 'vitest';
import type { ModelRequest } from '../../src/contracts/model';
import { workflowRunMessageNames, workflowViewMaxAgents, type WorkflowRunView } from '../../src/contracts/workflow-run';
import { createScriptedModel } from '../../src/llm/scripted-model';
import { startWorkflowRun } from '../../src/workflow-runs/workflow-run-start';
import { freshFolder } from '../support/run-harness';
import { useWorkerStack } from '../support/worker-stack';

/**
 * History stays bounded at any size of run (SEMANTICS §7 "History"): a 1,000-agent run completes, and
 * each of its runs (it continues as new, carrying the journal's reference) keeps a history far below
 * Temporal's limits, whatever the number of agents.
 */

function promptOf(request: ModelRequest): string {
  const first = request.messages.find((message) => message.role === 'user');
  return first?.role === 'user' ? first.content : '';
}

// Not recorded: a thousand requests would only fill memory.
const model = createScriptedModel((request) => ({ text: `answer:${promptOf(request)}` }), { record: false });
const stack = useWorkerStack({ label: 'wf-scale', scripted: { scripted: { model } } });

test('a 1,000-agent run completes with every run of its chain of bounded history', async () => {
  const script = `const answers = await parallel(Array.from({ length: 1000 }, (_, n) => () => agent('count ' + n, { label: 'count' })));\nreturn answers.filter((answer) => answer.startsWith('answer:count ')).length;`;
  const workflowId = `errand-wf-scale-${Date.now()}`;
  const handle = await startWorkflowRun(stack.client, {
    workflowId,
    taskQueue: stack.taskQueue,
    input: { script, scriptName: 'scale.js', args: null, workingDir: freshFolder('errand-wf-scale-'), caps: {}, concurrency: 16, maxAgents: 1_000, startedBy: 'test' },
  });
  const result = await handle.result();
  expect(result).toMatchObject({ status: 'completed', result: 1000, agents: { done: 1000, failed: 0 } });

  // Walk the chain of runs from the first: each ends continued-as-new, naming the next, but the last.
  const sizes: { events: number; bytes: number }[] = [];
  let runId: string | undefined = handle.firstExecutionRunId;
  while (runId) {
    const run = stack.client.workflow.getHandle(workflowId, runId);
    const history: Awaited<ReturnType<WorkflowHandle['fetchHistory']>> = await run.fetchHistory();
    const events = history.events ?? [];
    // The server's own count of the history's size, the one its limits and suggestion use.
    sizes.push({ events: events.length, bytes: Number((await run.describe()).raw.workflowExecutionInfo?.historySizeBytes ?? 0) });
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  const largest = sizes.reduce((most, size) => (size.bytes > most.bytes ? size : most));
  const mostEvents = Math.max(...sizes.map((size) => size.events));
  process.stdout.write(`workflow-run-scale: ${sizes.length} runs; most events in one run ${mostEvents}; largest run ${largest.events} events, ${Math.round(largest.bytes / 1024)} KiB (the server's count)\n`);
  // Temporal suggests continuing as new past 4,096 events or 4 MiB (its defaults): the run then starts no
  // agent, its lanes drain and it continues. So no run of the chain holds all 1,000 agents' plans and child
  // starts, and none passes those marks by more than its running agents' ends, whatever the size of the run.
  expect(sizes.length).toBeGreaterThanOrEqual(2);
  expect(sizes.every((size) => size.bytes > 0)).toBe(true);
  expect(mostEvents).toBeLessThan(4_096 + 16 * 12);
  expect(largest.bytes).toBeLessThan(4 * 1024 * 1024 + 16 * 12 * 1024);

  // The view of the ended run (its last run of the chain) lists up to 200 agents and counts the rest, earlier runs' too.
  const view = await handle.query<WorkflowRunView>(workflowRunMessageNames.viewQuery);
  expect(view.agents.length).toBeLessThanOrEqual(workflowViewMaxAgents);
  expect(view.agents.length + view.agentsOmitted).toBe(1000);
  expect(view.labels).toEqual([expect.objectContaining({ label: 'count', done: 1000, failed: 0, running: 0, waiting: 0 })]);
}, 900_000);

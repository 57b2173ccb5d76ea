import { expect, test } from 'vitest';
import type { ModelRequest } from '../../src/contracts/model';
import type { WorkflowRunInput, WorkflowRunResult, WorkflowRunView } from '../../src/contracts/workflow-run';
import { workflowCancelSignal, workflowPauseSignal, workflowResumeSignal, workflowViewQuery } from '../../src/contracts/workflow-run-messages';
import { createScriptedModel } from '../../src/llm/scripted-model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { resumeWorkflowRun, startWorkflowRun } from '../../src/workflow-runs/workflow-run-start';
import { freshFolder, until } from '../support/run-harness';
import { useWorkerStack } from '../support/worker-stack';

/**
 * Workflow runs on the real stack (SEMANTICS §7): a script's `agent()` calls are child delegations of a
 * Temporal workflow, answered by the scripted model; the journal keeps every finished agent's result so
 * a resume with an edited script runs only what changed.
 */

/** What the scripted model does for a prompt (by default: answers `answer:<prompt>`). */
let respond: (prompt: string) => ScriptStep | Promise<ScriptStep> = (prompt) => ({ text: `answer:${prompt}` });

function promptOf(request: ModelRequest): string {
  const first = request.messages.find((message) => message.role === 'user');
  return first?.role === 'user' ? first.content : '';
}

const model = createScriptedModel((request) => respond(promptOf(request)));
const stack = useWorkerStack({ label: 'workflow-run', scripted: { scripted: { model } } });

function runInput(script: string, overrides: Partial<WorkflowRunInput> = {}): WorkflowRunInput {
  return { script, scriptName: 'test.js', args: null, workingDir: freshFolder('errand-wfrun-'), caps: {}, concurrency: 4, maxAgents: 100, startedBy: 'test', ...overrides };
}
const nextId = (name: string): string => stack.nextId(`wf-${name}`);
function promptsAsked(): string[] {
  return model.requests.map(promptOf);
}

const pipelineScript = `
const items = args.items;
const results = await pipeline(items,
  (item) => agent('summarise ' + item, { label: 'summarise' }),
  (summary, item) => agent('check ' + summary, { label: 'check', phase: 'checking' }));
log('checked ' + results.length);
return results;
`;

test('a pipeline runs every agent as a delegation once and returns the script result', async () => {
  const items = ['a', 'b', 'c', 'd', 'e', 'f'];
  const before = model.requests.length;
  const handle = await startWorkflowRun(stack.client, { workflowId: nextId('pipeline'), taskQueue: stack.taskQueue, input: runInput(pipelineScript, { args: { items } }) });
  const result: WorkflowRunResult = await handle.result();
  expect(result.status).toBe('completed');
  expect(result.result).toEqual(items.map((item) => `answer:check answer:summarise ${item}`));
  expect(result.agents).toEqual({ done: 12, failed: 0, fromJournal: 0 });
  expect(result.tokens).toBeGreaterThan(0);
  const asked = promptsAsked().slice(before);
  expect(asked).toHaveLength(12);
  expect(new Set(asked).size).toBe(12);
  const view: WorkflowRunView = await handle.query(workflowViewQuery);
  expect(view.status).toBe('completed');
  expect(view.labels.find((label) => label.label === 'summarise')).toMatchObject({ done: 6, failed: 0, running: 0, waiting: 0 });
  expect(view.labels.find((label) => label.label === 'check')).toMatchObject({ done: 6, failed: 0 });
  expect(view.agents).toHaveLength(12);
  expect(view.agents[0]?.delegationId).toMatch(/~agent-\d+$/);
  expect(view.logs).toEqual(['checked 6']);
  expect(model.rejectedCalls).toHaveLength(0);
}, 120_000);

test('a failed agent is a rejection; an edited script resumed runs only the failed and the changed agents', async () => {
  const script = (variant: string) => `
const numbers = [1, 2, 3, 4, 5];
const squares = await parallel(numbers.map((n) => () => agent('square ${variant}' + (n === 2 ? ' edited' : '') + ' ' + n, { label: 'square' })));
const failed = squares.filter((value) => value === null).length;
if (failed > 0) throw new Error(failed + ' agents failed');
return await agent('sum ' + squares.join(','), { label: 'sum' });
`;
  let failOnce = true;
  respond = (prompt) => {
    if (prompt === 'square v 3' && failOnce) {
      failOnce = false;
      return { error: { status: 400, message: 'scripted refusal' } };
    }
    return { text: `answer:${prompt}` };
  };
  const first = await startWorkflowRun(stack.client, { workflowId: nextId('fail'), taskQueue: stack.taskQueue, input: runInput(script('v')) });
  const failedRun = await first.result();
  expect(failedRun.status).toBe('failed');
  expect(failedRun.diagnostic).toMatchObject({ kind: 'error', message: 'Error: 1 agents failed', line: 5 });
  expect(failedRun.agents).toEqual({ done: 4, failed: 1, fromJournal: 0 });

  const before = model.requests.length;
  // The edit changes agent 2's prompt only: agents 1, 4 and 5 come from the journal; 2 (edited) and 3
  // (failed) run again, and the sum, whose prompt depends on them.
  const resumed = await resumeWorkflowRun(stack.client, first.workflowId, { workflowId: nextId('resume'), taskQueue: stack.taskQueue, input: runInput(script('v').replace("(n === 2 ? ' edited' : '')", "(n === 2 ? ' changed' : '')")) });
  const end = await resumed.result();
  expect(end.status).toBe('completed');
  expect(promptsAsked().slice(before).sort()).toEqual(['square v 3', 'square v changed 2', 'sum answer:square v 1,answer:square v changed 2,answer:square v 3,answer:square v 4,answer:square v 5'].sort());
  expect(end.result).toBe('answer:sum answer:square v 1,answer:square v changed 2,answer:square v 3,answer:square v 4,answer:square v 5');
  expect(end.agents.fromJournal).toBe(4);
  respond = (prompt) => ({ text: `answer:${prompt}` });
}, 120_000);

test('a fan-out keeps its lanes full: the lane of an ended agent starts the next queued one before any other round, never more than concurrency at once', async () => {
  respond = (prompt) => ({ text: `answer:${prompt}`, delayMs: 200 });
  const script = `return await parallel(Array.from({ length: 12 }, (_, n) => () => agent('lane ' + n, { label: 'lane' })));`;
  const before = model.requests.length;
  const handle = await startWorkflowRun(stack.client, { workflowId: nextId('lanes'), taskQueue: stack.taskQueue, input: runInput(script, { concurrency: 3 }) });
  const result = await handle.result();
  expect(result.status).toBe('completed');
  expect(result.result).toEqual(Array.from({ length: 12 }, (_, n) => `answer:lane ${n}`));
  expect(result.agents).toEqual({ done: 12, failed: 0, fromJournal: 0 });
  expect(promptsAsked().slice(before).sort()).toEqual(Array.from({ length: 12 }, (_, n) => `lane ${n}`).sort());
  const history = await stack.client.workflow.getHandle(handle.workflowId, handle.firstExecutionRunId).fetchHistory();
  const steps: string[] = [];
  let children = 0;
  let most = 0;
  for (const event of history.events ?? []) {
    const activity = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (activity) steps.push(activity);
    if (event.startChildWorkflowExecutionInitiatedEventAttributes) {
      steps.push('start');
      most = Math.max(most, ++children);
    }
    if (event.childWorkflowExecutionCompletedEventAttributes) children -= 1;
  }
  expect(most).toBe(3);
  const starts = steps.flatMap((step, at) => (step === 'start' ? [at] : []));
  const roundsAt = steps.flatMap((step, at) => (step === 'runWorkflowRound' ? [at] : []));
  expect(starts).toHaveLength(12);
  // Agents are planned in batches: the first lane set and the rest, planned ahead while the lanes are busy,
  // fit one batch of 16 (decision 0048, patch workflow-run-plans-ahead-in-batches): one activity for twelve.
  expect(steps.filter((step) => step === 'planWorkflowAgents')).toHaveLength(1);
  // The first round named all twelve: the fourth agent took the first free lane, before a second round ran.
  expect(roundsAt.length).toBeGreaterThanOrEqual(2);
  expect(starts[3]!).toBeLessThan(roundsAt[1]!);
  // Rounds run only as the queue runs low or the lanes drain, not once per ended agent.
  expect(roundsAt.length).toBeLessThan(12);
  respond = (prompt) => ({ text: `answer:${prompt}` });
}, 120_000);

test('pause holds new agents back, resume lets them start, cancel ends the run cancelled', async () => {
  const gate: { open?: () => void } = {};
  const opened = new Promise<void>((resolve) => (gate.open = resolve));
  respond = async (prompt) => {
    if (prompt === 'slow one') await opened;
    // The last agent answers only after ten minutes: the run's cancel stops it first.
    if (prompt === 'slow two') return { text: 'too late', delayMs: 600_000 };
    return { text: `answer:${prompt}` };
  };
  const script = `
const first = await agent('slow one', { label: 'slow' });
const rest = await parallel([1, 2, 3].map((n) => () => agent('next ' + n, { label: 'next' })));
await agent('slow two', { label: 'slow' });
return [first, ...rest];
`;
  const handle = await startWorkflowRun(stack.client, { workflowId: nextId('pause'), taskQueue: stack.taskQueue, input: runInput(script) });
  await until(() => handle.query(workflowViewQuery), (view) => view.labels.some((label) => label.label === 'slow' && label.running === 1), 'the first agent to run', 30_000);
  await handle.signal(workflowPauseSignal);
  await until(() => handle.query(workflowViewQuery), (view) => view.status === 'paused', 'the run to show paused', 10_000);
  gate.open?.();
  // The running agent finishes; the three next ones wait while the run is paused.
  await until(() => handle.query(workflowViewQuery), (view) => view.labels.some((label) => label.label === 'next' && label.waiting === 3), 'the next agents to wait', 30_000);
  const paused = await handle.query(workflowViewQuery);
  expect(paused.labels.find((label) => label.label === 'next')).toMatchObject({ waiting: 3, running: 0, done: 0 });
  await handle.signal(workflowResumeSignal);
  await until(() => handle.query(workflowViewQuery), (view) => view.labels.some((label) => label.label === 'next' && label.done === 3), 'the next agents to finish', 30_000);
  await until(() => handle.query(workflowViewQuery), (view) => view.labels.some((label) => label.label === 'slow' && label.running === 1 && label.done === 1), 'the last agent to run', 30_000);
  await handle.signal(workflowCancelSignal, { reason: 'enough' });
  const end = await handle.result();
  expect(end.status).toBe('cancelled');
  expect(end.agents).toEqual({ done: 4, failed: 0, fromJournal: 0 });
  const view = await handle.query(workflowViewQuery);
  expect(view.agents.find((agent) => agent.label === 'slow' && agent.state === 'cancelled')).toBeDefined();
  respond = (prompt) => ({ text: `answer:${prompt}` });
}, 120_000);

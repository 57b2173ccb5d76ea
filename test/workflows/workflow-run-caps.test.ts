import { expect, test } from 'vitest';
import type { ModelRequest } from '../../src/contracts/model';
import type { WorkflowRunInput } from '../../src/contracts/workflow-run';
import { workflowAgentId } from '../../src/contracts/workflow-ids';
import { workflowRestartAgentUpdate, workflowViewQuery } from '../../src/contracts/workflow-run-messages';
import { createScriptedModel } from '../../src/llm/scripted-model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { startWorkflowRun } from '../../src/workflow-runs/workflow-run-start';
import { until } from '../support/polling';
import { freshFolder } from '../support/run-harness';
import { useWorkerStack } from '../support/worker-stack';

/**
 * A workflow run's caps and its restart (SEMANTICS §7 "Limits", "Control"): a cost cap covers every agent
 * of the run and stops a fan-out mid-run with status `budget`, and the agents running at once share it; restarting a finished agent drops its key
 * from the journal, so its call runs again at the next round.
 */

let respond: (prompt: string, call: number, request: ModelRequest) => ScriptStep | Promise<ScriptStep> = () => ({ text: 'unused' });

function promptOf(request: ModelRequest): string {
  const first = request.messages.find((message) => message.role === 'user');
  return first?.role === 'user' ? first.content : '';
}

const model = createScriptedModel((request, call) => respond(promptOf(request), call, request));
// $2 per million input tokens: an answer reported with 1,000 input tokens costs 2,000 micro-dollars.
const stack = useWorkerStack({ label: 'wf-caps', scripted: { scripted: { model, models: [{ id: 'priced-model', prices: { input: 2, output: 8 } }] } } });

function runInput(script: string, overrides: Partial<WorkflowRunInput> = {}): WorkflowRunInput {
  return { script, scriptName: 'caps.js', args: null, workingDir: freshFolder('errand-wf-caps-'), caps: {}, concurrency: 2, maxAgents: 100, startedBy: 'test', ...overrides };
}

test('a cost cap stops a fan-out mid-run: running agents are cancelled and the run ends budget, naming the cap', async () => {
  respond = (prompt) => ({ text: `answer:${prompt}`, usage: { inputTokens: 1_000, outputTokens: 0 }, delayMs: 50 });
  const before = model.requests.length;
  const script = `return await parallel(Array.from({ length: 20 }, (_, n) => () => agent('count ' + n, { label: 'count' })));`;
  const handle = await startWorkflowRun(stack.client, { workflowId: `errand-wf-cost-${Date.now()}`, taskQueue: stack.taskQueue, input: runInput(script, { caps: { costBudgetMicroUsd: 10_000 } }) });
  const result = await handle.result();
  expect(result.status).toBe('budget');
  expect(result.diagnostic).toEqual({ kind: 'budget', message: expect.stringMatching(/^the run's cost budget \(\$0\.01\) is spent: its agents cost \$0\.01/), line: null });
  expect(result.costMicroUsd).toBeGreaterThanOrEqual(10_000);
  // Five agents spend the cap; with two at once, at most one more had finished by then. The last of them
  // may have been given only what was left of the cap and ended `budget` itself (a failed agent).
  const ended = result.agents.done + result.agents.failed;
  expect(ended).toBeGreaterThanOrEqual(5);
  expect(ended).toBeLessThanOrEqual(6);
  expect(result.agents.done).toBeGreaterThanOrEqual(4);
  const asked = model.requests.length - before;
  expect(asked).toBeLessThan(20);
  const view = await handle.query(workflowViewQuery);
  expect(view.status).toBe('budget');
  expect(view.agents.filter((agent) => agent.state === 'running')).toEqual([]);
}, 120_000);

test('agents running at once share the cost cap: eight agents that would each spend the whole cap spend it together (decision 0050)', async () => {
  // Each agent lists its folder five times, then answers: six model calls of $0.002 each, $0.012 if nothing stops it.
  respond = (prompt, _call, request) => {
    const listing = request.tools.find((tool) => tool.name.endsWith('list_directory'));
    const turns = request.messages.filter((message) => message.role === 'tool').length;
    if (listing && turns < 5) return { text: `looking ${turns}`, toolCalls: [{ name: listing.name, arguments: { path: '.' } }], usage: { inputTokens: 1_000, outputTokens: 0 } };
    return { text: `answer:${prompt}`, usage: { inputTokens: 1_000, outputTokens: 0 } };
  };
  const script = `return await parallel(Array.from({ length: 8 }, (_, n) => () => agent('work ' + n, { label: 'work' }).catch((error) => 'stopped: ' + error.message)));`;
  const handle = await startWorkflowRun(stack.client, { workflowId: `errand-wf-share-${Date.now()}`, taskQueue: stack.taskQueue, input: runInput(script, { concurrency: 8, caps: { costBudgetMicroUsd: 10_000 } }) });
  const result = await handle.result();
  expect(result.status).toBe('budget');
  // Each of the eight started with an eighth of the cap ($0.00125): one call each, then its own cap stopped it.
  // Without shares each would have been given all $0.01 and made five calls or more: $0.08 in all.
  expect(result.costMicroUsd).toBeLessThanOrEqual(10_000 + 8 * 2_000);
  // Each agent's delegation was started with its share as its cost cap: never more than the first eighth.
  const caps = await Promise.all(
    Array.from({ length: 8 }, async (_, index) => {
      const history = await stack.client.workflow.getHandle(workflowAgentId(handle.workflowId, index + 1)).fetchHistory();
      const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
      return input ? (JSON.parse(Buffer.from(input).toString('utf8')) as { costBudgetMicroUsd?: number }).costBudgetMicroUsd : undefined;
    }),
  );
  for (const cap of caps) expect(cap).toBeGreaterThan(0);
  for (const cap of caps) expect(cap).toBeLessThanOrEqual(1_250);
  // An agent stopped by its share says so, and what to change.
  const stoppedByShare = (await handle.query(workflowViewQuery)).agents.filter((agent) => agent.failure?.type === 'budget');
  expect(stoppedByShare.length).toBeGreaterThan(0);
  for (const agent of stoppedByShare) expect(agent.failure?.message).toMatch(/its share of the run's caps, which the agents running at once share: raise the run's cap or lower its concurrency$/);
}, 120_000);

test('restarting a finished agent drops its key: its call runs again and the run goes on', async () => {
  const gate: { open?: () => void } = {};
  const opened = new Promise<void>((resolve) => (gate.open = resolve));
  let firstAsked = 0;
  respond = async (prompt) => {
    if (prompt === 'first') {
      firstAsked += 1;
      return { text: `first answer ${firstAsked}` };
    }
    await opened;
    return { text: `answer:${prompt}` };
  };
  const script = `const a = await agent('first', { label: 'first' });\nconst b = await agent('second', { label: 'second' });\nreturn [a, b];`;
  const handle = await startWorkflowRun(stack.client, { workflowId: `errand-wf-restart-${Date.now()}`, taskQueue: stack.taskQueue, input: runInput(script) });
  const view = await until(() => handle.query(workflowViewQuery), (current) => current.agents.some((agent) => agent.label === 'second' && agent.state === 'running'), 'the second agent to run', 30_000);
  const first = view.agents.find((agent) => agent.label === 'first');
  expect(first?.state).toBe('done');
  const second = view.agents.find((agent) => agent.label === 'second');
  // A running agent is not restarted; a finished one is.
  expect(await handle.executeUpdate(workflowRestartAgentUpdate, { args: [{ key: second!.key }] })).toMatchObject({ restarted: false, message: expect.stringMatching(/is running/) });
  await expect(handle.executeUpdate(workflowRestartAgentUpdate, { args: [{ key: 'not-a-key' }] })).rejects.toMatchObject({ cause: { message: expect.stringMatching(/64 hexadecimal digits/) } });
  expect(await handle.executeUpdate(workflowRestartAgentUpdate, { args: [{ key: first!.key }] })).toMatchObject({ restarted: true });
  gate.open?.();
  const result = await handle.result();
  expect(result.status).toBe('completed');
  expect(result.result).toEqual(['first answer 2', 'answer:second']);
  expect(firstAsked).toBe(2);
}, 120_000);

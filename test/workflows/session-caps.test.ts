import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SessionResult } from '../../src/contracts/session';
import { peekQuery } from '../../src/contracts/subagent-messages';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import type { SubagentInput } from '../../src/contracts/subagent';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { Worker } from '@temporalio/worker';
import { subagentInput, workflowBundlePath } from '../support/temporal';
import { replies, say } from '../support/session-talk';
import { useWorkerStack } from '../support/worker-stack';

/**
 * Caps of time and money (SEMANTICS §6 "Spend", decision 0027) against the real dev server, with the
 * in-process scripted model reporting usage as a vendor does and the model entry's prices:
 * input $2, output $8 per million tokens — so a call's cost in micro-dollars is 2 × input + 8 × output.
 * Each cap ends the run with its own status and a diagnostic with the figures; its open tool calls get
 * "not run" results; a child gets what remains of its parent's; a fork or a large context is estimated
 * before it starts and refused when it would not fit.
 */

const scripts = new ConversationScripts();
const stack = useWorkerStack({
  label: 'caps',
  scripted: {
    scripted: { model: scripts.model, models: [{ id: 'scripted-model', prices: { input: 2, output: 8 } }, 'unpriced-model'] },
  },
});
beforeAll(() => writeFileSync(join(stack.workingDir, 'a.txt'), 'alpha'));



function delegateCall(args: Record<string, unknown>): NonNullable<ScriptStep['toolCalls']>[number] {
  return { name: 'delegate', arguments: args as never };
}

/** The input a child workflow was started with (what the parent planned for it). */
async function startedInput(workflowId: string): Promise<SubagentInput> {
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  const data = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return JSON.parse(Buffer.from(data ?? new Uint8Array()).toString('utf8')) as SubagentInput;
}

/** The stored conversation of a workflow (its first run's). */
async function storedConversation(handle: WorkflowHandle, count: number) {
  const description = await handle.describe();
  return stack.dependencies.conversations.read(`${handle.workflowId}@${description.runId}`, count);
}

describe('cost cap', () => {
  test('a subagent over its cost budget ends cost_budget with the figures; its open tool calls are sealed "not run"', async () => {
    const marker = scripts.add('cost-child', [
      {
        text: 'looked around',
        toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }, { name: 'developer__read_file', arguments: { path: 'a.txt' } }],
        // 1,000 × 2 + 200 × 8 = 3,600 micro-dollars = $0.0036, over a budget of $0.002.
        usage: { inputTokens: 1_000, outputTokens: 200 },
      },
      { text: 'never reached' },
    ]);
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: stack.nextId('cost'),
      args: [subagentInput({ prompt: `spend ${marker}`, workingDir: stack.workingDir, costBudgetMicroUsd: 2_000 })],
    });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('budget');
    expect(result.budget).toBe('cost');
    expect(result.diagnostic).toBe('spent $0.0036 (with its subagents); the cost budget is $0.002');
    expect(result.totalUsage).toMatchObject({ inputTokens: 1_000, outputTokens: 200, costMicroUsd: 3_600, costUsd: 0.0036 });
    expect(result.partialOutput).toContain('looked around');
    expect(scripts.of('cost-child')).toHaveLength(1);
    // system, task, the assistant's two calls, and one "not run" result for each.
    const stored = await storedConversation(handle, 5);
    expect(stored.slice(3).map((message) => (message.role === 'tool' ? message.content : message.role))).toEqual([
      'not run: the cost budget was reached',
      'not run: the cost budget was reached',
    ]);
  });

  test('a delegated child reports cost_budget to its parent, whose model reads why; the child got at most what the parent had left', async () => {
    const child = scripts.add('cost-fg-child', [
      { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }], usage: { inputTokens: 2_000, outputTokens: 500 } },
      { text: 'never reached' },
    ]);
    const session = scripts.add('cost-fg', [
      // The session's own call: 3,000 × 2 + 100 × 8 = 6,800 of its 10,000 micro-dollars; 3,200 are left.
      { toolCalls: [delegateCall({ instructions: `spend ${child}`, cost_budget_usd: 1 })], usage: { inputTokens: 3_000, outputTokens: 100 } },
      { text: 'the helper ran out of money', usage: { inputTokens: 1, outputTokens: 1 } },
    ]);
    const handle = await stack.startSession({ costBudgetMicroUsd: 10_000 });
    await say(handle, `Go ${session}`);
    // The child's 2,000 × 2 + 500 × 8 = 8,000 micro-dollars cross its budget of 3,200 and the session's.
    const ended: SessionResult = await handle.result();
    const childInput = await startedInput(`${handle.workflowId}~task-1`);
    expect(childInput.costBudgetMicroUsd).toBe(3_200);
    const childResult: SubagentResult = await stack.client.workflow.getHandle(`${handle.workflowId}~task-1`).result();
    expect(childResult.status).toBe('budget');
    expect(childResult.budget).toBe('cost');
    expect(childResult.diagnostic).toBe('spent $0.008 (with its subagents); the cost budget is $0.0032');
    expect(scripts.of('cost-fg-child')).toHaveLength(1);
    // The session's foreground delegate got the child's ending; then the session itself was over its cap.
    expect(ended).toMatchObject({ status: 'budget', diagnostic: 'spent $0.0148 (with its subagents); the cost budget is $0.01' });
    expect(scripts.of('cost-fg')).toHaveLength(1);
    // Both histories (the cost search attribute behind its patch, the cap's ending) replay without nondeterminism.
    for (const id of [handle.workflowId, `${handle.workflowId}~task-1`]) {
      await Worker.runReplayHistory({ workflowBundle: { codePath: workflowBundlePath() } }, await stack.client.workflow.getHandle(id).fetchHistory(), id);
    }
  });

  test("a child's spend stays in its session's total and cap after its task record expired (TTL 1 s)", async () => {
    const child = scripts.add('cost-retired-child', [{ text: 'done', usage: { inputTokens: 3_000, outputTokens: 0 } }]);
    const session = scripts.add('cost-retired', [
      // 1,000 micro-dollars; the child's 6,000; 1,000: $0.008 of the session's $0.01 after the first message.
      { toolCalls: [delegateCall({ instructions: `work ${child}` })], usage: { inputTokens: 500, outputTokens: 0 } },
      { text: 'the helper is done', usage: { inputTokens: 500, outputTokens: 0 } },
      // The second message's call: 2,000 more, $0.01 with the child's — only if the child's 6,000 still count.
      { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }], usage: { inputTokens: 1_000, outputTokens: 0 } },
      { text: 'over the cap, never reached', usage: { inputTokens: 1, outputTokens: 1 } },
    ]);
    const handle = await stack.startSession({ costBudgetMicroUsd: 10_000, tasks: { maxBackgroundTasks: 5, waitTimeoutMs: 30_000, completedTaskTtlMs: 1_000 } });
    await say(handle, `Go ${session}`);
    await replies(handle, 1);
    // The foreground child's result was read when it ended: past the TTL, the next turn drops its record.
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_500));
    await say(handle, 'Go on');
    const ended: SessionResult = await handle.result();
    expect(ended).toMatchObject({ status: 'budget', diagnostic: 'spent $0.01 (with its subagents); the cost budget is $0.01' });
    expect(scripts.of('cost-retired')).toHaveLength(3);
    const peek: SubagentPeek = await handle.query(peekQuery);
    expect(peek.tasks).toBeUndefined();
    expect(peek.totalUsage).toMatchObject({ inputTokens: 5_000, costMicroUsd: 10_000 });
    expect(peek.usage).toMatchObject({ costMicroUsd: 4_000 });
  });

  test('a cost cap on a model without prices is refused before anything starts, naming the model', async () => {
    const session = scripts.add('cost-unpriced', [
      { toolCalls: [delegateCall({ instructions: 'cheap work', model: 'unpriced-model', cost_budget_usd: 0.5 })], usage: { inputTokens: 10, outputTokens: 10 } },
      { text: 'refused', usage: { inputTokens: 10, outputTokens: 10 } },
    ]);
    const handle = await stack.startSession();
    await say(handle, `Try ${session}`);
    await replies(handle, 1);
    const [refusal] = toolResults(scripts.of('cost-unpriced')[1]);
    expect(refusal?.isError).toBe(true);
    expect(refusal?.content).toBe(
      'delegate was not started: a cost cap (cost_budget_usd) needs a model with prices, and scripted/unpriced-model has none in the provider configuration, so the cost of its calls is unknown; choose a model with prices (list_subagent_models shows them), or leave the cost cap out.',
    );
    await handle.cancel();
  });
});

describe('time cap', () => {
  test('a subagent over its time budget (workflow clock) ends time_budget; its open tool call is sealed', async () => {
    const marker = scripts.add('time-child', [
      // The call takes 1.5 s of a 1 s budget: the check after it ends the run.
      { text: 'slow thought', toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }], delayMs: 1_500, usage: { inputTokens: 10, outputTokens: 10 } },
      { text: 'never reached' },
    ]);
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: stack.nextId('time'),
      args: [subagentInput({ prompt: `think ${marker}`, workingDir: stack.workingDir, timeBudgetMs: 1_000 })],
    });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('budget');
    expect(result.budget).toBe('time');
    expect(result.diagnostic).toMatch(/^ran for \d+ s since it started; the time budget is 1 s$/);
    expect(scripts.of('time-child')).toHaveLength(1);
    const stored = await storedConversation(handle, 4);
    expect(stored[3]).toMatchObject({ role: 'tool', content: 'not run: the time budget was reached' });
  });

  test('a child gets at most what remains of its parent time budget', async () => {
    const child = scripts.add('time-rest-child', [{ text: 'quick', usage: { inputTokens: 1, outputTokens: 1 } }]);
    const session = scripts.add('time-rest', [
      { toolCalls: [delegateCall({ instructions: `quick ${child}`, time_budget: 86_400 })], usage: { inputTokens: 1, outputTokens: 1 } },
      { text: 'ok', usage: { inputTokens: 1, outputTokens: 1 } },
    ]);
    const handle = await stack.startSession({ timeBudgetMs: 600_000 });
    await say(handle, `Go ${session}`);
    await replies(handle, 1);
    const childInput = await startedInput(`${handle.workflowId}~task-1`);
    // What the session had left when it planned the child: below its 600 s, far below the day asked for.
    expect(childInput.timeBudgetMs).toBeGreaterThan(590_000);
    expect(childInput.timeBudgetMs).toBeLessThan(600_000);
    await handle.cancel();
  });
});

describe('estimates before a start', () => {
  test('a fork whose repeated conversation would cost more than what is left is refused, naming the estimate', async () => {
    const session = scripts.add('fork-estimate', [
      // The provider reports a 40,000-token prompt: a fork repeats it, 80,000 micro-dollars at $2 per million.
      { toolCalls: [delegateCall({ instructions: 'check the same thing again', fork: true })], usage: { inputTokens: 40_000, outputTokens: 10 } },
      { text: 'no fork then', usage: { inputTokens: 10, outputTokens: 10 } },
    ]);
    // $0.1 budget; the first call spent 40,000 × 2 + 10 × 8 = 80,080, so 19,920 micro-dollars are left.
    const handle = await stack.startSession({ costBudgetMicroUsd: 100_000 });
    await say(handle, `Fork ${session}`);
    await replies(handle, 1);
    const [refusal] = toolResults(scripts.of('fork-estimate')[1]);
    expect(refusal?.isError).toBe(true);
    expect(refusal?.content).toMatch(
      /^delegate was not started: the fork's first prompt \(your conversation so far, 40000 tokens, and its task\) is estimated at 400\d\d tokens, \$0\.080\d+ at scripted\/scripted-model's input price, more than its cost budget of \$0\.01992 \(what is left of yours, or what it asked for\); delegate without fork/,
    );
    await expect(stack.client.workflow.getHandle(`${handle.workflowId}~task-1`).describe()).rejects.toThrow(/not found/i);
    await handle.cancel();
  });

  test('a delegation whose context would not fit its cost budget is refused before it starts', async () => {
    const session = scripts.add('context-estimate', [
      // 14,000 characters of context: 4,000 tokens at 3.5 characters a token, $0.008 at $2 per million, over a $0.005 budget.
      { toolCalls: [delegateCall({ instructions: 'summarise', context: 'x'.repeat(14_000), cost_budget_usd: 0.005 })], usage: { inputTokens: 10, outputTokens: 10 } },
      { text: 'too big', usage: { inputTokens: 10, outputTokens: 10 } },
    ]);
    const handle = await stack.startSession();
    await say(handle, `Context ${session}`);
    await replies(handle, 1);
    const [refusal] = toolResults(scripts.of('context-estimate')[1]);
    expect(refusal?.isError).toBe(true);
    expect(refusal?.content).toMatch(
      /^delegate was not started: the subagent's first prompt \(its instructions, context and task\) is estimated at 40\d\d tokens, \$0\.008\d+ at scripted\/scripted-model's input price, more than its cost budget of \$0\.005 .*; shorten context, or give the subagent a file to read instead\.$/,
    );
    await handle.cancel();
  });
});

describe('cost in the Web UI', () => {
  test('the current details show the cost, and the search attribute ErrandCostUsd finds the run by a visibility query', async () => {
    const marker = scripts.add('cost-visible', [
      // 2,000 × 2 + 250 × 8 = 6,000 micro-dollars; then 1,000 × 2 + 500 × 8 = 6,000: $0.012 in all.
      { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }], usage: { inputTokens: 2_000, outputTokens: 250 } },
      { text: 'two calls', usage: { inputTokens: 1_000, outputTokens: 500 } },
    ]);
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: stack.nextId('visible'), args: [subagentInput({ prompt: `price me ${marker}`, workingDir: stack.workingDir })] });
    const result: SubagentResult = await handle.result();
    expect(result.totalUsage).toMatchObject({ costMicroUsd: 12_000, costUsd: 0.012 });
    const metadata: { currentDetails?: string } = await handle.query('__temporal_workflow_metadata');
    expect(metadata.currentDetails).toContain('cost: 3000 in, 750 out · $0.012');
    const description = await handle.describe();
    expect(description.searchAttributes).toMatchObject({ ErrandCostUsd: [0.012] });
    const found = async (query: string) => {
      const ids: string[] = [];
      for await (const execution of stack.client.workflow.list({ query })) ids.push(execution.workflowId);
      return ids;
    };
    // Visibility is eventually consistent: wait until the run is listed at all, then ask by cost.
    const deadline = Date.now() + 15_000;
    while ((await found(`WorkflowId = '${handle.workflowId}' AND ErrandCostUsd > 0.011`)).length === 0 && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 250));
    expect(await found(`WorkflowId = '${handle.workflowId}' AND ErrandCostUsd > 0.011`)).toEqual([handle.workflowId]);
    expect(await found(`WorkflowId = '${handle.workflowId}' AND ErrandCostUsd > 0.012`)).toEqual([]);
  });
});

describe('time cap during an answer', () => {
  let server: ScriptedOpenAIServer;
  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
  });
  // Registered before the worker's stack, so the server closes after the worker has stopped.
  afterAll(async () => {
    await server?.close();
  });
  const http = useWorkerStack(() => ({ label: 'caps-deadline', providers: [{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }] }));

  test('an answer still being written when the time budget ends is cut there: the run ends time_budget, the stream is closed', async () => {
    // About 100 s of answer at 50 ms a word; the budget is 2 s, far below errand's 240 s answer time cap.
    server.enqueue({ text: 'word '.repeat(2_000), chunkDelayMs: 50 });
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: http.taskQueue,
      workflowId: stack.nextId('deadline'),
      args: [subagentInput({ prompt: 'Write a long story', workingDir: stack.workingDir, route: { provider: 'http', model: 'gpt-test' }, timeBudgetMs: 2_000 })],
    });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('budget');
    expect(result.budget).toBe('time');
    expect(result.diagnostic).toMatch(/the time budget is 2 s$/);
    // What it had written is kept, not the whole answer: errand closed the provider's stream at the deadline.
    expect(result.partialOutput.length).toBeGreaterThan(0);
    expect(result.partialOutput.length).toBeLessThan('word '.repeat(2_000).length);
    await server.waitFor((requests) => requests[0]?.finishedAt !== undefined, 30_000, 'the stream to be closed');
    expect(server.requests[0]?.aborted).toBe(true);
    expect(server.rejectedRequests).toEqual([]);
  });

  test('a provider still reading the prompt when the time budget ends is left there: the run ends time_budget, not a retry', async () => {
    server.reset();
    // No byte for 60 s (a long prompt being read); the budget is 2 s.
    server.enqueue({ text: 'too late', delayMs: 60_000 });
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: http.taskQueue,
      workflowId: stack.nextId('deadline-first-byte'),
      args: [subagentInput({ prompt: 'Read this long prompt', workingDir: stack.workingDir, route: { provider: 'http', model: 'gpt-test' }, timeBudgetMs: 2_000 })],
    });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('budget');
    expect(result.budget).toBe('time');
    // One request, closed by errand: the call was not retried as a provider outage.
    await server.waitFor((requests) => requests[0]?.finishedAt !== undefined, 30_000, 'the request to be closed');
    expect(server.requests).toHaveLength(1);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });
});

import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, test } from 'vitest';
import type { SessionInput } from '../../src/contracts/session';
import { peekQuery, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import type { SubagentPeek } from '../../src/contracts/subagent-result';
import type { WorkflowRunInput, WorkflowRunResult } from '../../src/contracts/workflow-run';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { replies, say } from '../support/session-talk';
import { useWorkerStack } from '../support/worker-stack';

/**
 * `run_workflow` from a session's model (SEMANTICS §7, decision 0045) on the real stack with a scripted
 * model: a run in the foreground returns the script's result; in the background it is a task that load
 * peeks at (its agents), waits for and cancels; its caps are what the session has left, so a run over
 * them ends `budget` or is refused; its spend joins the session's total.
 */

const scripts = new ConversationScripts();
const stack = useWorkerStack({ label: 'session-runwf', scripted: { scripted: { model: scripts.model } } });

/** A session of tenant acme (the run's tenant is its caller's). */
function startSession(overrides: Partial<SessionInput> = {}): Promise<WorkflowHandle> {
  return stack.startSession({ tenant: 'acme', ...overrides }, 'session-runwf');
}



function runCall(args: Record<string, unknown>): NonNullable<ScriptStep['toolCalls']>[number] {
  return { name: 'run_workflow', arguments: args as never };
}

async function waitUntil(ready: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

/** Waits for a run the session starts (its planning runs first). */
async function started(workflowId: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await stack.client.workflow.getHandle(workflowId).describe();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    }
  }
}

async function runInputOf(workflowId: string): Promise<WorkflowRunInput> {
  const history = await stack.client.workflow.getHandle(workflowId).fetchHistory();
  const data = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return JSON.parse(Buffer.from(data ?? new Uint8Array()).toString('utf8')) as WorkflowRunInput;
}

describe('session: run_workflow', () => {
  test("in the foreground: the script's result comes back; the run is <session>~task-1 of the session's tenant; its spend joins the session's", async () => {
    const a = scripts.add('fg-wf-a', [{ text: 'alpha found', usage: { inputTokens: 120, outputTokens: 30 } }]);
    const b = scripts.add('fg-wf-b', [{ text: 'beta found', usage: { inputTokens: 80, outputTokens: 20 } }]);
    const script = `const [x, y] = await parallel([() => agent(${JSON.stringify(`look ${a}`)}, { label: 'look' }), () => agent(${JSON.stringify(`look ${b}`)}, { label: 'look' })]);\nreturn { x, y, n: args.n };`;
    const session = scripts.add('fg-wf', [{ toolCalls: [runCall({ script, args: { n: 2 }, description: 'two lookups' })] }, { text: 'both found' }]);
    const handle = await startSession();
    await say(handle, `Run it ${session}`);
    expect(await replies(handle, 1, 60_000)).toEqual(['both found']);
    const answer = toolResults(scripts.of('fg-wf')[1])[0];
    expect(answer?.isError ?? false).toBe(false);
    expect(answer?.content).toContain(`Workflow run ${handle.workflowId}~task-1 (inline script) ended completed: 2 agents`);
    expect(answer?.content).toContain('"x": "alpha found"');
    expect(answer?.content).toContain('"n": 2');
    // The model was offered run_workflow (a session is at depth 0).
    expect(scripts.of('fg-wf')[0]?.tools.map((tool) => tool.name)).toContain('run_workflow');

    const runId = `${handle.workflowId}~task-1`;
    const run: WorkflowRunResult = await stack.client.workflow.getHandle(runId).result();
    expect(run.status).toBe('completed');
    expect(run.tokens).toBe(250);
    const description = await stack.client.workflow.getHandle(runId).describe();
    expect(description.type).toBe('workflowRunWorkflow');
    expect(description.searchAttributes.ErrandTenant).toEqual(['acme']);
    expect(description.searchAttributes.ErrandKind).toEqual(['workflow']);
    expect((await runInputOf(runId)).tenant).toBe('acme');
    // The session's total is its own calls plus the run's 250 tokens.
    const peek: SubagentPeek = await handle.query(peekQuery);
    const own = peek.usage.inputTokens + peek.usage.outputTokens;
    const total = (peek.totalUsage?.inputTokens ?? 0) + (peek.totalUsage?.outputTokens ?? 0);
    expect(total - own).toBe(250);
    expect(scripts.model.rejectedCalls).toEqual([]);
    await handle.cancel();
  }, 120_000);

  test('in the background: a task id at once; load peeks at the run (its agents), waits for it, and its end is a notice', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolveRelease) => {
      release = resolveRelease;
    });
    const slow = scripts.add('bg-wf-agent', async () => {
      await released;
      return { text: 'slow answer' };
    });
    const script = `return await agent(${JSON.stringify(`work ${slow}`)}, { label: 'work' });`;
    const session = scripts.add('bg-wf', async (_request, call) => {
      if (call === 0) return { toolCalls: [runCall({ script, async: true })] };
      if (call === 1) {
        await waitUntil(() => scripts.of('bg-wf-agent').length > 0, "the run's agent to call its model");
        return { toolCalls: [{ name: 'load', arguments: { source: 'task-1', peek: true } }] };
      }
      if (call === 2) {
        release();
        return { toolCalls: [{ name: 'load', arguments: { source: 'task-1' } }] };
      }
      return { text: 'the run is done' };
    });
    const handle = await startSession();
    await say(handle, `Run in the background ${session}`);
    expect(await replies(handle, 1, 60_000)).toEqual(['the run is done']);
    const started = toolResults(scripts.of('bg-wf')[1])[0]?.content ?? '';
    expect(started).toMatch(new RegExp(`^Started task-1 in the background: workflow run ${handle.workflowId}~task-1 \\(inline script\\)`));
    const peeked = toolResults(scripts.of('bg-wf')[2]).at(-1)?.content ?? '';
    expect(peeked).toContain(`Workflow run ${handle.workflowId}~task-1 (inline script): running`);
    expect(peeked).toContain('- work: 0 done, 1 running, 0 waiting, 0 failed');
    const waited = toolResults(scripts.of('bg-wf')[3]).at(-1)?.content ?? '';
    expect(waited).toContain('Task: task-1');
    expect(waited).toContain('Status: completed');
    expect(waited).toContain('slow answer');
    expect(scripts.model.rejectedCalls).toEqual([]);
    await handle.cancel();
  }, 120_000);

  test('send_message to a run says what to use instead; load with cancel: true cancels the run and its running agent', async () => {
    const stuck = scripts.add('cancel-wf-agent', [{ text: 'never', delayMs: 60_000 }]);
    const script = `return await agent(${JSON.stringify(`stuck ${stuck}`)});`;
    const session = scripts.add('cancel-wf', async (_request, call) => {
      if (call === 0) return { toolCalls: [runCall({ script, async: true })] };
      if (call === 1) {
        await waitUntil(() => scripts.of('cancel-wf-agent').length > 0, "the run's agent to call its model");
        return { toolCalls: [{ name: 'send_message', arguments: { task_id: 'task-1', message: 'hurry up' } }] };
      }
      if (call === 2) return { toolCalls: [{ name: 'load', arguments: { source: 'task-1', cancel: true } }] };
      return { text: 'cancelled' };
    });
    const handle = await startSession();
    await say(handle, `Run and cancel ${session}`);
    expect(await replies(handle, 1, 60_000)).toEqual(['cancelled']);
    // A run takes no messages: the answer says what to use instead.
    const refused = toolResults(scripts.of('cancel-wf')[2]).at(-1);
    expect(refused?.isError).toBe(true);
    expect(refused?.content).toBe(`Message not delivered: task-1 is a workflow run, which takes no messages. load with source "task-1" waits for it (peek: true shows its agents, cancel: true stops it); pausing and resuming it is errand workflow pause/resume or POST /v1/workflows/${handle.workflowId}~task-1/pause and /resume.`);
    const answer = toolResults(scripts.of('cancel-wf')[3]).at(-1)?.content ?? '';
    expect(answer).toContain('Status: cancelled');
    const run: WorkflowRunResult = await stack.client.workflow.getHandle(`${handle.workflowId}~task-1`).result();
    expect(run.status).toBe('cancelled');
    const agent = await stack.client.workflow.getHandle(`${handle.workflowId}~task-1~agent-1`).result();
    expect(agent.status).toBe('cancelled');
    await handle.cancel();
  }, 120_000);

  test("caps: the run gets what is left of the session's token budget, ends budget past it, and its spend ends the session's budget, as a delegation's would", async () => {
    const first = scripts.add('cap-wf-a', [{ text: 'first', usage: { inputTokens: 900, outputTokens: 200 } }]);
    const second = scripts.add('cap-wf-b', [{ text: 'second', usage: { inputTokens: 900, outputTokens: 200 } }]);
    const script = `const one = await agent(${JSON.stringify(`one ${first}`)});\nconst two = await agent(${JSON.stringify(`two ${second}`)});\nreturn [one, two];`;
    const session = scripts.add('cap-wf', [
      { toolCalls: [runCall({ script, token_budget: 50_000 })], usage: { inputTokens: 300, outputTokens: 100 } },
      { text: 'never asked: the session is over its budget' },
    ]);
    const handle = await startSession({ tokenBudget: 2_000 });
    await say(handle, `Spend ${session}`);
    const runId = `${handle.workflowId}~task-1`;
    await started(runId);
    const run: WorkflowRunResult = await stack.client.workflow.getHandle(runId).result();
    // 2,000 less the session's own 400 tokens: the run may spend 1,600; its second agent crossed that.
    expect((await runInputOf(runId)).caps.tokenBudget).toBe(1_600);
    expect(run.status).toBe('budget');
    expect(run.diagnostic?.kind).toBe('budget');
    expect(run.tokens).toBe(2_200);
    // The run's 2,200 tokens join the session's 400: past its 2,000, the session ends budget before another model call.
    const deadline = Date.now() + 30_000;
    let state = '';
    while (Date.now() < deadline) {
      state = ((await handle.query(transcriptQuery)) as TranscriptView).state;
      if (state === 'budget') break;
      await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    }
    expect(state).toBe('budget');
    expect(scripts.of('cap-wf')).toHaveLength(1);
  }, 120_000);

  test("a money cap the run's projection cannot keep refuses the start, naming the argument and the session's remainder", async () => {
    const agentMarker = scripts.add('refused-wf-agent', [{ text: 'never asked' }]);
    const script = `return await agent(${JSON.stringify(`work ${agentMarker}`)});`;
    const session = scripts.add('refused-wf', [{ toolCalls: [runCall({ script })] }, { text: 'refused' }]);
    const handle = await startSession({ costBudgetMicroUsd: 5_000 });
    await say(handle, `Run it ${session}`);
    await replies(handle, 1, 60_000);
    const answer = toolResults(scripts.of('refused-wf')[1])[0];
    expect(answer?.isError).toBe(true);
    expect(answer?.content).toMatch(/^run_workflow was not started: cost_budget_usd: the run is projected at 1 agent and \d+ tokens, and 1 of them would run on scripted\/scripted-model, which has no prices/);
    expect(answer?.content).toContain("the run's cost_budget_usd is what is left of yours: $0.005");
    expect(scripts.of('refused-wf-agent')).toHaveLength(0);
    // Nothing started: the next task is still task-1.
    await expect(stack.client.workflow.getHandle(`${handle.workflowId}~task-1`).describe()).rejects.toThrow();
    await handle.cancel();
  }, 120_000);
});

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { childProgressIntervalMs } from '../../src/contracts/limits/workflow';
import { peekQuery, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { ConversationScripts, notices, toolResults } from '../support/conversation-scripts';
import { until } from '../support/polling';
import { replies, say } from '../support/session-talk';
import { useWorkerStack } from '../support/worker-stack';

/**
 * The parent session (SEMANTICS §2-§4) against the real dev server with a scripted model: delegate in
 * the foreground and background, parallel calls, the background limit, load (wait, timeout, peek,
 * cancel), settlement notices and wake-up, TTL, depth, and token budgets.
 */

const scripts = new ConversationScripts();
const stack = useWorkerStack({ label: 'session', scripted: { scripted: { model: scripts.model } } });
beforeAll(() => writeFileSync(join(stack.workingDir, 'a.txt'), 'alpha'));




function delegateCall(args: Record<string, unknown>, id?: string): NonNullable<ScriptStep['toolCalls']>[number] {
  return { name: 'delegate', arguments: args as never, ...(id ? { id } : {}) };
}

async function childResult(sessionId: string, task: string): Promise<SubagentResult> {
  return stack.client.workflow.getHandle(`${sessionId}~${task}`).result();
}

describe('session: delegate', () => {
  test('a foreground delegation returns the child final text to the model; the child is <session>~task-1', async () => {
    const child = scripts.add('fg-child', [{ text: 'Child says: 3 files.' }]);
    const session = scripts.add('fg', [
      { toolCalls: [delegateCall({ instructions: `Count the files ${child}`, description: 'count files' })] },
      { text: 'The child found 3 files.' },
    ]);
    const handle = await stack.startSession();
    await say(handle, `How many files? ${session}`);
    expect(await replies(handle, 1)).toEqual(['The child found 3 files.']);
    const second = scripts.of('fg')[1];
    expect(toolResults(second)[0]?.content).toBe('<task-output task="task-1">\nChild says: 3 files.\n</task-output>');
    expect((await childResult(handle.workflowId, 'task-1')).status).toBe('completed');
    // The session model had the orchestration tools; the child (depth 1 = limit) does not get delegate.
    expect(scripts.of('fg')[0]?.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['load', 'delegate', 'send_message', 'list_subagent_models']));
    const childTools = scripts.of('fg-child')[0]?.tools.map((tool) => tool.name) ?? [];
    expect(childTools).not.toContain('delegate');
    expect(childTools).toContain('developer__read_file');
  });

  test('several delegate calls in one turn run in parallel; results return in call order', async () => {
    const slow = scripts.add('par-slow', [{ text: 'slow result', delayMs: 1_500 }]);
    const fast = scripts.add('par-fast', [{ text: 'fast result' }]);
    const session = scripts.add('par', [
      { toolCalls: [delegateCall({ instructions: `slow ${slow}` }, 'call-slow'), delegateCall({ instructions: `fast ${fast}` }, 'call-fast')] },
      { text: 'both done' },
    ]);
    const handle = await stack.startSession();
    await say(handle, `Do both ${session}`);
    await replies(handle, 1);
    const results = toolResults(scripts.of('par')[1]);
    expect(results.map((result) => [result.toolCallId, result.content])).toEqual([['call-slow', '<task-output task="task-1">\nslow result\n</task-output>'], ['call-fast', '<task-output task="task-2">\nfast result\n</task-output>']]);
    const slowChild = await stack.client.workflow.getHandle(`${handle.workflowId}~task-1`).describe();
    const fastChild = await stack.client.workflow.getHandle(`${handle.workflowId}~task-2`).describe();
    // Both started before either ended: they ran at the same time.
    expect(fastChild.startTime.getTime()).toBeLessThan(slowChild.closeTime?.getTime() ?? 0);
    expect(slowChild.startTime.getTime()).toBeLessThan(fastChild.closeTime?.getTime() ?? 0);
  });

  test('a validation error goes back to the model and starts nothing', async () => {
    const session = scripts.add('invalid', [
      { toolCalls: [delegateCall({}), delegateCall({ instructions: 'x', parameters: { a: 1 } }), delegateCall({ instructions: 'x', max_turns: 0 }), delegateCall({ source: 'dpeloy' })] },
      { text: 'nothing started' },
    ]);
    const handle = await stack.startSession();
    await say(handle, `Break things ${session}`);
    await replies(handle, 1);
    const results = toolResults(scripts.of('invalid')[1]);
    expect(results.every((result) => result.isError)).toBe(true);
    expect(results[0]?.content).toMatch(/give `instructions`, a `source`, or both/);
    expect(results[1]?.content).toMatch(/`parameters` are only valid together with `source`/);
    expect(results[2]?.content).toMatch(/max_turns/);
    expect(results[3]?.content).toMatch(/No source named "dpeloy"/);
    expect((await handle.query(peekQuery)).tasks ?? []).toEqual([]);
  });

  test('a failing child: the result is an error whose first line says why, then diagnostic and partial output', async () => {
    const loop: ScriptStep = { text: 'partial work', toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] };
    const child = scripts.add('limit-child', [loop, loop]);
    const session = scripts.add('limit', [{ toolCalls: [delegateCall({ instructions: `loop ${child}`, max_turns: 2 })] }, { text: 'it did not finish' }]);
    const handle = await stack.startSession();
    await say(handle, `Try ${session}`);
    await replies(handle, 1);
    const result = toolResults(scripts.of('limit')[1])[0];
    expect(result?.isError).toBe(true);
    expect(result?.content.split('\n')[0]).toBe('The subagent did not finish: it reached its turn limit after 2 turns.');
    expect(result?.content).toContain('Partial output:\n<task-output task="task-1">\npartial work\n</task-output>');
  });
});

describe('session: background tasks', () => {
  test('at most 5 background tasks: the 6th of 6 parallel async calls in one turn is refused', async () => {
    const calls = Array.from({ length: 6 }, (_, index) => {
      const marker = scripts.add(`limit6-${index}`, [{ text: `task ${index} done`, delayMs: 2_000 }]);
      return delegateCall({ instructions: `job ${index} ${marker}`, async: true });
    });
    const session = scripts.add('limit6', (_request, call) => (call === 0 ? { toolCalls: calls } : { text: 'ok' }));
    const handle = await stack.startSession();
    await say(handle, `Start six ${session}`);
    await replies(handle, 1);
    const results = toolResults(scripts.of('limit6')[1]);
    expect(results).toHaveLength(6);
    expect(results.filter((result) => !result.isError)).toHaveLength(5);
    const refused = results.filter((result) => result.isError);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.content).toMatch(/5 background tasks are running and the limit is 5/);
    await handle.cancel();
  });

  test('load(task_id) waits; on timeout it says how to wait again or cancel; peek shows progress', async () => {
    // The child's first model call outlasts the progress interval, so its second turn is reported to the
    // parent (a turn within the interval of the last report is not: limits.ts, childProgressIntervalMs).
    const child = scripts.add('wait-child', [
      { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }], delayMs: childProgressIntervalMs + 500 },
      { text: 'eventually done', delayMs: 4_000 },
    ]);
    const handle = await stack.startSession({ tasks: { maxBackgroundTasks: 5, waitTimeoutMs: 1_000, completedTaskTtlMs: 600_000 } });
    const steps: ScriptStep[] = [
      { toolCalls: [delegateCall({ instructions: `slow job ${child}`, async: true, description: 'slow job' })] },
      { toolCalls: [{ name: 'load', arguments: { source: 'task-1' } }] },
      { toolCalls: [{ name: 'load', arguments: { source: 'task-1', peek: true } }] },
      { toolCalls: [{ name: 'load', arguments: { source: 'task-1' } }] },
      { text: 'waited' },
      { text: 'noticed' },
    ];
    const session = scripts.add('wait', async (_request, call) => {
      // Peek once the task has reported its second turn.
      if (call === 2) await until(async () => (await handle.query(peekQuery)).tasks?.[0]?.turns ?? 0, (turns) => turns >= 2, 'the task to report its second turn', 30_000);
      return steps[call];
    });
    await say(handle, `Wait for it ${session}`);
    await replies(handle, 1);
    const requests = scripts.of('wait');
    expect(toolResults(requests[0 + 1])[0]?.content).toMatch(/^Started task-1 in the background/);
    const timedOut = toolResults(requests[2])[1]?.content ?? '';
    expect(timedOut).toMatch(/Task task-1 is still running after waiting 1\.0s; it keeps running in the background/);
    expect(timedOut).toMatch(/cancel: true/);
    const peek = toolResults(requests[3])[2]?.content ?? '';
    expect(peek).toMatch(/Turns: 2 of 25/);
    expect(peek).toMatch(/Tool calls: 1/);
    expect(peek).toMatch(/Last tool call: developer__list_directory/);
    // The third load waited (the child answers after 4 s, more than the 1 s wait), so it may still time out;
    // the task's notice reaches the model either way once it completes: in a turn of its own, or, on a slow
    // machine, in the same run as the third load's answer.
    const noticed = await until(async () => scripts.of('wait').flatMap((request) => notices(request)).find((text) => text.startsWith('[task notice] Background task task-1 completed.')), Boolean, 'the notice', 30_000);
    expect(noticed).toContain('eventually done');
    await until(() => handle.query(transcriptQuery) as Promise<TranscriptView>, (view) => view.state === 'waiting', 'the session waiting');
  });

  test('a finished background task sends one notice and wakes the idle session for one turn', async () => {
    const child = scripts.add('notice-child', [{ text: 'Background answer: 42', delayMs: 500 }]);
    const session = scripts.add('notice', [
      { toolCalls: [delegateCall({ instructions: `compute ${child}`, async: true })] },
      { text: 'Started it.' },
      { text: 'The task says 42.' },
    ]);
    const handle = await stack.startSession();
    await say(handle, `Compute in background ${session}`);
    const texts = await replies(handle, 2);
    expect(texts).toEqual(['Started it.', 'The task says 42.']);
    const woken = scripts.of('notice')[2];
    const received = notices(woken);
    expect(received).toHaveLength(1);
    expect(received[0]).toBe('[task notice] Background task task-1 completed.\nFinal message (the task\'s own words):\n<task-output task="task-1">\nBackground answer: 42\n</task-output>');
    const view: TranscriptView = await handle.query(transcriptQuery);
    expect(view.entries.filter((entry) => entry.role === 'notice')).toHaveLength(1);
    expect(scripts.of('notice')).toHaveLength(3);
  });

  test('a result stays retrievable until read and for the TTL, then expires', async () => {
    const child = scripts.add('ttl-child', [{ text: 'ttl result' }]);
    const session = scripts.add('ttl', [
      { toolCalls: [delegateCall({ instructions: `quick ${child}`, async: true })] },
      { text: 'started' },
      { toolCalls: [{ name: 'load', arguments: { source: 'task-1' } }] },
      { text: 'read it' },
      { toolCalls: [{ name: 'load', arguments: { source: 'task-1' } }] },
      { text: 'gone' },
    ]);
    const handle = await stack.startSession({ tasks: { maxBackgroundTasks: 5, waitTimeoutMs: 5_000, completedTaskTtlMs: 1_000 } });
    await say(handle, `Run ttl ${session}`);
    expect(await replies(handle, 2)).toEqual(['started', 'read it']);
    const read = toolResults(scripts.of('ttl')[3]).at(-1)?.content ?? '';
    expect(read).toMatch(/^Task: task-1\nStatus: completed/);
    expect(read).toContain('Output:\n<task-output task="task-1">\nttl result\n</task-output>');
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_500));
    await say(handle, 'Is it still there?');
    expect(await replies(handle, 3)).toEqual(['started', 'read it', 'gone']);
    const expired = toolResults(scripts.of('ttl')[5]).at(-1)?.content ?? '';
    expect(expired).toMatch(/No source named "task-1"/);
  });
});

describe('session: cancel, depth and budgets', () => {
  test('cancel: true cancels the task and its descendants and returns what it had produced', async () => {
    const grandchild = scripts.add('cascade-grandchild', [{ text: 'never', delayMs: 60_000 }]);
    const child = scripts.add('cascade-child', [
      { text: 'I will ask a helper.', toolCalls: [delegateCall({ instructions: `deep work ${grandchild}`, async: true })] },
      { text: 'waiting for my helper', toolCalls: [{ name: 'load', arguments: { source: 'task-1' } }] },
    ]);
    const session = scripts.add('cascade', [
      { toolCalls: [delegateCall({ instructions: `lead ${child}`, async: true })] },
      { text: 'started the lead' },
      { toolCalls: [{ name: 'load', arguments: { source: 'task-1', cancel: true } }] },
      { text: 'cancelled it' },
    ]);
    const handle = await stack.startSession({ maxDepth: 2 });
    await say(handle, `Start ${session}`);
    await replies(handle, 1);
    const childId = `${handle.workflowId}~task-1`;
    const grandchildId = `${childId}~task-1`;
    // Wait until the grandchild's model call is in flight.
    const deadline = Date.now() + 20_000;
    while (scripts.of('cascade-grandchild').length === 0 && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    expect(scripts.of('cascade-grandchild')).toHaveLength(1);
    await say(handle, 'Cancel the lead now');
    await replies(handle, 2);
    const answer = toolResults(scripts.of('cascade')[3]).at(-1)?.content ?? '';
    expect(answer).toMatch(/Status: cancelled/);
    expect(answer).toContain('waiting for my helper');
    const childResult: SubagentResult = await stack.client.workflow.getHandle(childId).result();
    expect(childResult.status).toBe('cancelled');
    const grandchildResult: SubagentResult = await stack.client.workflow.getHandle(grandchildId).result();
    expect(grandchildResult.status).toBe('cancelled');
    // The child, at depth 1 of 2, was offered delegate; the grandchild, at the limit, was not.
    expect(scripts.of('cascade-child')[0]?.tools.map((tool) => tool.name)).toContain('delegate');
    expect(scripts.of('cascade-grandchild')[0]?.tools.map((tool) => tool.name)).not.toContain('delegate');
  });

  test('token budget: a subagent over its budget ends with status budget and its partial output', async () => {
    const child = scripts.add('budget-child', [
      { text: 'spent a lot', toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }], usage: { inputTokens: 900, outputTokens: 200 } },
      { text: 'never reached' },
    ]);
    const session = scripts.add('budget', [{ toolCalls: [delegateCall({ instructions: `expensive ${child}`, token_budget: 1_000 })] }, { text: 'over budget' }]);
    const handle = await stack.startSession();
    await say(handle, `Spend ${session}`);
    await replies(handle, 1);
    const result = toolResults(scripts.of('budget')[1])[0];
    expect(result?.isError).toBe(true);
    expect(result?.content.split('\n')[0]).toBe('The subagent did not finish: it reached its token budget.');
    expect(result?.content).toContain('spent a lot');
    expect(scripts.of('budget-child')).toHaveLength(1);
  });

  test("budget roll-up: a grandchild's usage counts against its parent's budget", async () => {
    const grandchild = scripts.add('rollup-grandchild', [{ text: 'heavy answer', usage: { inputTokens: 1_500, outputTokens: 500 } }]);
    const child = scripts.add('rollup-child', [
      { toolCalls: [delegateCall({ instructions: `heavy ${grandchild}` })], usage: { inputTokens: 10, outputTokens: 10 } },
      { text: 'should not get here', usage: { inputTokens: 10, outputTokens: 10 } },
    ]);
    const session = scripts.add('rollup', [{ toolCalls: [delegateCall({ instructions: `lead ${child}`, token_budget: 1_000 })] }, { text: 'rolled up' }]);
    const handle = await stack.startSession({ maxDepth: 2 });
    await say(handle, `Roll up ${session}`);
    await replies(handle, 1);
    const childResult: SubagentResult = await stack.client.workflow.getHandle(`${handle.workflowId}~task-1`).result();
    expect(childResult.status).toBe('budget');
    expect(childResult.diagnostic).toMatch(/token budget is 1000/);
    // The grandchild's report crossed the child's budget: the child stops without another model call.
    expect(scripts.of('rollup-child')).toHaveLength(1);
    expect(scripts.of('rollup-grandchild')).toHaveLength(1);
    expect(scripts.of('rollup')).toHaveLength(2);
  });

  test('a child gets at most what remains of its parent budget', async () => {
    const child = scripts.add('remaining-child', [{ text: 'cheap', usage: { inputTokens: 100, outputTokens: 100 } }]);
    const session = scripts.add('remaining', [
      { toolCalls: [delegateCall({ instructions: `ask for more ${child}`, token_budget: 50_000 })], usage: { inputTokens: 300, outputTokens: 100 } },
      { text: 'ok', usage: { inputTokens: 10, outputTokens: 1 } },
    ]);
    const handle = await stack.startSession({ tokenBudget: 2_000 });
    await say(handle, `Budget ${session}`);
    await replies(handle, 1);
    const history = await stack.client.workflow.getHandle(`${handle.workflowId}~task-1`).fetchHistory();
    const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    const input = JSON.parse(Buffer.from(started ?? new Uint8Array()).toString('utf8')) as { tokenBudget?: number };
    expect(input.tokenBudget).toBe(1_600);
    await handle.cancel();
  });
});

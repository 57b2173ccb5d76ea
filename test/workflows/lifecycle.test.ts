import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, test } from 'vitest';
import type { ChatMessage, ModelRequest } from '../../src/contracts/model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import {
  peekQuery,
  sendMessageUpdate,
  transcriptQuery,
  type TranscriptView,
} from '../../src/contracts/subagent-messages';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import { ConversationScripts, notices, toolResults } from '../support/conversation-scripts';
import { subagentInput } from '../support/temporal';
import { until } from '../support/polling';
import { useWorkerStack } from '../support/worker-stack';

/**
 * Lifecycles that hold up (SEMANTICS §5 "Sessions and continuable subagents"): orchestration steps that
 * fail become tool errors, runs that end at a limit keep the conversation valid for the next message,
 * sessions and continuables outlive failed runs, slots count running turns only, notices wake continuable
 * parents, and a subagent does not drop tasks it promised a notice for.
 */

const scripts = new ConversationScripts();
const stack = useWorkerStack({ label: 'lifecycle', scripted: { scripted: { model: scripts.model } } });

async function say(handle: WorkflowHandle, message: string): Promise<void> {
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message }] });
}

const transcriptOf = (handle: WorkflowHandle) => handle.query(transcriptQuery) as Promise<TranscriptView>;

/** What the strictest provider requires of a conversation: every tool call answered, by id, before anything else. */
function expectValidConversation(messages: ChatMessage[]): void {
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index];
    if (message?.role !== 'assistant' || !message.toolCalls?.length) continue;
    const ids = message.toolCalls.map((call) => call.id);
    const following = messages.slice(index + 1, index + 1 + ids.length);
    expect(following.map((entry) => (entry.role === 'tool' ? entry.toolCallId : `(${entry.role})`))).toEqual(ids);
  }
}

const writeAll = (request: ModelRequest) => expectValidConversation(request.messages);

describe('orchestration failures are tool errors, never a crash of the parent', () => {
  test('cancel and send_message to a task whose workflow was terminated from outside', async () => {
    const child = scripts.add('closed-child', [{ text: 'first answer' }]);
    const session = scripts.add('closed', (request, call): ScriptStep => {
      if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: `stay ${child}`, continuable: true } }] };
      if (call === 1) return { text: 'started' };
      const asked = request.messages.some((message) => message.role === 'user' && message.content === 'now talk to it');
      if (asked && !toolResults(request).some((result) => result.toolName === 'send_message')) {
        return { toolCalls: [
          { name: 'send_message', arguments: { task_id: 'task-1', message: 'are you there?' } },
          { name: 'load', arguments: { source: 'task-1', cancel: true } },
        ] };
      }
      return { text: `turn ${call}` };
    });
    const handle = await stack.startSession();
    await say(handle, `go ${session}`);
    const childHandle = stack.client.workflow.getHandle(`${handle.workflowId}~task-1`);
    await until(() => childHandle.query(peekQuery) as Promise<SubagentPeek>, (peek) => peek.state === 'waiting', 'the child waiting');
    await childHandle.terminate('gone');
    await say(handle, 'now talk to it');
    const request = await until(async () => scripts.of('closed').find((entry) => toolResults(entry).some((result) => result.toolName === 'send_message')), Boolean, 'the tool results');
    const [sent, cancelled] = toolResults(request).slice(-2);
    expect(sent?.content).toMatch(/^Message not delivered( to task-1: its workflow has ended|: task-1 has ended)/);
    expect(sent?.isError).toBe(true);
    expect(cancelled?.content).toMatch(/^Task task-1 had already ended \(failed\)/);
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.cancel();
  });

  test('a child id that is already taken: delegate reports it, the session carries on', async () => {
    const child = scripts.add('taken-child', [{ text: 'second child answered' }]);
    const session = scripts.add('taken', [
      { toolCalls: [{ name: 'delegate', arguments: { instructions: `one ${child}` } }] },
      { toolCalls: [{ name: 'delegate', arguments: { instructions: `two ${child}` } }] },
      { text: 'done' },
    ]);
    const handle = await stack.startSession();
    const squatter = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `${handle.workflowId}~task-1`,
      args: [subagentInput({ prompt: `squat ${scripts.add('squatter', [{ text: 'here first' }])}`, workingDir: stack.workingDir, continuable: true })],
    });
    await say(handle, `go ${session}`);
    await until(() => transcriptOf(handle), (view) => view.entries.some((entry) => entry.role === 'assistant'), 'the reply');
    const [first] = toolResults(scripts.of('taken')[1]);
    expect(first?.isError).toBe(true);
    expect(first?.content).toMatch(/^delegate was not started: Temporal did not start .*~task-1/);
    const [second] = toolResults(scripts.of('taken')[2]).slice(-1);
    expect(second?.content).toBe('<task-output task="task-2">\nsecond child answered\n</task-output>');
    const result: SubagentResult = await stack.client.workflow.getHandle(`${handle.workflowId}~task-2`).result();
    expect(result.status).toBe('completed');
    await handle.cancel();
    await squatter.terminate('test cleanup');
  });
});

describe('runs that end at a limit keep the conversation valid', () => {
  test('a session that hits its turn limit takes another message, and every tool call got a result', async () => {
    const session = scripts.add('limit', (request, call) => {
      writeAll(request);
      if (call < 2) return { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }, { name: 'developer__list_directory', arguments: { path: '.' } }] };
      return { text: 'fine after the limit' };
    });
    const handle = await stack.startSession({ maxTurnsPerMessage: 2 });
    await say(handle, `loop ${session}`);
    await until(() => transcriptOf(handle), (view) => view.entries.some((entry) => entry.text.startsWith('[max_turns]')), 'the turn limit');
    await say(handle, 'and now answer');
    await until(() => transcriptOf(handle), (view) => view.entries.some((entry) => entry.text === 'fine after the limit'), 'the next reply');
    const last = scripts.of('limit').at(-1);
    const results = toolResults(last);
    expect(results.slice(-2).map((result) => result.content)).toEqual([
      'not run: the turn limit was reached before this call could run',
      'not run: the turn limit was reached before this call could run',
    ]);
    expect(last?.messages.at(-1)).toEqual({ role: 'user', content: 'and now answer' });
    await handle.cancel();
  });

  test('a continuable that hits its limit answers the next send_message; the parent is told how it stopped', async () => {
    const marker = scripts.add('cont-limit', (request, call) => {
      writeAll(request);
      if (call === 0) return { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] };
      return { text: `answer ${call}` };
    });
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: stack.nextId('cont-limit'), args: [subagentInput({ prompt: `work ${marker}`, workingDir: stack.workingDir, continuable: true, maxTurns: 1 })] });
    await until(() => handle.query(peekQuery) as Promise<SubagentPeek>, (peek) => peek.state === 'waiting', 'waiting after the limit');
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'please answer now' }] });
    await until(() => transcriptOf(handle), (view) => view.entries.some((entry) => entry.text === 'answer 1'), 'the answer');
    const [notRun] = toolResults(scripts.of('cont-limit')[1]);
    expect(notRun?.content).toBe('not run: the turn limit was reached before this call could run');
    await handle.cancel();
  });
});

describe('failed runs do not end sessions and continuables', () => {
  test('a session reports a failed run and answers the next message; its background task keeps running', async () => {
    const child = scripts.add('survivor-child', [{ text: 'still here', delayMs: 3_000 }]);
    const session = scripts.add('failing', (request, call) => {
      if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: `slow ${child}`, async: true } }] };
      if (call === 1) return { error: { status: 400, message: 'bad request for this turn' } };
      return { text: `recovered ${call}` };
    });
    const handle = await stack.startSession();
    await say(handle, `go ${session}`);
    const failed = await until(() => transcriptOf(handle), (view) => view.entries.some((entry) => entry.role === 'event' && entry.text.startsWith('[failed]')), 'the failure');
    expect(failed.entries.find((entry) => entry.role === 'event')?.text).toMatch(/ModelRequestRejected: .*bad request for this turn/);
    expect(failed.state).toBe('waiting');
    await say(handle, 'try again');
    await until(() => transcriptOf(handle), (view) => view.entries.some((entry) => entry.text.startsWith('recovered')), 'the recovery');
    const childResult: SubagentResult = await stack.client.workflow.getHandle(`${handle.workflowId}~task-1`).result();
    expect(childResult.status).toBe('completed');
    await until(() => transcriptOf(handle), (view) => view.entries.some((entry) => entry.role === 'notice' && entry.text.includes('still here')), 'the notice');
    expect((await handle.describe()).status.name).toBe('RUNNING');
    await handle.cancel();
  });

  test('a message accepted during a continuable turn that then fails runs as the next activation', async () => {
    const marker = scripts.add('cont-fail', (_request, call) => {
      if (call === 0) return { error: { status: 400, message: 'the first turn fails' }, delayMs: 1_000 };
      return { text: `answer ${call}` };
    });
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: stack.nextId('cont-fail'), args: [subagentInput({ prompt: `work ${marker}`, workingDir: stack.workingDir, continuable: true })] });
    const accepted = await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'queued during the failing turn' }] });
    expect(accepted.accepted).toBe(true);
    const view = await until(() => transcriptOf(handle), (entries) => entries.entries.some((entry) => entry.text === 'answer 1'), 'the next activation');
    expect(view.entries.find((entry) => entry.role === 'event')?.text).toMatch(/^\[failed\]/);
    expect(scripts.of('cont-fail')[1]?.messages.at(-1)).toEqual({ role: 'user', content: 'queued during the failing turn' });
    await handle.cancel();
  });
});

describe('slots, caps, idle ends and notices', () => {
  test('waiting continuables hold no slot; live continuables are capped', async () => {
    const child = scripts.add('slot-child', (_request, call) => ({ text: `ready ${call}` }));
    const delegations = Array.from({ length: 3 }, (_, index) => ({ name: 'delegate', arguments: { instructions: `c${index} ${child}`, continuable: true } }));
    const session = scripts.add('slots', (request, call): ScriptStep => {
      if (call === 0) return { toolCalls: delegations };
      if (call === 1) return { text: 'three started' };
      const asked = request.messages.some((message) => message.role === 'user' && message.content === 'more');
      if (asked && toolResults(request).length === 3) {
        return { toolCalls: [{ name: 'delegate', arguments: { instructions: `bg ${child}`, async: true } }, { name: 'delegate', arguments: { instructions: `c3 ${child}`, continuable: true } }] };
      }
      return { text: `ok ${call}` };
    });
    const handle = await stack.startSession({ tasks: { maxBackgroundTasks: 3, maxContinuables: 3, waitTimeoutMs: 10_000, completedTaskTtlMs: 600_000 } });
    await say(handle, `go ${session}`);
    await until(() => handle.query(peekQuery) as Promise<SubagentPeek>, (peek) => (peek.tasks ?? []).filter((task) => task.state === 'waiting').length === 3, 'three waiting continuables');
    await say(handle, 'more');
    const request = await until(async () => scripts.of('slots').find((entry) => toolResults(entry).length >= 5), Boolean, 'the second round of results');
    const [background, fourth] = toolResults(request).slice(-2);
    expect(background?.content).toMatch(/^Started task-4 in the background/);
    expect(fourth?.content).toMatch(/^delegate was not started: 3 continuable tasks are alive and the limit is 3/);
    await handle.cancel();
  });

  test('a continuable subagent ends after its idle timeout; a session after its own', async () => {
    const marker = scripts.add('idle-session', [{ text: 'hello' }]);
    const handle = await stack.startSession({ idleTimeoutMs: 1_500 });
    await say(handle, `hi ${marker}`);
    const result = (await handle.result()) as { status: string; diagnostic?: string };
    expect(result.status).toBe('idle');
    expect(result.diagnostic).toMatch(/no message for 2 s|no message for 1 s/);
  });

  test('notices wake a continuable parent, and a subagent waits for the tasks it promised a notice for', async () => {
    const grandchild = scripts.add('promise-grandchild', [{ text: 'grandchild result', delayMs: 1_000 }]);
    const promiser = scripts.add('promiser', (request, call) => {
      if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: `look ${grandchild}`, async: true } }] };
      if (call === 1) return { text: 'started it, will report' };
      return { text: `final with: ${notices(request).join(' | ')}` };
    });
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: stack.nextId('promise'), args: [subagentInput({ prompt: `go ${promiser}`, workingDir: stack.workingDir, maxDepth: 2 })] });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.output).toMatch(/^final with: \[task notice\] Background task task-1 completed\.\nFinal message \(the task's own words\):\n<task-output task="task-1">\ngrandchild result\n<\/task-output>/);
    const child: SubagentResult = await stack.client.workflow.getHandle(`${handle.workflowId}~task-1`).result();
    expect(child.status).toBe('completed');

    const grandchild2 = scripts.add('wake-grandchild', [{ text: 'late news', delayMs: 1_000 }]);
    const waker = scripts.add('waker', (request, call) => {
      if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: `look ${grandchild2}`, async: true } }] };
      if (call === 1) return { text: 'first answer' };
      return { text: `woken: ${notices(request).length} notice(s)` };
    });
    const continuable = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: stack.nextId('waker'), args: [subagentInput({ prompt: `go ${waker}`, workingDir: stack.workingDir, maxDepth: 2, continuable: true })] });
    const view = await until(() => transcriptOf(continuable), (entries) => entries.entries.some((entry) => entry.text === 'woken: 1 notice(s)'), 'the wake-up');
    expect(view.entries.filter((entry) => entry.role === 'assistant').map((entry) => entry.text)).toEqual(['first answer', 'woken: 1 notice(s)']);
    await continuable.cancel();
  });

  test('peek carries timestamps; durations are the reader’s to compute', async () => {
    const marker = scripts.add('stamps', [{ text: 'slow answer', delayMs: 1_500 }]);
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: stack.nextId('stamps'), args: [subagentInput({ prompt: `wait ${marker}`, workingDir: stack.workingDir, continuable: true })] });
    const during: SubagentPeek = await until(() => handle.query(peekQuery) as Promise<SubagentPeek>, (peek) => peek.turns === 1, 'the first turn');
    const after: SubagentPeek = await until(() => handle.query(peekQuery) as Promise<SubagentPeek>, (peek) => peek.state === 'waiting', 'the answer');
    expect(during.startedAt).toBe(after.startedAt);
    expect(after.lastActivityAt).toBeGreaterThan(during.lastActivityAt);
    expect(after.lastActivityAt - after.startedAt).toBeGreaterThanOrEqual(1_000);
    expect(after).not.toHaveProperty('elapsedMs');
    await handle.cancel();
  });
});

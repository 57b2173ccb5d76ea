import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ChatMessage } from '../../src/contracts/model';
import { cancelSignal, peekQuery, sendMessageUpdate, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { ConversationScripts, notices, toolResults } from '../support/conversation-scripts';
import { sessionInput, subagentInput, uniqueTaskQueue } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';
import { useWorkerStack } from '../support/worker-stack';

/**
 * Continuable subagents (SEMANTICS §2, §4): send_message turns, queued in order; delivery confirmed by
 * an update with a validator; settlement notices per answer; survival of a worker SIGKILL; and history
 * that does not grow with the length of the conversation.
 */

// A context window large enough that the 200-turn history test measures turns, not compactions.
const contextWindow = 10_000_000;
const scripts = new ConversationScripts({ contextWindow });
const stack = useWorkerStack({ label: 'continuable', scripted: { scripted: { model: scripts.model, models: [{ id: 'scripted-model', contextWindow }] } } });

function userTexts(messages: ChatMessage[]): string[] {
  return messages.filter((message) => message.role === 'user').map((message) => message.content);
}

async function waitForPeek(workflowId: string, predicate: (peek: SubagentPeek) => boolean, timeoutMs = 20_000): Promise<SubagentPeek> {
  const handle = stack.client.workflow.getHandle(workflowId);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const peek: SubagentPeek = await handle.query(peekQuery);
    if (predicate(peek)) return peek;
    if (Date.now() > deadline) throw new Error(`peek never matched; last: ${JSON.stringify(peek)}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

describe('continuable subagents', () => {
  test('three messages sent mid-turn run as three later turns, in order, each with the whole conversation', async () => {
    const marker = scripts.add('three', [
      { text: 'first answer', delayMs: 1_500 },
      { text: 'answer to one' },
      { text: 'answer to two' },
      { text: 'answer to three' },
    ]);
    const workflowId = `errand-three-${Date.now()}`;
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId, args: [subagentInput({ prompt: `Begin ${marker}`, workingDir: stack.workingDir, continuable: true })] });
    await waitForPeek(workflowId, (peek) => peek.turns === 1 && peek.state === 'running');
    const accepted = [];
    for (const message of ['one', 'two', 'three']) accepted.push(await handle.executeUpdate(sendMessageUpdate, { args: [{ message }] }));
    expect(accepted.map((answer) => answer.queuedTurns)).toEqual([1, 2, 3]);
    await waitForPeek(workflowId, (peek) => peek.turns === 4 && peek.state === 'waiting');
    const requests = scripts.of('three');
    expect(requests).toHaveLength(4);
    expect(userTexts(requests[1]?.messages ?? [])).toEqual([`Begin ${marker}`, 'one']);
    expect(userTexts(requests[2]?.messages ?? [])).toEqual([`Begin ${marker}`, 'one', 'two']);
    expect(userTexts(requests[3]?.messages ?? [])).toEqual([`Begin ${marker}`, 'one', 'two', 'three']);
    const last = requests[3]?.messages ?? [];
    expect(last.filter((message) => message.role === 'assistant').map((message) => message.content)).toEqual(['first answer', 'answer to one', 'answer to two']);
    const view: TranscriptView = await handle.query(transcriptQuery);
    expect(view.entries.map((entry) => `${entry.role}:${entry.text}`)).toEqual([
      `user:Begin ${marker}`, 'assistant:first answer', 'user:one', 'assistant:answer to one', 'user:two', 'assistant:answer to two', 'user:three', 'assistant:answer to three',
    ]);
    await handle.signal(cancelSignal, { reason: 'test over' });
    const result: SubagentResult = await handle.result();
    expect(result.status).toBe('cancelled');
  });

  test('a waiting subagent\'s stack trace (the Web UI\'s Stack Trace tab) is recorded one frame deep: the sandbox runs with the preloaded stack depth', async () => {
    const marker = scripts.add('stack', [{ text: 'ready' }]);
    const workflowId = `errand-stack-${Date.now()}`;
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId, args: [subagentInput({ prompt: `Wait ${marker}`, workingDir: stack.workingDir, continuable: true })] });
    await waitForPeek(workflowId, (peek) => peek.state === 'waiting');
    // The query answers (it is what the Web UI calls); with V8's default of ten frames its answer names the
    // SDK's and errand's functions ("at condition (…)"), with errand's sandbox setting of one frame nothing.
    const stacks: string = await handle.query('__stack_trace');
    expect(typeof stacks).toBe('string');
    expect(stacks).not.toMatch(/\bat \S/);
    await handle.signal(cancelSignal, { reason: 'test over' });
    expect((await handle.result() as SubagentResult).status).toBe('cancelled');
  });

  test('sendMessage is refused at once for a subagent that is not continuable, or has ended', async () => {
    const marker = scripts.add('refuse', [{ text: 'done', delayMs: 1_000 }]);
    const workflowId = `errand-refuse-${Date.now()}`;
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId, args: [subagentInput({ prompt: `Once ${marker}`, workingDir: stack.workingDir })] });
    await expect(handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'more?' }] })).rejects.toThrow(WorkflowUpdateFailedError);
    await expect(handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'more?' }] })).rejects.toMatchObject({ cause: { message: expect.stringMatching(/is not continuable/) } });
    await handle.result();
    const ended = scripts.add('ended', [{ text: 'bye' }]);
    const second = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId: `${workflowId}-c`, args: [subagentInput({ prompt: `Short ${ended}`, workingDir: stack.workingDir, continuable: true })] });
    await waitForPeek(second.workflowId, (peek) => peek.state === 'waiting');
    await second.signal(cancelSignal, {});
    await second.result();
    await expect(second.executeUpdate(sendMessageUpdate, { args: [{ message: 'hello?' }] })).rejects.toThrow();
  });

  test('a continuable subagent ends after the configured idle time and says so', async () => {
    const marker = scripts.add('idle', [{ text: 'ready when you are' }]);
    const result: SubagentResult = await stack.client.workflow.execute('subagentWorkflow', {
      taskQueue: stack.taskQueue,
      workflowId: `errand-idle-${Date.now()}`,
      args: [subagentInput({ prompt: `Wait ${marker}`, workingDir: stack.workingDir, continuable: true, idleTimeoutMs: 1_000 })],
    });
    expect(result.status).toBe('completed');
    expect(result.output).toBe('ready when you are');
    expect(result.diagnostic).toMatch(/without a message \(idle timeout\)/);
  });

  test('from a session: send_message delivers, and each answer arrives as a notice', async () => {
    // The second answer takes a moment, so it reaches the session after the turn that sent the message.
    const child = scripts.add('chat-child', [{ text: 'child: hello' }, { text: 'child: the sum is 5', delayMs: 1_500 }]);
    const session = scripts.add('chat', [
      { toolCalls: [{ name: 'delegate', arguments: { instructions: `Be my calculator ${child}`, continuable: true } }] },
      { text: 'calculator started' },
      { toolCalls: [{ name: 'send_message', arguments: { task_id: 'task-1', message: 'what is 2+3?' } }] },
      { text: 'asked it' },
      { text: 'it says 5' },
      { toolCalls: [{ name: 'send_message', arguments: { task_id: 'task-9', message: 'anyone?' } }] },
      { text: 'no such task' },
    ]);
    const handle = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-chat-${Date.now()}`, args: [sessionInput({ workingDir: stack.workingDir })] });
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Start a calculator ${session}` }] });
    const waitReplies = async (count: number) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const view: TranscriptView = await handle.query(transcriptQuery);
        const replies = view.entries.filter((entry) => entry.role === 'assistant');
        if (replies.length >= count && view.state === 'waiting') return replies.map((entry) => entry.text);
        if (Date.now() > deadline) throw new Error(`only ${replies.length} replies`);
        await new Promise((resolveWait) => setTimeout(resolveWait, 100));
      }
    };
    // The first answer of the child arrives as a notice and wakes the session ("asked it" is the woken turn).
    await waitReplies(3);
    const requests = scripts.of('chat');
    expect(notices(requests[2])[0]).toBe('[task notice] Background task task-1 answered and is waiting for your next send_message.\nFinal message (the task\'s own words):\n<task-output task="task-1">\nchild: hello\n</task-output>');
    expect(toolResults(requests[3]).at(-1)?.content).toBe('Message delivered to task-1. Its answer will arrive as a task notice.');
    // The second answer wakes the session again ("it says 5").
    expect(await waitReplies(3)).toEqual(['calculator started', 'asked it', 'it says 5']);
    expect(notices(scripts.of('chat')[4]).at(-1)).toContain('child: the sum is 5');
    expect(userTexts(scripts.of('chat-child')[1]?.messages ?? [])).toEqual([`Be my calculator ${child}`, 'what is 2+3?']);
    await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'message a task that does not exist' }] });
    await waitReplies(4);
    expect(toolResults(scripts.of('chat')[6]).at(-1)).toMatchObject({ isError: true, content: expect.stringMatching(/^Message not delivered: task-9 is not one of your tasks/) });
    await handle.cancel();
    const childResult: SubagentResult = await stack.client.workflow.getHandle(`${handle.workflowId}~task-1`).result();
    expect(childResult.status).toBe('cancelled');
  });

  test('history bytes per turn do not grow with the conversation (turns 6-10 vs turns 196-200)', async () => {
    const big = 'x'.repeat(2_000);
    const marker = scripts.add('history', (_request, call) => ({ text: `answer ${call} ${big}` }));
    const workflowId = `errand-history-${Date.now()}`;
    // Most turns are queued at once (below), so the queue's cap is raised above them.
    const tasks = { maxBackgroundTasks: 5, waitTimeoutMs: 30_000, completedTaskTtlMs: 600_000, maxQueuedMessages: 200 };
    const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId, args: [subagentInput({ prompt: `Long chat ${marker}`, workingDir: stack.workingDir, continuable: true, maxTurns: 5, tasks })] });
    // Counted: the events that carry the conversation (activities, updates, markers). Left out: events whose
    // number depends on timing, not on the conversation — workflow-task bookkeeping (a task that timed out
    // or failed on a busy machine adds three), timers and search-attribute upserts (the views write at most
    // once per interval, so slow turns get one each and fast turns share one).
    const timingEvents = [
      'workflowTaskScheduledEventAttributes', 'workflowTaskStartedEventAttributes', 'workflowTaskCompletedEventAttributes',
      'workflowTaskFailedEventAttributes', 'workflowTaskTimedOutEventAttributes', 'timerStartedEventAttributes',
      'timerFiredEventAttributes', 'timerCanceledEventAttributes', 'upsertWorkflowSearchAttributesEventAttributes',
    ];
    const conversationBytes = async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      const counted = events.filter((event) => !timingEvents.some((attributes) => (event as Record<string, unknown>)[attributes]));
      expect(counted.length).toBeGreaterThan(0);
      return Buffer.byteLength(JSON.stringify(counted));
    };
    const sizes = new Map<number, number>();
    const send = (turn: number) => handle.executeUpdate(sendMessageUpdate, { args: [{ message: `message ${turn} ${'y'.repeat(2_000)}` }] });
    // Turns 2-10 and 195-200 one at a time (measured); turns 11-194 queued in bulk to get there quickly.
    for (let turn = 2; turn <= 200; turn += 1) {
      if (turn > 10 && turn < 195) {
        await send(turn);
        continue;
      }
      await send(turn);
      await waitForPeek(workflowId, (peek) => peek.turns === turn && peek.state === 'waiting', 120_000);
      if (turn === 5 || turn === 10 || turn === 195 || turn === 200) sizes.set(turn, await conversationBytes());
    }
    const early = ((sizes.get(10) ?? 0) - (sizes.get(5) ?? 0)) / 5;
    const late = ((sizes.get(200) ?? 0) - (sizes.get(195) ?? 0)) / 5;
    expect(early).toBeGreaterThan(4_000); // each turn's message and answer (2,000 characters each) are in it
    expect(late).toBeGreaterThan(0);
    expect(Math.abs(late - early) / early).toBeLessThanOrEqual(0.2);
    await handle.signal(cancelSignal, {});
    await handle.result();
  }, 180_000);
});

describe('continuable subagents survive a worker SIGKILL', () => {
  let server: ScriptedOpenAIServer;
  const processes: WorkerProcess[] = [];

  beforeAll(async () => {
    server = await startScriptedOpenAIServer();
  });
  afterAll(async () => {
    for (const process of processes) await process.kill();
    await server?.close();
  });

  test('killed while waiting; a new worker answers the next message with the earlier context', async () => {
    server.setResponder((request: RecordedRequest) => {
      const body = request.body;
      const count = typeof body === 'object' && body !== null && !Array.isArray(body) && Array.isArray(body.messages) ? body.messages.length : 0;
      return count <= 2 ? { text: 'I will remember the code word: marmalade.' } : { text: 'The code word was marmalade.' };
    });
    const queue = uniqueTaskQueue('continuable-kill');
    const env = {
      ERRAND_TASK_QUEUE: queue,
      ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-continuable-kill-')),
      ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]),
    };
    const first = startWorkerProcess('continuable-first', env);
    processes.push(first);
    await first.ready;
    const workflowId = `errand-survive-${Date.now()}`;
    const handle = await stack.client.workflow.start('subagentWorkflow', {
      taskQueue: queue,
      workflowId,
      args: [subagentInput({ prompt: 'Remember the code word marmalade.', workingDir: stack.workingDir, continuable: true, route: { provider: 'http', model: 'gpt-test' } })],
    });
    await waitForPeek(workflowId, (peek) => peek.state === 'waiting');
    await first.kill();
    const second = startWorkerProcess('continuable-second', env);
    processes.push(second);
    await second.ready;
    const accepted = await handle.executeUpdate(sendMessageUpdate, { args: [{ message: 'What was the code word?' }] });
    expect(accepted.accepted).toBe(true);
    const peek = await waitForPeek(workflowId, (value) => value.turns === 2 && value.state === 'waiting', 30_000);
    expect(peek.lastAssistantText).toBe('The code word was marmalade.');
    const second_request = server.requests.filter((request) => !request.aborted).at(-1);
    expect(JSON.stringify(second_request?.body)).toContain('I will remember the code word: marmalade.');
    await handle.signal(cancelSignal, {});
    await handle.result();
  }, 120_000);
});

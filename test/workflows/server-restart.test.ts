import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cancelSignal, peekQuery, sendMessageUpdate, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import type { SubagentPeek } from '../../src/contracts/subagent-result';
import type { ChatMessage } from '../../src/contracts/model';
import { sendUpdateAcrossRunChange } from '../../src/temporal/temporal-update-retry';
import { ConversationScripts } from '../support/conversation-scripts';
import { ownTemporalServer, type OwnServer, type StartOwnServer } from '../support/own-temporal-server';
import { sessionInput, subagentInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * A server of its own (so it can be stopped and restarted on the same state — a SQLite file, or PostgreSQL
 * databases on a cluster run — and so its continue-as-new threshold can be forced low): queued messages and settlement notices survive a server
 * restart; a subagent driven through continue-as-new keeps its conversation, counters and pending messages.
 */

let server: OwnServer;
let startServer: StartOwnServer;
let port: number;
const scripts = new ConversationScripts();
const historyThreshold = 60;

beforeAll(async () => {
  startServer = ownTemporalServer({ label: 'restart', dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': historyThreshold } });
  server = await startServer();
  port = server.port;
}, 240_000);
afterAll(async () => {
  await server?.stop();
});

const stack = useWorkerStack(() => ({ label: 'restart', address: server.address, scripted: { scripted: { model: scripts.model } } }));

async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await read();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value ${JSON.stringify(value).slice(0, 500)}`);
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}

function userTexts(messages: ChatMessage[] | undefined): string[] {
  return (messages ?? []).filter((message) => message.role === 'user' && !message.content.startsWith('[task notice]')).map((message) => message.content);
}


/**
 * Sends a message as errand's API does: one update id for every attempt, sent again when the server refused
 * it because the run was continuing as new (src/temporal/temporal-update-retry.ts).
 */
function sendMessage(handle: WorkflowHandle, message: string): Promise<unknown> {
  const updateId = randomUUID();
  return sendUpdateAcrossRunChange(() => handle.executeUpdate(sendMessageUpdate, { args: [{ message }], updateId }));
}

test('the server stops and restarts while a subagent waits with a queued message; the message runs and the parent gets its notice', async () => {
  const child = scripts.add('restart-child', [{ text: 'child ready' }, { text: 'answer A', delayMs: 2_000 }, { text: 'answer B' }]);
  const session = scripts.add('restart-parent', (_request, call) => (call === 0 ? { toolCalls: [{ name: 'delegate', arguments: { instructions: `Stay around ${child}`, continuable: true } }] } : { text: `parent turn ${call}` }));
  const parent = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-restart-parent-${Date.now()}`, args: [sessionInput({ workingDir: stack.workingDir })] });
  await parent.executeUpdate(sendMessageUpdate, { args: [{ message: `Start ${session}` }] });
  const childHandle = stack.client.workflow.getHandle(`${parent.workflowId}~task-1`);
  await poll(() => childHandle.query(peekQuery), (peek: SubagentPeek) => peek.state === 'waiting', 'the child to wait');

  // Message A starts a slow turn; message B is queued behind it.
  await childHandle.executeUpdate(sendMessageUpdate, { args: [{ message: 'message A' }] });
  await poll(async () => scripts.of('restart-child').length, (count) => count === 2, 'turn A to start');
  const queued = await childHandle.executeUpdate(sendMessageUpdate, { args: [{ message: 'message B' }] });
  expect(queued.queuedTurns).toBe(1);

  await server.stop();
  server = await startServer();
  expect(server.port).toBe(port);

  const view = await poll(
    () => parent.query(transcriptQuery),
    (value: TranscriptView) => value.entries.filter((entry) => entry.role === 'notice').length >= 3 && value.state === 'waiting',
    'three notices after the restart',
    90_000,
  );
  const noticeTexts = view.entries.filter((entry) => entry.role === 'notice').map((entry) => entry.text);
  expect(noticeTexts[1]).toContain('answer A');
  expect(noticeTexts[2]).toContain('answer B');
  const childRequests = scripts.of('restart-child');
  // Turn A's model call finished while the server was down; the retried activity reused its stored answer.
  expect(childRequests).toHaveLength(3);
  expect(userTexts(childRequests[2]?.messages)).toEqual([`Stay around ${child}`, 'message A', 'message B']);
  await parent.cancel();
}, 180_000);

test('continue-as-new keeps the conversation, counters and pending messages; peek reads right on both sides', async () => {
  const marker = scripts.add('can', (request, call) => ({ text: `reply ${call}`, ...(call === 3 ? { delayMs: 1_500 } : {}) }));
  const workflowId = `errand-can-${Date.now()}`;
  const handle = await stack.client.workflow.start('subagentWorkflow', { taskQueue: stack.taskQueue, workflowId, args: [subagentInput({ prompt: `Chat ${marker}`, workingDir: stack.workingDir, continuable: true })] });
  const firstRunId = (await handle.describe()).runId;
  const peekAt = (turns: number) => poll(() => handle.query(peekQuery), (peek: SubagentPeek) => peek.turns === turns && peek.state === 'waiting', `turn ${turns}`);
  await peekAt(1);
  for (let turn = 2; turn <= 3; turn += 1) {
    await sendMessage(handle, `m${turn}`);
    await peekAt(turn);
  }
  // Turn 4 is slow; three more messages queue behind it.
  await sendMessage(handle, 'm4');
  for (const message of ['m5', 'm6', 'm7']) await sendMessage(handle, message);
  for (let turn = 8; turn <= 20; turn += 1) {
    await peekAt(turn - 1);
    await sendMessage(handle, `m${turn}`);
  }
  const peek = await peekAt(20);
  expect(peek.turns).toBe(20);
  const description = await handle.describe();
  expect(description.runId).not.toBe(firstRunId);
  const requests = scripts.of('can');
  expect(requests).toHaveLength(20);
  // Every message arrived, once and in order, and the last call saw the whole conversation.
  expect(userTexts(requests[19]?.messages)).toEqual([`Chat ${marker}`, ...Array.from({ length: 19 }, (_, index) => `m${index + 2}`)]);
  const assistants = (requests[19]?.messages ?? []).filter((message) => message.role === 'assistant').map((message) => message.content);
  expect(assistants).toEqual(Array.from({ length: 19 }, (_, index) => `reply ${index}`));
  // The transcript (a bounded view for queries) carries its recent entries across continue-as-new.
  const transcript: TranscriptView = await handle.query(transcriptQuery);
  expect(transcript.entries.slice(-2).map((entry) => `${entry.role}:${entry.text}`)).toEqual(['user:m20', 'assistant:reply 19']);
  const texts = transcript.entries.filter((entry) => entry.role === 'assistant').map((entry) => entry.text);
  expect(texts).toEqual(Array.from({ length: texts.length }, (_, index) => `reply ${20 - texts.length + index}`));
  await handle.signal(cancelSignal, {});
  await handle.result();
}, 180_000);

test('a child terminated from outside during a turn, after its parent continued as new, is settled within a minute', async () => {
  // The child's second turn (for the parent's send_message) takes long: it is terminated during it.
  const child = scripts.add('probe-child', (_request, call) => ({ text: `child answer ${call}`, ...(call === 1 ? { delayMs: 120_000 } : {}) }));
  const session = scripts.add('probe-parent', (request, call) => {
    if (call === 0) return { toolCalls: [{ name: 'delegate', arguments: { instructions: `stay ${child}`, continuable: true } }] };
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'user' && last.content === 'talk to it') return { toolCalls: [{ name: 'send_message', arguments: { task_id: 'task-1', message: 'take your time' } }] };
    return { text: `parent reply ${call}` };
  });
  const handle = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-probe-${Date.now()}`, args: [sessionInput({ workingDir: stack.workingDir })] });
  const firstRunId = (await handle.describe()).runId;
  await sendMessage(handle, `start ${session}`);
  const childHandle = stack.client.workflow.getHandle(`${handle.workflowId}~task-1`);
  await poll(() => childHandle.query(peekQuery), (peek: SubagentPeek) => peek.state === 'waiting', 'the child waiting');
  // Enough messages to pass the history threshold: the session continues as new between two of them.
  for (let index = 0; index < 12 && (await handle.describe()).runId === firstRunId; index += 1) {
    await sendMessage(handle, `filler ${index}`);
    await poll(() => handle.query(peekQuery), (peek: SubagentPeek) => peek.state === 'waiting' && (peek.queuedMessages ?? 0) === 0, 'the session waiting');
  }
  await poll(() => handle.describe(), (description) => description.runId !== firstRunId, 'continue-as-new');
  // A waiting child is not checked (decision 0021); one running a turn is: the parent's message starts one.
  await sendMessage(handle, 'talk to it');
  await poll(async () => scripts.of('probe-child').length, (count) => count === 2, 'the child turn to start');
  const terminatedAt = Date.now();
  await childHandle.terminate('removed by an operator');
  const view = await poll(
    () => handle.query(transcriptQuery),
    (transcript: TranscriptView) => transcript.entries.some((entry) => entry.role === 'notice' && entry.text.includes('task-1 ended: failed')),
    'the settlement notice',
    75_000,
  );
  expect(Date.now() - terminatedAt).toBeLessThan(75_000);
  const notice = view.entries.find((entry) => entry.role === 'notice' && entry.text.includes('task-1 ended: failed'))?.text ?? '';
  expect(notice).toMatch(/terminated: removed by an operator/);
  const peek: SubagentPeek = await handle.query(peekQuery);
  expect(peek.tasks?.find((task) => task.taskId === 'task-1')?.state).toBe('failed');
  await handle.signal(cancelSignal, {});
  await handle.result();
}, 180_000);

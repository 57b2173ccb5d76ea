import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { childProbeIntervalMs } from '../../src/contracts/limits/workflow';
import { cancelSignal, peekQuery, sendMessageUpdate, transcriptQuery } from '../../src/contracts/subagent-messages';
import type { SubagentPeek } from '../../src/contracts/subagent-result';
import { sendUpdateAcrossRunChange } from '../../src/temporal/temporal-update-retry';
import { ConversationScripts } from '../support/conversation-scripts';
import { historyWithTimers, lastUserText } from '../support/workflow-history';
import { ownTemporalServer, type OwnServer } from '../support/own-temporal-server';
import { sessionInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * Idle costs nothing (SEMANTICS §6, decision 0021), on a server of its own (a dev server, or the self-hosted
 * binary on a cluster run) whose continue-as-new threshold is low: a session with three waiting continuable children continues as new (so it no longer
 * watches them), then waits. While it waits, no history event is added to the session or to any child —
 * over a window longer than the interval at which the old code probed waiting children — and every timer
 * still pending fires no earlier than 30 days after it was started (the idle timeouts are 31 days). Nothing
 * else can add an event before then (no activity is pending; waiting children send nothing), so the window
 * stands for 30 days of idling (idle-thirty-days.test.ts skips those 30 days for real, on the time-skipping test
 * server, for a session's first run). Afterwards the session answers a message and its children take send_message.
 */

let server: OwnServer;
const scripts = new ConversationScripts();
const dayMs = 24 * 60 * 60_000;
const idleTimeoutMs = 31 * dayMs;
const helpers = [1, 2, 3];

beforeAll(async () => {
  server = await ownTemporalServer({ label: 'idle', dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 60 } })();
}, 240_000);
afterAll(async () => {
  await server?.stop();
});

// The children's idle timeout is the worker's setting (the session's is in its input).
const stack = useWorkerStack(() => ({ label: 'idle', address: server.address, scripted: { scripted: { model: scripts.model } }, env: { ERRAND_CONTINUABLE_IDLE_TIMEOUT_SECS: String(idleTimeoutMs / 1000) } }));

async function poll<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}

function sendMessage(handle: WorkflowHandle, message: string): Promise<unknown> {
  const updateId = randomUUID();
  return sendUpdateAcrossRunChange(() => handle.executeUpdate(sendMessageUpdate, { args: [{ message }], updateId }));
}

test('a session with three waiting continuables adds no history while idle, continues as new, and still answers afterwards', async () => {
  const childMarkers = helpers.map((n) => scripts.add(`idle-helper-${n}`, (request) => ({ text: `helper ${n} heard: ${lastUserText(request.messages)}` })));
  const marker = scripts.add('idle-session', (request) => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') return { text: `tools done (${last.toolName})` };
    const text = lastUserText(request.messages);
    if (text.includes('Start three helpers')) {
      return { toolCalls: helpers.map((n) => ({ id: `delegate-${n}`, name: 'delegate', arguments: { instructions: `Stay around ${childMarkers[n - 1]}`, continuable: true, description: `helper ${n}` } })) };
    }
    if (text.includes('Tell the helpers')) {
      return { toolCalls: helpers.map((n) => ({ id: `send-${n}`, name: 'send_message', arguments: { task_id: `task-${n}`, message: `after the quiet, hello ${n}` } })) };
    }
    return { text: 'noted' };
  });
  const input = sessionInput({ workingDir: stack.workingDir, idleTimeoutMs });
  const session = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-idle-${randomUUID()}`, args: [input] });
  const children = helpers.map((n) => stack.client.workflow.getHandle(`${session.workflowId}~task-${n}`));
  await sendMessage(session, `Start three helpers ${marker}`);

  const allWaiting = async () => {
    const view = await session.query(transcriptQuery);
    const peeks = await Promise.all(children.map((child) => child.query(peekQuery).catch(() => undefined)));
    const notices = view.entries.filter((entry) => entry.role === 'notice').length;
    // The session's own records say so too (a record left "running" would be checked as if it ran a turn).
    const records = (await session.query(peekQuery)).tasks ?? [];
    return view.state === 'waiting' && view.queuedMessages === 0 && notices >= helpers.length && peeks.every((peek?: SubagentPeek) => peek?.state === 'waiting') &&
      records.length === helpers.length && records.every((record) => record.state === 'waiting');
  };
  await poll(allWaiting, Boolean, 'the helpers to answer and wait');
  // Talk until the server suggests continue-as-new and the session continues (from a wait or a wake).
  for (let message = 1; (await session.describe()).runId === session.firstExecutionRunId; message += 1) {
    expect(message, 'messages before the session continued as new').toBeLessThan(30);
    await sendMessage(session, `small talk ${message}`);
    await poll(async () => (await session.describe()).runId !== session.firstExecutionRunId || (await allWaiting()), Boolean, 'a reply');
  }
  await poll(allWaiting, Boolean, 'everything waiting in the second run');
  const handles = [session, ...children];
  // Settled: the views' one-second timer has fired (on a loaded machine its task may come late), so the
  // only open timers are the idle alarms, and no history grows across two looks a second apart.
  const settled = async () => {
    const first = await Promise.all(handles.map(historyWithTimers));
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_000));
    const second = await Promise.all(handles.map(historyWithTimers));
    const quiet = second.every((history, index) => history.events === first[index]?.events && history.openTimersMs.every((duration) => duration >= 30 * dayMs));
    return quiet ? second : undefined;
  };
  const before = await poll(settled, (value) => value !== undefined, 'the histories to settle after the last reply');
  if (before === undefined) throw new Error('unreachable: poll returns a settled value');
  // Longer than the interval at which waiting children used to be probed (each probe was ~11 events).
  await new Promise((resolveWait) => setTimeout(resolveWait, childProbeIntervalMs + 10_000));
  const after = await Promise.all(handles.map(historyWithTimers));
  // (On a failure, the events added while idle are shown.)
  expect(after.map((history, index) => history.types.slice(before[index]?.events ?? 0))).toEqual(handles.map(() => []));
  expect(after.map((history) => history.events)).toEqual(before.map((history) => history.events));
  for (const [index, history] of after.entries()) {
    // The idle alarms: nothing else is pending, and nothing fires within 30 days.
    expect(history.openTimersMs.length, `open timers of ${handles[index]?.workflowId}`).toBeGreaterThan(0);
    for (const duration of history.openTimersMs) expect(duration, `a timer of ${handles[index]?.workflowId}`).toBeGreaterThanOrEqual(30 * dayMs);
  }
  for (const handle of handles) {
    const description = await handle.describe();
    expect(description.status.name).toBe('RUNNING');
    expect(description.raw.pendingActivities ?? []).toEqual([]);
  }

  // After the quiet: the session answers, and its model reaches every child with send_message.
  await sendMessage(session, 'Tell the helpers');
  const view = await poll(
    () => session.query(transcriptQuery),
    (value) => helpers.every((n) => value.entries.some((entry) => entry.role === 'notice' && entry.text.includes(`helper ${n} heard: after the quiet, hello ${n}`))) && value.state === 'waiting',
    'the helpers to answer the messages sent after the quiet',
  );
  // The three send_message calls were answered as delivered (the reply after them may come after the
  // helpers' notices, so it is looked for in the model's requests, not the last assistant text).
  const sendResults = scripts.of('idle-session').flatMap((request) => request.messages).filter((message) => message.role === 'tool' && message.toolName === 'send_message');
  expect(new Set(sendResults.map((message) => (message.role === 'tool' ? message.toolCallId : ''))).size).toBe(helpers.length);
  expect(sendResults.filter((message) => message.role === 'tool' && message.isError === true)).toEqual([]);
  expect(view.entries.some((entry) => entry.role === 'assistant')).toBe(true);
  for (const n of helpers) expect(scripts.of(`idle-helper-${n}`).map((request) => lastUserText(request.messages))).toContain(`after the quiet, hello ${n}`);
  expect(scripts.model.rejectedCalls).toEqual([]);

  await session.signal(cancelSignal, { reason: 'test done' });
  expect((await session.result()).status).toBe('cancelled');
  for (const child of children) expect((await child.result()).status).toBe('cancelled');
}, 240_000);

test('a waiting child terminated after the parent continued as new is not polled for, and is settled when send_message cannot reach it', async () => {
  const child = scripts.add('idle-lost-child', [{ text: 'lost child ready' }]);
  const marker = scripts.add('idle-lost', (request) => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') return { text: `tools done (${last.toolName})` };
    const text = lastUserText(request.messages);
    if (text.includes('Start a helper')) return { toolCalls: [{ id: 'delegate-lost', name: 'delegate', arguments: { instructions: `Stay around ${child}`, continuable: true } }] };
    if (text.includes('Talk to the helper')) return { toolCalls: [{ id: 'send-lost', name: 'send_message', arguments: { task_id: 'task-1', message: 'are you there?' } }] };
    return { text: 'noted' };
  });
  const session = await stack.client.workflow.start('sessionWorkflow', { taskQueue: stack.taskQueue, workflowId: `errand-idle-lost-${randomUUID()}`, args: [sessionInput({ workingDir: stack.workingDir, idleTimeoutMs })] });
  const childHandle = stack.client.workflow.getHandle(`${session.workflowId}~task-1`);
  await sendMessage(session, `Start a helper ${marker}`);
  const settled = async () => {
    const view = await session.query(transcriptQuery);
    const records = (await session.query(peekQuery)).tasks ?? [];
    return view.state === 'waiting' && view.queuedMessages === 0 && records.length === 1 && records.every((record) => record.state === 'waiting');
  };
  await poll(settled, Boolean, 'the helper to answer and wait');
  for (let message = 1; (await session.describe()).runId === session.firstExecutionRunId; message += 1) {
    expect(message, 'messages before the session continued as new').toBeLessThan(30);
    await sendMessage(session, `small talk ${message}`);
    await poll(async () => (await session.describe()).runId !== session.firstExecutionRunId || (await settled()), Boolean, 'a reply');
  }
  await poll(settled, Boolean, 'the session waiting in its second run');
  await new Promise((resolveWait) => setTimeout(resolveWait, 3_000)); // the views' one-second timer has fired

  // Terminated while it waits: no signal reaches the parent, and the parent does not poll for it.
  const before = await historyWithTimers(session);
  await childHandle.terminate('an operator removed it');
  await new Promise((resolveWait) => setTimeout(resolveWait, childProbeIntervalMs + 5_000));
  expect(((await session.query(peekQuery)).tasks ?? []).map((record) => record.state)).toEqual(['waiting']);
  expect((await historyWithTimers(session)).types.slice(before.events)).toEqual([]);

  // The next use finds it: send_message is refused, the task is checked at once and settled as failed.
  await sendMessage(session, 'Talk to the helper');
  await poll(async () => ((await session.query(peekQuery)).tasks ?? []).map((record) => record.state), (states) => states[0] === 'failed', 'the lost helper to be settled');
  const sent = await poll(async () => scripts.of('idle-lost').flatMap((request) => request.messages).find((message) => message.role === 'tool' && message.toolName === 'send_message'), Boolean, 'the send_message result');
  expect(sent?.role === 'tool' && sent.isError).toBe(true);
  const view = await poll(() => session.query(transcriptQuery), (value) => value.entries.some((entry) => entry.role === 'notice' && entry.text.includes('task-1')) && value.state === 'waiting', 'the notice of the lost helper');
  expect(view.entries.filter((entry) => entry.role === 'notice').at(-1)?.text).toMatch(/TERMINATED|terminated/);
  await session.signal(cancelSignal, { reason: 'test done' });
  expect((await session.result()).status).toBe('cancelled');
}, 240_000);

import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { searchAttributeDefinitions } from '../../src/contracts/search-attributes';
import { peekQuery, sendMessageUpdate, transcriptQuery } from '../../src/contracts/subagent-messages';
import type { SessionResult } from '../../src/contracts/session';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import { temporalTestServerPath } from '../../src/dev/tool-paths';
import { createErrandWorker } from '../../src/worker/errand-worker';
import { ConversationScripts } from '../support/conversation-scripts';
import { until } from '../support/polling';
import { historyWithTimers, lastUserText } from '../support/workflow-history';
import { sessionInput, testDependencies, uniqueTaskQueue, workflowBundlePath } from '../support/temporal';

/**
 * Idle costs nothing, over 30 days of workflow time (SEMANTICS §6, decision 0021), on Temporal's
 * time-skipping test server (the Java SDK's in-memory server from Maven Central): the test skips the time
 * instead of waiting for it, so every timer due within those days really fires. A session with three waiting
 * continuable children idles for 30 days: no history event is added to the session or to any child, and all
 * four are still running; then the session answers and its model reaches every child with send_message; then,
 * left alone for longer than its idle timeout, the session ends as `idle` and its children with it.
 *
 * The test server never suggests a continue-as-new, so this covers a session's first run. The run after a
 * continue-as-new (the one that used to probe its waiting children every 30 s) is shown idle on a real server
 * in idle-session.test.ts, where only these same 31-day idle alarms are left open.
 */

let env: TestWorkflowEnvironment;
let stopWorker: () => Promise<void>;
let taskQueue: string;
let workingDir: string;
const scripts = new ConversationScripts();
const dayMs = 24 * 60 * 60_000;
const sessionIdleTimeoutMs = 31 * dayMs;
// The children outlive the session's idle timeout: the session's end is what ends them.
const childIdleTimeoutMs = 40 * dayMs;
const helpers = [1, 2, 3];

/** Temporal's indexed value types, as the operator service takes them. */
const indexedValueTypes = { Keyword: 2, Int: 3, Double: 4 } as const;

beforeAll(async () => {
  env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: temporalTestServerPath() } } });
  // errand's search attributes, as `errand dev` registers them on its dev server.
  await env.connection.operatorService.addSearchAttributes({
    namespace: 'default',
    searchAttributes: Object.fromEntries(searchAttributeDefinitions.map((definition) => [definition.name, indexedValueTypes[definition.type]])),
  });
  const { dependencies } = testDependencies({ scripted: { scripted: { model: scripts.model } }, env: { ERRAND_CONTINUABLE_IDLE_TIMEOUT_SECS: String(childIdleTimeoutMs / 1000) } });
  taskQueue = uniqueTaskQueue('thirty-days');
  const worker = await createErrandWorker({
    connection: env.nativeConnection,
    namespace: 'default',
    taskQueue,
    dependencies,
    workflows: { workflowBundle: { codePath: workflowBundlePath() } },
    tuning: { shutdownGraceTime: '2s' },
  });
  const running = worker.run();
  stopWorker = async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  };
  workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-thirty-days-work-')));
}, 240_000);

afterAll(async () => {
  await stopWorker?.();
  await env?.teardown();
});

function sendMessage(handle: WorkflowHandle, message: string): Promise<unknown> {
  return handle.executeUpdate(sendMessageUpdate, { args: [{ message }], updateId: randomUUID() });
}

test('a session with three waiting continuables adds no history over 30 idle days, then answers, and ends at its idle timeout with its children', async () => {
  const childMarkers = helpers.map((n) => scripts.add(`month-helper-${n}`, (request) => ({ text: `helper ${n} heard: ${lastUserText(request.messages)}` })));
  const marker = scripts.add('month-session', (request) => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') return { text: `tools done (${last.toolName})` };
    const text = lastUserText(request.messages);
    if (text.includes('Start three helpers')) {
      return { toolCalls: helpers.map((n) => ({ id: `delegate-${n}`, name: 'delegate', arguments: { instructions: `Stay around ${childMarkers[n - 1]}`, continuable: true, description: `helper ${n}` } })) };
    }
    if (text.includes('Tell the helpers')) {
      return { toolCalls: helpers.map((n) => ({ id: `send-${n}`, name: 'send_message', arguments: { task_id: `task-${n}`, message: `a month later, hello ${n}` } })) };
    }
    return { text: 'noted' };
  });
  const session = await env.client.workflow.start('sessionWorkflow', {
    taskQueue,
    workflowId: `errand-thirty-days-${randomUUID()}`,
    args: [sessionInput({ workingDir, idleTimeoutMs: sessionIdleTimeoutMs })],
  });
  const children = helpers.map((n) => env.client.workflow.getHandle(`${session.workflowId}~task-${n}`));
  const handles = [session, ...children];
  await sendMessage(session, `Start three helpers ${marker}`);

  const allWaiting = async () => {
    const view = await session.query(transcriptQuery);
    const peeks = await Promise.all(children.map((child) => child.query(peekQuery).catch(() => undefined)));
    const notices = view.entries.filter((entry) => entry.role === 'notice').length;
    const records = (await session.query(peekQuery)).tasks ?? [];
    return view.state === 'waiting' && view.queuedMessages === 0 && notices >= helpers.length && peeks.every((peek?: SubagentPeek) => peek?.state === 'waiting') &&
      records.length === helpers.length && records.every((record) => record.state === 'waiting');
  };
  await until(allWaiting, Boolean, 'the helpers to answer and wait');
  // Settled: the timers the last answers started (the views' one-second timer) have fired, so the only open
  // timers are the idle alarms, and no history grows across two looks a second apart (time passes at its real
  // pace here: the test server skips time only while the test sleeps or waits for a result).
  const settled = async () => {
    const first = await Promise.all(handles.map(historyWithTimers));
    await new Promise((resolveWait) => setTimeout(resolveWait, 1_000));
    const second = await Promise.all(handles.map(historyWithTimers));
    const quiet = second.every((history, index) => history.types.length === first[index]?.types.length && history.openTimersMs.every((duration) => duration > 30 * dayMs));
    return quiet ? second : undefined;
  };
  const before = await until(settled, (value) => value !== undefined, 'the histories to settle after the helpers answered');
  if (before === undefined) throw new Error('unreachable: poll returns a settled value');
  // Every one of them waits on its idle alarm, and on nothing that fires sooner.
  for (const [index, history] of before.entries()) expect(history.openTimersMs.length, `open timers of ${handles[index]?.workflowId}`).toBeGreaterThan(0);

  // Thirty days, skipped: every timer due in them fires.
  const startedAt = await env.currentTimeMs();
  await env.sleep(30 * dayMs);
  expect(await env.currentTimeMs()).toBeGreaterThanOrEqual(startedAt + 30 * dayMs);
  const after = await Promise.all(handles.map(historyWithTimers));
  // (On a failure, the events added while idle are shown.)
  expect(after.map((history, index) => history.types.slice(before[index]?.types.length ?? 0))).toEqual(handles.map(() => []));
  for (const handle of handles) expect((await handle.describe()).status.name).toBe('RUNNING');

  // A month later: the session answers, and its model reaches every child with send_message.
  await sendMessage(session, 'Tell the helpers');
  await until(
    () => session.query(transcriptQuery),
    (value) => helpers.every((n) => value.entries.some((entry) => entry.role === 'notice' && entry.text.includes(`helper ${n} heard: a month later, hello ${n}`))) && value.state === 'waiting',
    'the helpers to answer the messages sent a month later',
  );
  const sendResults = scripts.of('month-session').flatMap((request) => request.messages).filter((message) => message.role === 'tool' && message.toolName === 'send_message');
  expect(new Set(sendResults.map((message) => (message.role === 'tool' ? message.toolCallId : ''))).size).toBe(helpers.length);
  expect(sendResults.filter((message) => message.role === 'tool' && message.isError === true)).toEqual([]);
  for (const n of helpers) expect(scripts.of(`month-helper-${n}`).map((request) => lastUserText(request.messages))).toContain(`a month later, hello ${n}`);

  // Left alone past its idle timeout (31 days from the last message), the session ends as idle and cancels
  // its children, which had 40 days of their own left. Waiting for a result lets the server skip the time.
  const result = (await session.result()) as SessionResult;
  expect(result.status).toBe('idle');
  expect(result.diagnostic).toContain('session idle timeout');
  for (const child of children) expect(((await child.result()) as SubagentResult).status).toBe('cancelled');
  expect(await env.currentTimeMs()).toBeGreaterThanOrEqual(startedAt + 30 * dayMs + sessionIdleTimeoutMs);
  expect(scripts.model.rejectedCalls).toEqual([]);
}, 240_000);

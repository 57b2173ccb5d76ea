import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Client, Connection, WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, NativeConnection, type Worker } from '@temporalio/worker';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { cancelSignal, peekQuery, sendMessageUpdate, transcriptQuery } from '../../src/contracts/subagent-messages';
import { temporalCliPath } from '../../src/dev/tool-paths';
import { sendUpdateAcrossRunChange } from '../../src/temporal/temporal-update-retry';
import { createErrandWorker } from '../../src/worker/errand-worker';
import type { WorkerDependencies } from '../../src/worker/worker-dependencies';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { workflowBundleOptions } from '../../src/temporal/workflow-bundle-options';
import { buildQuery, type BuildAnswer } from '../fixtures/workflows-build-b';
import { ConversationScripts } from '../support/conversation-scripts';
import { lastUserText } from '../support/workflow-history';
import { sessionInput, temporalAddress, temporalNamespace, testClient, testDependencies, uniqueTaskQueue, workflowBundlePath } from '../support/temporal';

/**
 * Deploys break nothing (SEMANTICS §6, decision 0030): Worker Deployment Versioning with two builds of the
 * workflows on one task queue. Build A is the current code (the run's bundle); build B is the current code
 * with a small change made as a release must make it (test/fixtures/workflows-build-b: a `patched()` marker
 * and a query build A does not have). On build A a session starts a continuable helper, which answers and
 * waits, and a background subagent, whose model call is held. Build B becomes the current version (through
 * the Temporal CLI, as docs/deploy.md says). Then the held call returns: the subagent finishes on build A,
 * where it is pinned; the session and the helper move to build B at their next workflow task (replaying
 * their build-A histories with build B's code) and go on talking there. No workflow task fails.
 *
 * Only the address and the namespace come from the run (test/support/temporal.ts), so the file runs on a
 * cluster as on the dev server.
 */

const run = promisify(execFile);
const scripts = new ConversationScripts();
const deploymentName = `errand-test-${randomUUID().slice(0, 8)}`;
let client: Client;
let connection: Connection;
let taskQueue: string;
let workingDir: string;
let dependencies: WorkerDependencies;
const workers: Array<{ worker: Worker; running: Promise<void>; connection: NativeConnection }> = [];
let releaseHeldCall: () => void = () => undefined;
const heldCall = new Promise<void>((resolveHeld) => {
  releaseHeldCall = resolveHeld;
});

beforeAll(async () => {
  ({ client, connection } = await testClient());
  ({ dependencies } = testDependencies({ scripted: { scripted: { model: scripts.model } } }));
  taskQueue = uniqueTaskQueue('versioning');
  workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-versioning-work-')));
  writeFileSync(join(workingDir, 'notes.txt'), 'versioned\n');
}, 60_000);

afterAll(async () => {
  releaseHeldCall();
  for (const { worker } of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  for (const { running, connection: workerConnection } of workers) {
    await running.catch(() => undefined);
    await workerConnection.close();
  }
  await connection?.close();
});

/** Starts a worker of `buildId` from `bundle` in this process. */
async function startBuild(buildId: string, bundle: { codePath: string } | { code: string }): Promise<void> {
  const workerConnection = await NativeConnection.connect({ address: temporalAddress() });
  const worker = await createErrandWorker({
    connection: workerConnection,
    namespace: temporalNamespace(),
    taskQueue,
    dependencies,
    deployment: { deploymentName, buildId },
    workflows: { workflowBundle: bundle },
    tuning: { shutdownGraceTime: '2s', identity: `versioning-test-build-${buildId}` },
  });
  workers.push({ worker, running: worker.run(), connection: workerConnection });
}

/** `temporal worker deployment set-current-version`, as an operator runs it (retried until the version's worker has polled). */
async function setCurrentVersion(buildId: string): Promise<void> {
  const args = ['worker', 'deployment', 'set-current-version', '--deployment-name', deploymentName, '--build-id', buildId, '--yes', '--address', temporalAddress(), '--namespace', temporalNamespace()];
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await run(temporalCliPath(), args);
      break;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolveWait) => setTimeout(resolveWait, 500));
    }
  }
  // The new routing reaches the task queues after the command returns: until it has, a task may still go to
  // the old build (describe's routingConfigUpdateState, 2 = COMPLETED).
  await poll(async () => {
    const described = await connection.workflowService.describeWorkerDeployment({ namespace: temporalNamespace(), deploymentName });
    const info = described.workerDeploymentInfo;
    return info?.routingConfig?.currentDeploymentVersion?.buildId === buildId && Number(info.routingConfigUpdateState ?? 0) === 2;
  }, Boolean, `build ${buildId}'s routing to reach the task queues`);
}

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

/** A run's workflow tasks: the build each completed on, by event id, and the causes of failed ones. */
async function tasksOf(handle: WorkflowHandle): Promise<{ lastEventId: number; completed: Array<{ eventId: number; buildId: string }>; failures: string[] }> {
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  const completed = events.flatMap((event) => {
    const attributes = event.workflowTaskCompletedEventAttributes;
    return attributes ? [{ eventId: Number(event.eventId), buildId: attributes.deploymentVersion?.buildId ?? '(unversioned)' }] : [];
  });
  const failures = events.flatMap((event) => {
    const attributes = event.workflowTaskFailedEventAttributes;
    return attributes ? [`${temporal.api.enums.v1.WorkflowTaskFailedCause[attributes.cause ?? 0]}: ${attributes.failure?.message ?? ''}`] : [];
  });
  return { lastEventId: Number(events[events.length - 1]?.eventId ?? 0), completed, failures };
}

/** Waits until a workflow has no workflow task pending and its history stays as it is for a second. */
async function quiet(handle: WorkflowHandle): Promise<void> {
  let last = -1;
  await poll(async () => {
    const description = await handle.describe();
    const length = description.historyLength;
    const settled = description.raw.pendingWorkflowTask == null && length === last;
    last = length;
    if (!settled) await new Promise((resolveWait) => setTimeout(resolveWait, 1_000));
    return settled;
  }, Boolean, `${handle.workflowId} to have no workflow task pending`);
}

/** The versioning behaviour and version Temporal holds for a workflow. */
async function versioningOf(handle: WorkflowHandle): Promise<{ behavior: string; buildId: string }> {
  const info = (await handle.describe()).raw.workflowExecutionInfo?.versioningInfo;
  return { behavior: temporal.api.enums.v1.VersioningBehavior[info?.behavior ?? 0] ?? 'unknown', buildId: info?.deploymentVersion?.buildId ?? '' };
}

test('a build B made current takes over the session and its continuable; a running subagent finishes on build A; nothing fails to replay', async () => {
  // Build B: the changed workflows, bundled as the production build bundles (the same sandbox setup).
  const buildB = await bundleWorkflowCode({
    workflowsPath: resolve(__dirname, '..', 'fixtures', 'workflows-build-b', 'index.ts'),
    preloadModules: workflowBundleOptions().preloadModules,
    workflowInterceptorModules: workflowBundleOptions().workflowInterceptorModules,
    logger: { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: (message: string) => process.stderr.write(`${message}\n`) },
  });
  await startBuild('A', { codePath: workflowBundlePath() });
  await setCurrentVersion('A');

  const helperMarker = scripts.add('versioning-helper', (request) => ({ text: `helper heard: ${lastUserText(request.messages).slice(0, 60)}` }));
  // The background subagent's first model call is held until build B is current.
  const workerMarker = scripts.add('versioning-worker', async (_request, call) => {
    if (call === 0) {
      await heldCall;
      return { toolCalls: [{ id: 'look', name: 'developer__read_file', arguments: { path: 'notes.txt' } }] };
    }
    return { text: 'worker done: the notes say versioned' };
  });
  const sessionMarker = scripts.add('versioning-session', (request): ScriptStep => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') return { text: `tools done (${last.toolName})` };
    const text = lastUserText(request.messages);
    if (text.includes('Start a helper and a worker')) {
      return {
        toolCalls: [
          { id: 'delegate-helper', name: 'delegate', arguments: { instructions: `Stay around ${helperMarker}`, continuable: true, description: 'helper' } },
          { id: 'delegate-worker', name: 'delegate', arguments: { instructions: `Read the notes ${workerMarker}`, async: true, description: 'worker' } },
        ],
      };
    }
    if (text.includes('Tell the helper')) return { toolCalls: [{ id: 'send-helper', name: 'send_message', arguments: { task_id: 'task-1', message: 'hello from build B' } }] };
    return { text: 'noted' };
  });

  const session = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId: `errand-versioning-${randomUUID()}`, args: [sessionInput({ workingDir })] });
  const helper = client.workflow.getHandle(`${session.workflowId}~task-1`);
  const worker = client.workflow.getHandle(`${session.workflowId}~task-2`);
  await sendMessage(session, `Start a helper and a worker ${sessionMarker}`);
  // On build A: the helper answered and waits, the worker's model call is running, the session waits.
  await poll(async () => {
    const view = await session.query(transcriptQuery);
    const helperPeek = await helper.query(peekQuery).catch(() => undefined);
    return view.state === 'waiting' && view.entries.some((entry) => entry.role === 'notice') && helperPeek?.state === 'waiting' && scripts.of('versioning-worker').length === 1;
  }, Boolean, 'the helper to wait and the worker to call its model');
  expect(await versioningOf(session)).toEqual({ behavior: 'VERSIONING_BEHAVIOR_AUTO_UPGRADE', buildId: 'A' });
  expect(await versioningOf(helper)).toEqual({ behavior: 'VERSIONING_BEHAVIOR_AUTO_UPGRADE', buildId: 'A' });
  expect(await versioningOf(worker)).toEqual({ behavior: 'VERSIONING_BEHAVIOR_PINNED', buildId: 'A' });

  // Quiet on build A first: a workflow task dispatched to A before the switch completes on A after it.
  for (const handle of [session, helper]) await quiet(handle);
  // Build B starts polling and becomes current; nothing has happened since (the worker's call is held).
  await startBuild('B', { code: buildB.code });
  await setCurrentVersion('B');
  const before = { session: await tasksOf(session), helper: await tasksOf(helper), worker: await tasksOf(worker) };
  // The drain query of docs/deploy.md finds what still runs on build A (visibility may lag: polled).
  const onBuildA = `ExecutionStatus="Running" AND TemporalWorkerDeploymentVersion="${deploymentName}:A" AND WorkflowId STARTS_WITH "${session.workflowId}"`;
  await poll(async () => (await client.workflow.count(onBuildA)).count, (count) => count === 3, 'the three workflows listed on build A');
  releaseHeldCall();

  // The worker finishes where it started, on build A.
  const workerResult = (await worker.result()) as { status: string; output: string };
  expect(workerResult.status).toBe('completed');
  expect(workerResult.output).toBe('worker done: the notes say versioned');
  // The session hears of it, then passes a message on to the helper, which answers: both on build B.
  await poll(async () => (await session.query(transcriptQuery)).entries.filter((entry) => entry.role === 'notice').length >= 2 && (await session.query(transcriptQuery)).state === 'waiting', Boolean, 'the worker notice turn');
  await sendMessage(session, 'Tell the helper something');
  await poll(async () => scripts.of('versioning-helper').some((request) => lastUserText(request.messages).includes('hello from build B')) && (await session.query(transcriptQuery)).state === 'waiting' && (await helper.query(peekQuery)).state === 'waiting', Boolean, 'the helper to answer on build B');
  await poll(async () => (await session.query(transcriptQuery)).entries.filter((entry) => entry.role === 'notice').length >= 3, Boolean, 'the helper notice turn');

  const after = { session: await tasksOf(session), helper: await tasksOf(helper), worker: await tasksOf(worker) };
  for (const [name, tasks] of Object.entries(after)) expect(tasks.failures, `${name}: failed workflow tasks`).toEqual([]);
  const builds = (tasks: Awaited<ReturnType<typeof tasksOf>>, from: number, to = Number.MAX_SAFE_INTEGER) => [...new Set(tasks.completed.filter((task) => task.eventId > from && task.eventId <= to).map((task) => task.buildId))];
  // Before the switch everything ran on A; after it the worker still did (pinned), the session and the helper on B.
  for (const [name, tasks] of Object.entries(before)) expect(builds(tasks, 0), `${name} before the switch`).toEqual(['A']);
  expect(builds(after.worker, before.worker.lastEventId)).toEqual(['A']);
  expect(builds(after.session, before.session.lastEventId)).toEqual(['B']);
  expect(builds(after.helper, before.helper.lastEventId)).toEqual(['B']);
  expect(await versioningOf(session)).toEqual({ behavior: 'VERSIONING_BEHAVIOR_AUTO_UPGRADE', buildId: 'B' });
  expect(await versioningOf(helper)).toEqual({ behavior: 'VERSIONING_BEHAVIOR_AUTO_UPGRADE', buildId: 'B' });
  // Build B's code answers for them: runs that started on A and replayed A's history without B's patch.
  const upgraded: BuildAnswer = { build: 'B', startedOnB: false };
  expect(await session.query(buildQuery)).toEqual(upgraded);
  expect(await helper.query(buildQuery)).toEqual(upgraded);
  // A session started now starts on build B and takes its patch.
  const fresh = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId: `errand-versioning-fresh-${randomUUID()}`, args: [sessionInput({ workingDir })] });
  await poll(async () => (await tasksOf(fresh)).completed.length > 0, Boolean, 'the new session to start');
  expect(await fresh.query(buildQuery)).toEqual({ build: 'B', startedOnB: true });
  expect(await versioningOf(fresh)).toEqual({ behavior: 'VERSIONING_BEHAVIOR_AUTO_UPGRADE', buildId: 'B' });
  expect(scripts.model.rejectedCalls).toEqual([]);
  // Build A is drained of them: the worker ended there, the others moved on.
  await poll(async () => (await client.workflow.count(onBuildA)).count, (count) => count === 0, 'build A to have nothing running');

  await fresh.signal(cancelSignal, { reason: 'test done' });
  await session.signal(cancelSignal, { reason: 'test done' });
  await session.result();
  await fresh.result();
  await poll(async () => (await helper.describe()).status.name, (status) => status !== 'RUNNING', 'the helper to end with its session');
}, 240_000);

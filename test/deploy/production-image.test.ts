import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JsonValue } from '../../src/contracts/json';
import type { SubagentResult } from '../../src/contracts/subagent-result';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { subagentInput, temporalAddress, testClient, uniqueTaskQueue, workflowBundlePath } from '../support/temporal';

/**
 * What the worker image does, without Docker (none runs on these machines): the Dockerfile's build
 * (`tsc` + the prebuilt workflow bundle, which is this run's), its production-only install (`npm ci --omit=dev`) into a fresh
 * folder holding only package.json, package-lock.json and dist/, and its start command (`node
 * dist/worker/main.js`) with configuration from the environment only. Then:
 * - one worker runs a delegation from the prebuilt bundle, against the scripted OpenAI-compatible server;
 * - two worker processes share one task queue and one data/working volume (ADR 0003): 40 delegations
 *   spread over both, one worker is SIGKILLed mid-way, all 40 complete, and no finished model turn is
 *   requested twice.
 */

const run = promisify(execFile);
const root = resolve(__dirname, '..', '..');
const artifacts = join(root, 'test-artifacts', 'deploy');
let image: string;
let shared: string;
let client: Client;
let connection: Connection;
let server: ScriptedOpenAIServer;
const started: ChildProcess[] = [];
const timings: Record<string, number> = {};

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const begin = Date.now();
  try {
    return await work();
  } finally {
    timings[label] = Date.now() - begin;
  }
}

/** A worker process started like the image starts it. */
interface WorkerProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  exited: Promise<void>;
}

async function startWorker(name: string, taskQueue: string): Promise<WorkerProcess> {
  mkdirSync(artifacts, { recursive: true });
  const log = createWriteStream(join(artifacts, `worker-${name}.log`));
  const env: NodeJS.ProcessEnv = {
    // The container's environment: nothing from this test process but PATH.
    PATH: process.env.PATH,
    HOME: join(shared, 'home'),
    NODE_ENV: 'production',
    TEMPORAL_ADDRESS: temporalAddress(),
    TEMPORAL_NAMESPACE: 'default',
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: join(shared, 'state'),
    ERRAND_WORKING_DIR: join(shared, 'work'),
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'], headers: { 'x-errand-worker': name } }]),
  };
  const child = spawn(process.execPath, ['dist/worker/main.js'], { cwd: image, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  if (child.pid === undefined) throw new Error(`worker ${name} did not start`);
  const pid = child.pid;
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  let output = '';
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`worker ${name} did not report polling within 60 s; see ${join(artifacts, `worker-${name}.log`)}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('errand worker: polling task queue')) {
        clearTimeout(timer);
        ready();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`worker ${name} exited with ${code} before polling:\n${output}`));
    });
  });
  // Bundling at start would log webpack's progress: the prebuilt bundle must have been used.
  expect(output).not.toMatch(/webpack/i);
  return { name, child, pid, exited };
}

async function stopWorker(worker: WorkerProcess): Promise<void> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
  process.kill(worker.pid, 'SIGTERM');
  const timer = setTimeout(() => worker.child.exitCode === null && process.kill(worker.pid, 'SIGKILL'), 15_000);
  await worker.exited;
  clearTimeout(timer);
}

/** The delegation marker in a chat-completions request body (`[job:<id>]` in the task prompt). */
function jobOf(body: JsonValue): string | undefined {
  return /\[job:([a-z0-9-]+)\]/.exec(JSON.stringify(body))?.[1];
}

function messagesOf(body: JsonValue): { role: string }[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body) || !Array.isArray(body.messages)) return [];
  return body.messages as { role: string }[];
}

/**
 * Stateless answers, so a retried request gets the same answer: first turn lists the working directory
 * (a tool touching the shared volume), the turn after the tool result answers.
 */
function answer(record: RecordedRequest): ScriptStep {
  const messages = messagesOf(record.body);
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') return { text: `done ${jobOf(record.body) ?? '?'}` };
  return { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] };
}

beforeAll(async () => {
  const started = Date.now();
  // The image folder holds a production install (~300 MB in some 30,000 files): in memory where the
  // machine has a tmpfs, writing and removing it takes seconds instead of half a minute each.
  image = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'errand-image-'));
  shared = mkdtempSync(join(tmpdir(), 'errand-shared-volume-'));
  mkdirSync(join(shared, 'work'), { recursive: true });
  writeFileSync(join(shared, 'work', 'README.md'), '# shared working directory\n');
  copyFileSync(join(root, 'package.json'), join(image, 'package.json'));
  copyFileSync(join(root, 'package-lock.json'), join(image, 'package-lock.json'));
  const bin = (name: string) => join(root, 'node_modules', '.bin', name);
  // The Dockerfile's two stages, in parallel: `npm run build` (written into the image folder rather than
  // the repository's dist/, which a developer's worker would otherwise pick up as a stale prebuilt bundle)
  // and the production-only install. Of the build, tsc runs here; the workflow bundle is the one this test
  // run's global setup made with the same function as `scripts/bundle-workflows.ts` (a second webpack run
  // of the same code would only cost time).
  await Promise.all([
    timed('tsc', () => run(bin('tsc'), ['-p', 'tsconfig.build.json', '--outDir', join(image, 'dist')], { cwd: root, maxBuffer: 16 * 1024 * 1024 })),
    timed('npm ci --omit=dev', () => run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: image, maxBuffer: 16 * 1024 * 1024 })),
  ]);
  mkdirSync(join(image, 'dist'), { recursive: true });
  copyFileSync(workflowBundlePath(), join(image, 'dist', 'workflow-bundle.js'));
  timings.total = Date.now() - started;
  mkdirSync(artifacts, { recursive: true });
  writeFileSync(join(artifacts, 'production-install-timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
  process.stdout.write(`production image: ${Object.entries(timings).map(([label, ms]) => `${label} ${(ms / 1000).toFixed(1)} s`).join(', ')}\n`);
  ({ client, connection } = await testClient());
  server = await startScriptedOpenAIServer();
}, 600_000);

afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  await server?.close();
  await connection?.close();
  if (image) rmSync(image, { recursive: true, force: true });
  if (shared) rmSync(shared, { recursive: true, force: true });
});

describe('the worker image, without Docker', () => {
  test('the install holds production dependencies only, and dist/ holds the worker and the prebuilt bundle', () => {
    expect(existsSync(join(image, 'dist', 'worker', 'main.js'))).toBe(true);
    expect(existsSync(join(image, 'dist', 'workflow-bundle.js'))).toBe(true);
    expect(existsSync(join(image, 'node_modules', '@temporalio', 'worker'))).toBe(true);
    for (const dev of ['vitest', 'typescript', 'aws-cdk-lib', '@temporalio/testing', 'eslint']) expect(existsSync(join(image, 'node_modules', dev)), dev).toBe(false);
  });

  test('the start command runs a delegation from the prebuilt bundle', async () => {
    server.reset();
    server.setResponder((record) => answer(record));
    const taskQueue = uniqueTaskQueue('image');
    const worker = await startWorker('single', taskQueue);
    try {
      const result: SubagentResult = await client.workflow.execute('subagentWorkflow', {
        taskQueue,
        workflowId: `errand-image-${Date.now()}`,
        args: [subagentInput({ prompt: 'Look around [job:single]', workingDir: join(shared, 'work'), route: { provider: 'http', model: 'gpt-test' } })],
      });
      expect(result.status).toBe('completed');
      expect(result.output).toBe('done single');
      expect(result.toolCalls).toBe(1);
      expect(server.requests).toHaveLength(2);
      expect(server.requests.every((request) => request.headers['x-errand-worker'] === 'single')).toBe(true);
      // The tool ran in the shared working directory.
      expect(JSON.stringify(server.requests[1]?.body)).toContain('README.md');
    } finally {
      await stopWorker(worker);
    }
  }, 120_000);

  test('two workers share 40 delegations; one is SIGKILLed mid-way; all complete, no finished turn is requested twice', async () => {
    server.reset();
    let gateOpen = true;
    let openGate: () => void = () => undefined;
    let gate = Promise.resolve();
    const held = new Set<RecordedRequest>();
    server.setResponder(async (record) => {
      if (!gateOpen) {
        // The live record (not the copy the responder gets) is what the log shows.
        const live = server.requests[record.callIndex];
        if (live) held.add(live);
        await gate;
      }
      // Keep calls in flight long enough that a kill finds some.
      await new Promise((done) => setTimeout(done, 100));
      return answer(record);
    });
    const taskQueue = uniqueTaskQueue('scale-out');
    const [a, b] = await Promise.all([startWorker('a', taskQueue), startWorker('b', taskQueue)]);
    if (!a || !b) throw new Error('workers did not start');
    try {
      const stamp = Date.now();
      const ids = Array.from({ length: 40 }, (_, index) => `errand-scale-${stamp}-${String(index).padStart(2, '0')}`);
      const handles = await Promise.all(
        ids.map((workflowId, index) =>
          client.workflow.start('subagentWorkflow', {
            taskQueue,
            workflowId,
            args: [subagentInput({ prompt: `List the files [job:j${index}]`, workingDir: join(shared, 'work'), route: { provider: 'http', model: 'gpt-test' } })],
          }),
        ),
      );
      const finished = (request: RecordedRequest) => request.finishedAt !== undefined && request.status === 200 && !request.aborted;
      // Mid-way: 30 of the 80 model turns are done.
      await server.waitFor((requests) => requests.filter(finished).length >= 30, 60_000, '30 finished model turns');
      // Hold every new call, let the ones already answered settle (stored, activity completed), then kill
      // worker a while it has calls in flight: no answer it received can be lost, so none may be re-requested.
      gate = new Promise<void>((done) => (openGate = done));
      gateOpen = false;
      await server.waitFor((requests) => requests.every((request) => request.finishedAt !== undefined || held.has(request)), 20_000, 'answered calls to finish');
      await new Promise((done) => setTimeout(done, 1_500));
      await server.waitFor((requests) => requests.some((request) => held.has(request) && request.headers['x-errand-worker'] === 'a'), 20_000, 'worker a to have a call in flight');
      const beforeKill = { a: server.requests.filter((r) => r.headers['x-errand-worker'] === 'a').length, b: server.requests.filter((r) => r.headers['x-errand-worker'] === 'b').length };
      process.kill(a.pid, 'SIGKILL');
      await a.exited;
      gateOpen = true;
      openGate();

      const results: SubagentResult[] = await Promise.all(handles.map((handle) => handle.result()));
      expect(results.map((result) => result.status)).toEqual(ids.map(() => 'completed'));
      expect(results.map((result) => result.output)).toEqual(ids.map((_, index) => `done j${index}`));
      expect(results.every((result) => result.turns === 2)).toBe(true);

      // Both workers did work before the kill; worker b finished what a left.
      expect(beforeKill.a).toBeGreaterThan(0);
      expect(beforeKill.b).toBeGreaterThan(0);
      const aborted = server.requests.filter((request) => request.aborted);
      expect(aborted.length).toBeGreaterThan(0);
      expect(aborted.every((request) => request.headers['x-errand-worker'] === 'a')).toBe(true);

      // No finished model turn was requested twice: one finished request per (delegation, turn).
      const finishedTurns = new Map<string, number>();
      for (const request of server.requests.filter(finished)) {
        const turn = `${jobOf(request.body)}#${messagesOf(request.body).length}`;
        finishedTurns.set(turn, (finishedTurns.get(turn) ?? 0) + 1);
      }
      expect([...finishedTurns.values()].filter((count) => count > 1)).toEqual([]);
      expect(finishedTurns.size).toBe(80);
      expect(server.exhaustedRequests).toEqual([]);

      // The histories agree: activities were started by both worker processes (identity `<pid>@<host>`).
      const identities = new Set<string>();
      for (const handle of handles) {
        const history = await handle.fetchHistory();
        for (const event of history.events ?? []) {
          const identity = event.activityTaskStartedEventAttributes?.identity;
          if (identity) identities.add(identity.split('@')[0] ?? identity);
        }
      }
      expect(identities).toContain(String(a.pid));
      expect(identities).toContain(String(b.pid));
      // Each delegation ran once: one run, no continue-as-new or reset.
      const runs = await Promise.all(handles.map(async (handle) => (await handle.describe()).runId));
      expect(new Set(runs).size).toBe(40);
    } finally {
      gateOpen = true;
      openGate();
      await stopWorker(b);
      await stopWorker(a);
    }
  }, 240_000);
});

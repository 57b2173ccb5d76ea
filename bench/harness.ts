import { execFile, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { loadConfig, type ErrandConfig } from '../src/settings/config';
import type { SubagentInput } from '../src/contracts/subagent';
import { startDevServer, type DevServer } from '../src/dev/temporal-dev-server';
import type { ModelRequest } from '../src/contracts/model';
import { createScriptedModel, type ScriptedModel } from '../src/llm/scripted-model';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../test/support/scripted-openai-server';
import type { ProviderConfig } from '../src/llm/provider-config';
import { createErrandWorker } from '../src/worker/errand-worker';
import { createWorkerDependencies, type WorkerDependencies } from '../src/worker/worker-dependencies';
import { workflowBundleOptions } from '../src/temporal/workflow-bundle-options';
import { createBaselineActivities } from './baseline-activities';
import { onCleanup, trackChildPid, untrackChildPid } from './cleanup';
import { benchStep, openAIMessages } from './scripted-answers';

/**
 * The bench's stack: one dev server (SQLite file in a temp folder, headless, errand's dev-server settings), workflow bundles built once, a Temporal
 * client, the in-process scripted model, a scripted OpenAI-compatible HTTP server, and helpers to start
 * in-process workers and worker child processes. Everything registers its own cleanup.
 */

/** The project root (bench/ is one level down). */
export const projectRoot = resolve(__dirname, '..');

/** Provider names the bench configures. */
export const benchProviders = {
  /** In-process scripted model: answers instantly, no HTTP. */
  inProcess: 'scripted',
  /** The scripted OpenAI-compatible HTTP server, through the real adapter. */
  http: 'http',
} as const;
/** Model id of both bench providers. */
export const benchModel = 'bench-model';

/**
 * Where the temp folder (SQLite file, data directories) goes: `BENCH_TEMP_DIR`, else the OS temp folder —
 * on disk, as `errand dev` keeps its state, because that is what the figures are for. The dev server writes
 * its SQLite file with WAL and synchronous=normal (src/dev/temporal-dev-server.ts), which on this kind of
 * machine costs the same as tmpfs (bench/results.md, floor); errand's own blob writes pay the disk's fsync.
 * `BENCH_TEMP_DIR=/dev/shm` measures without the disk.
 */
export function benchTempRoot(): string {
  return process.env.BENCH_TEMP_DIR ?? tmpdir();
}

/** The running stack. */
export interface Bench {
  /** Scratch folder of this run (logs, bundles), under bench/.work. */
  workDir: string;
  /** Temp folder for the SQLite file and data directories; removed at the end. */
  tempDir: string;
  server: DevServer;
  client: Client;
  errandBundle: string;
  baselineBundle: string;
  /** Working directory the subagents' tools run in (a few small files). */
  workingDir: string;
  model: ScriptedModel;
  /** Called on every in-process model call (figures that need to see requests set it). */
  onModelCall: ((request: ModelRequest) => void) | undefined;
  http: ScriptedOpenAIServer;
  providers: ProviderConfig[];
  config: ErrandConfig;
  dependencies: WorkerDependencies;
}

const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => process.stderr.write(`bundle: ${message}\n`),
  error: (message: string) => process.stderr.write(`bundle: ${message}\n`),
};

async function bundle(options: { workflowsPath: string; preloadModules?: string[] }, target: string): Promise<string> {
  const { code } = await bundleWorkflowCode({ ...options, logger: quietLogger });
  writeFileSync(target, code);
  return target;
}

/** Starts the stack. */
export async function startBench(): Promise<Bench> {
  // Only warnings from the SDK runtime: the bench prints its own progress.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const workDir = join(projectRoot, 'bench', '.work', `run-${stamp}`);
  mkdirSync(workDir, { recursive: true });
  const tempDir = mkdtempSync(join(benchTempRoot(), 'errand-bench-'));
  onCleanup('temp folder', async () => rmSync(tempDir, { recursive: true, force: true }));
  const workingDir = join(tempDir, 'work');
  mkdirSync(join(workingDir, 'docs'), { recursive: true });
  writeFileSync(join(workingDir, 'notes.txt'), 'bench notes\n');
  writeFileSync(join(workingDir, 'docs', 'readme.md'), '# docs\n');

  // Bundling takes seconds on 2 cores; do it while the server starts.
  const bundles = Promise.all([
    bundle(workflowBundleOptions(), join(workDir, 'errand-workflows.js')),
    bundle({ workflowsPath: join(projectRoot, 'bench', 'baseline-workflows.ts') }, join(workDir, 'baseline-workflows.js')),
  ]);
  const server = await startDevServer({ dbFile: join(tempDir, 'temporal.sqlite'), logFile: join(workDir, 'temporal-dev-server.log'), headless: true });
  onCleanup('dev server', () => server.stop());
  trackChildPid(server.pid);
  const [errandBundle, baselineBundle] = await bundles;

  const connection = await Connection.connect({ address: server.address });
  onCleanup('client connection', () => connection.close());
  const client = new Client({ connection });

  const http = await startScriptedOpenAIServer();
  onCleanup('scripted HTTP server', () => http.close());
  // Answers by marker, like the in-process model; figures that need another behaviour set their own responder.
  http.setResponder((record) => benchStep(openAIMessages(record.body)));

  const bench: Partial<Bench> & { onModelCall: Bench['onModelCall'] } = { onModelCall: undefined };
  const model = createScriptedModel((request) => {
    bench.onModelCall?.(request);
    return benchStep(request.messages);
  }, { name: 'bench model', record: false });

  const providers: ProviderConfig[] = [
    { name: benchProviders.inProcess, kind: 'scripted', models: [benchModel] },
    { name: benchProviders.http, kind: 'openai-compatible', baseUrl: http.url, models: [benchModel] },
  ];
  const dataDir = join(tempDir, 'data-in-process');
  const config = loadConfig({ ERRAND_DATA_DIR: dataDir, ERRAND_PROVIDERS: JSON.stringify(providers), ERRAND_WORKING_DIR: workingDir }, projectRoot);
  const homeDirectory = join(tempDir, 'home');
  mkdirSync(homeDirectory, { recursive: true });
  const dependencies = createWorkerDependencies(config, { scripted: { [benchProviders.inProcess]: model }, env: {}, homeDirectory });

  return Object.assign(bench, { workDir, tempDir, server, client, errandBundle, baselineBundle, workingDir, model, http, providers, config, dependencies });
}

/** A unique id with a readable prefix. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** A subagent input with the configuration's defaults (activity timeouts included). */
export function benchSubagentInput(bench: Bench, prompt: string, overrides: Partial<SubagentInput> = {}): SubagentInput {
  return {
    label: 'bench delegation',
    prompt,
    system: {},
    route: { provider: benchProviders.inProcess, model: benchModel },
    toolsets: ['developer'],
    maxTurns: 1_000,
    workingDir: bench.workingDir,
    depth: 1,
    maxDepth: 1,
    activity: bench.config.subagent.activity,
    ...overrides,
  };
}

/** An in-process worker; `stop()` shuts it down. */
export interface InProcessWorker {
  worker: Worker;
  stop(): Promise<void>;
}

async function runInProcess(name: string, create: (connection: NativeConnection) => Promise<Worker>, address: string): Promise<InProcessWorker> {
  const connection = await NativeConnection.connect({ address });
  const worker = await create(connection);
  const running = worker.run();
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch((error: unknown) => process.stderr.write(`${name}: ${String(error)}\n`));
      await connection.close();
    })();
    return stopped;
  };
  const unregister = onCleanup(name, stop);
  return {
    worker,
    stop: async () => {
      unregister();
      await stop();
    },
  };
}

/** Starts an errand worker in this process (errand's default worker options, the prebuilt bundle). */
export function startErrandWorker(bench: Bench, taskQueue: string): Promise<InProcessWorker> {
  return runInProcess(`errand worker ${taskQueue}`, (connection) => createErrandWorker({
    connection,
    namespace: 'default',
    taskQueue,
    dependencies: bench.dependencies,
    workflows: { workflowBundle: { codePath: bench.errandBundle } },
    tuning: { shutdownGraceTime: '2s' },
  }), bench.server.address);
}

/** Starts the bare-Temporal baseline worker in this process (the SDK's default worker options). */
export function startBaselineWorker(bench: Bench, taskQueue: string): Promise<InProcessWorker> {
  return runInProcess(`baseline worker ${taskQueue}`, (connection) => Worker.create({
    connection,
    namespace: 'default',
    taskQueue,
    workflowBundle: { codePath: bench.baselineBundle },
    activities: createBaselineActivities(),
    shutdownGraceTime: '2s',
  }), bench.server.address);
}

/** A worker child process (`src/worker/` run through tsx). */
export interface ChildWorker {
  pid: number;
  /** When it was spawned (ms since the epoch). */
  spawnedAt: number;
  /** Resolves with the time it printed that it polls, rejects if it exits first. */
  ready: Promise<number>;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
  /** Sends a signal to this process only. */
  kill(signal: NodeJS.Signals): void;
  /** Resident memory in bytes (VmRSS from /proc). */
  rssBytes(): number;
  /**
   * Asks the worker for a full collection of its main heap (SIGWINCH to bench/gc-on-signal.cjs); only for a
   * child spawned with `collectGarbageOnSignal`.
   */
  collectGarbage(): void;
}

/** Settings of a worker child. */
export interface ChildWorkerOptions {
  name: string;
  taskQueue: string;
  dataDir: string;
  modelHeartbeatTimeoutMs: number;
  /** More configuration for this worker (source stores, ...). */
  env?: NodeJS.ProcessEnv;
  /**
   * Start node with `--expose-gc` and bench/gc-on-signal.cjs preloaded, so `collectGarbage()` works: for
   * memory figures only (the flag and the handler are not part of how users run the worker).
   */
  collectGarbageOnSignal?: boolean;
}

/**
 * `BENCH_CPU_PROFILE_DIR=<dir>`: worker children run with Node's `--cpu-prof` and write one .cpuprofile per
 * thread into that folder when they exit (open them in Chrome's DevTools or any cpuprofile viewer). Figures
 * that end their worker child end it with {@link workerStopSignal}, so it exits and writes them.
 */
function cpuProfileArgs(): string[] {
  const dir = process.env.BENCH_CPU_PROFILE_DIR;
  if (dir === undefined || dir === '') return [];
  const absolute = resolve(dir);
  mkdirSync(absolute, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${absolute}`];
}

/** How a figure ends its worker child: SIGKILL, or SIGTERM when CPU profiles are asked for (a killed process writes none). */
export function workerStopSignal(): NodeJS.Signals {
  return process.env.BENCH_CPU_PROFILE_DIR ? 'SIGTERM' : 'SIGKILL';
}

/**
 * Spawns `errand worker` as users run it (`node bin/errand.js worker`, the bundled CLI, built first by
 * `buildCliBundle`), with configuration in the environment. The launcher runs the CLI in its own process,
 * so the pid we hold is the worker itself.
 */
export async function spawnWorkerChild(bench: Bench, options: ChildWorkerOptions): Promise<ChildWorker> {
  await buildCliBundle();
  const httpOnly = bench.providers.filter((provider) => provider.kind !== 'scripted');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(bench.tempDir, 'home'),
    ERRAND_TEMPORAL_ADDRESS: bench.server.address,
    ERRAND_TASK_QUEUE: options.taskQueue,
    ERRAND_PROVIDERS: JSON.stringify(httpOnly),
    ERRAND_DATA_DIR: options.dataDir,
    ERRAND_WORKING_DIR: bench.workingDir,
    ERRAND_WORKFLOW_BUNDLE: bench.errandBundle,
    ERRAND_MODEL_HEARTBEAT_TIMEOUT_MS: String(options.modelHeartbeatTimeoutMs),
    ...options.env,
  };
  const log = createWriteStream(join(bench.workDir, `${options.name}.log`), { flags: 'a' });
  const spawnedAt = Date.now();
  const nodeArgs = [...(options.collectGarbageOnSignal ? ['--expose-gc', '--require', join(projectRoot, 'bench', 'gc-on-signal.cjs')] : []), ...cpuProfileArgs()];
  const child = spawn(process.execPath, [...nodeArgs, join('bin', 'errand.js'), 'worker'], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`could not spawn worker child ${options.name}`);
  const pid = child.pid;
  trackChildPid(pid);
  child.stderr.pipe(log);
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => {
    untrackChildPid(pid);
    log.end();
    resolveExit();
  }));
  const ready = new Promise<number>((resolveReady, reject) => {
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      log.write(chunk);
      buffer += chunk.toString('utf8');
      if (buffer.includes('polling task queue')) resolveReady(Date.now());
    });
    child.once('exit', (code, signal) => reject(new Error(`worker child ${options.name} exited (${code ?? signal ?? '?'}) before polling; see bench/.work`)));
  });
  ready.catch(() => undefined);
  const unregister = onCleanup(`worker child ${options.name}`, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  void exited.then(unregister);
  return {
    pid,
    spawnedAt,
    ready,
    exited,
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    rssBytes: () => readRssBytes(pid),
    collectGarbage: () => {
      if (!options.collectGarbageOnSignal) throw new Error(`worker child ${options.name} was not spawned with collectGarbageOnSignal`);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGWINCH');
    },
  };
}

/** VmRSS of a process, in bytes. */
export function readRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  if (!match) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`), read once. */
let clockTicks: number | undefined;

/** CPU time (user + system) a process has used so far, ms, from /proc/<pid>/stat. */
export function readCpuMs(pid: number): number {
  clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command (which is in parentheses and may hold spaces): utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** Waits until `predicate` holds, polling; bounded by `timeoutMs`. */
export async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: string, intervalMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Sleeps. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}

/** Runs `work` on every item with at most `concurrency` in flight. */
export async function mapLimit<T, R>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as T, index);
    }
  });
  await Promise.all(lanes);
  return results;
}

let cliBundle: Promise<string> | undefined;

/**
 * Builds the bundled CLI as `npm ci` does (so `bin/errand.js` runs it, fresh for this code), once per bench
 * run however many figures need it; resolves to the builder's one-line report.
 */
export function buildCliBundle(): Promise<string> {
  cliBundle ??= promisify(execFile)(process.execPath, ['--import', 'tsx', join('scripts', 'build-cli.ts')], { cwd: projectRoot, encoding: 'utf8' }).then(({ stdout }) => stdout.trim().replace(/^build-cli: /, ''));
  return cliBundle;
}

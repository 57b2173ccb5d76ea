import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type ClientOptions, type Connection, type WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { afterAll, beforeAll } from 'vitest';
import type { SessionInput } from '../../src/contracts/session';
import type { ErrandConfig } from '../../src/settings/config';
import type { WorkerDependencies } from '../../src/worker/worker-dependencies';
import { sessionInput, startTestWorker, temporalAddress, temporalNamespace, testClient, testDependencies, uniqueTaskQueue, type RunningWorker, type TestDependencyOptions } from './temporal';

/**
 * The worker a test file runs its workflows on: one call of {@link useWorkerStack} at the top of the file
 * registers the file's `beforeAll` (a client, worker dependencies with a fresh data folder, a task queue
 * and a working folder of their own, an in-process worker) and `afterAll` (the worker stopped, the client's
 * connection closed). It returns a typed handle instead of module-level variables; its parts are there
 * from the file's first test on (and in hooks registered after the call).
 *
 * Hooks run in the order they are registered and the `afterAll`s in reverse (vitest's `sequence.hooks`
 * default): a server the worker's options name is started in a `beforeAll` registered before the call,
 * and is stopped after the worker.
 */

/** Options of {@link useWorkerStack}: the worker's dependencies ({@link TestDependencyOptions}) and these. */
export interface WorkerStackOptions extends TestDependencyOptions {
  /** Names the task queue and the working folder (`errand-<label>-work-…`). */
  label: string;
  /** The Temporal server's address (a server of the file's own); the run's dev server by default. */
  address?: string;
  /** The worker's identity (what the Web UI shows as its worker). */
  identity?: string;
  /** Interceptors of the client (as errand's API and CLI add them). */
  interceptors?: ClientOptions['interceptors'];
  /** Changes the worker's dependencies before the worker starts. */
  adjust?: (dependencies: WorkerDependencies) => WorkerDependencies;
  /**
   * A working folder the file made itself, instead of a fresh one: one that `env` names (a trusted recipe
   * folder in it, the working root), or one two stacks of the file share. Written by a hook registered
   * before the call, so `options` is then a function.
   */
  workingDir?: string;
}

/** A file's running worker and what its tests use with it. */
export interface WorkerStack {
  /** A client on the same server as the worker. */
  readonly client: Client;
  /** The worker's task queue (its own: no other file's worker polls it). */
  readonly taskQueue: string;
  /** A fresh working folder (or the one the options gave), symlinks resolved (paths compare as the worker sees them). */
  readonly workingDir: string;
  /** The worker's dependencies (its conversation store, blob store, ...). */
  readonly dependencies: WorkerDependencies;
  /** The configuration the dependencies were built from. */
  readonly config: ErrandConfig;
  /** The worker's data folder. */
  readonly dataDir: string;
  /** The worker itself. */
  readonly worker: RunningWorker;
  /** A fresh workflow id, `errand-<name>-<time>-<n>`. */
  nextId(name: string): string;
  /**
   * Starts a session workflow on the worker's task queue in the working folder (id from {@link nextId}, `name`
   * `session` unless given); `overrides` change the test defaults of {@link sessionInput}.
   */
  startSession(overrides?: Partial<SessionInput>, name?: string): Promise<WorkflowHandleWithFirstExecutionRunId>;
}

interface Running {
  client: Client;
  taskQueue: string;
  workingDir: string;
  dependencies: WorkerDependencies;
  config: ErrandConfig;
  dataDir: string;
  worker: RunningWorker;
}

/**
 * Registers the file's worker hooks and returns its {@link WorkerStack}. `options` may be a function: it is
 * called when `beforeAll` runs, after the hooks registered before, so it can name what they started (a model
 * server's URL, an own Temporal server's address).
 */
export function useWorkerStack(options: WorkerStackOptions | (() => WorkerStackOptions)): WorkerStack {
  let running: Running | undefined;
  let connection: Connection | undefined;
  let worker: RunningWorker | undefined;
  let counter = 0;

  beforeAll(async () => {
    const settings = typeof options === 'function' ? options() : options;
    const address = settings.address ?? temporalAddress();
    const opened = await testClient(address);
    connection = opened.connection;
    const client = settings.interceptors ? new Client({ connection, namespace: temporalNamespace(), interceptors: settings.interceptors }) : opened.client;
    const { dependencies: built, config, dataDir } = testDependencies(settings);
    const dependencies = settings.adjust ? settings.adjust(built) : built;
    const taskQueue = uniqueTaskQueue(settings.label);
    worker = await startTestWorker(taskQueue, dependencies, address, settings.identity);
    const workingDir = realpathSync(settings.workingDir ?? mkdtempSync(join(tmpdir(), `errand-${settings.label}-work-`)));
    running = { client, taskQueue, workingDir, dependencies, config, dataDir, worker };
  });

  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
  });

  const ready = (): Running => {
    if (!running) throw new Error('the worker stack is not running: use it in a test or in a hook registered after useWorkerStack (its beforeAll starts it)');
    return running;
  };
  const nextId = (name: string): string => {
    counter += 1;
    return `errand-${name}-${Date.now()}-${counter}`;
  };
  return {
    get client() {
      return ready().client;
    },
    get taskQueue() {
      return ready().taskQueue;
    },
    get workingDir() {
      return ready().workingDir;
    },
    get dependencies() {
      return ready().dependencies;
    },
    get config() {
      return ready().config;
    },
    get dataDir() {
      return ready().dataDir;
    },
    get worker() {
      return ready().worker;
    },
    nextId,
    startSession(overrides = {}, name = 'session') {
      const { client, taskQueue, workingDir } = ready();
      return client.workflow.start('sessionWorkflow', { taskQueue, workflowId: nextId(name), args: [sessionInput({ workingDir, ...overrides })] });
    },
  };
}

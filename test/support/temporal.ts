import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker } from '@temporalio/worker';
import type { SessionInput } from '../../src/contracts/session';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import type { SubagentActivitySettings, SubagentInput } from '../../src/contracts/subagent';
import { loadConfig, type ErrandConfig } from '../../src/settings/config';
import type { ChatModel } from '../../src/llm/model-port';
import type { ProviderConfig } from '../../src/llm/provider-config';
import { createErrandWorker } from '../../src/worker/errand-worker';
import { createWorkerDependencies, type WorkerDependencies } from '../../src/worker/worker-dependencies';

/** Address of the run's dev server (started by global-setup.ts). */
export function temporalAddress(): string {
  const address = process.env.ERRAND_TEST_TEMPORAL_ADDRESS;
  if (!address) throw new Error('ERRAND_TEST_TEMPORAL_ADDRESS is not set: run tests through vitest (global setup starts the dev server)');
  return address;
}

/** Namespace of the run's server: `ERRAND_TEST_TEMPORAL_NAMESPACE` when a run points the tests at a cluster, else `default`. */
export function temporalNamespace(): string {
  return process.env.ERRAND_TEST_TEMPORAL_NAMESPACE ?? 'default';
}

/** Temporal's HTTP API of the run's dev server (the frontend's JSON gateway). */
export function temporalHttpUrl(): string {
  const url = process.env.ERRAND_TEST_TEMPORAL_HTTP_URL;
  if (!url) throw new Error('ERRAND_TEST_TEMPORAL_HTTP_URL is not set: run tests through vitest (global setup starts the dev server)');
  return url;
}

/** Path of the workflow bundle built once per run by global-setup.ts. */
export function workflowBundlePath(): string {
  const path = process.env.ERRAND_TEST_WORKFLOW_BUNDLE;
  if (!path) throw new Error('ERRAND_TEST_WORKFLOW_BUNDLE is not set: run tests through vitest');
  return path;
}

/** A task queue of its own for one test, so tests never pick up each other's work. */
export function uniqueTaskQueue(label: string): string {
  return `test-${label}-${randomUUID().slice(0, 8)}`;
}

/** A client on the dev server. Close its connection at the end of the test file. */
export async function testClient(address: string = temporalAddress()): Promise<{ client: Client; connection: Connection }> {
  const connection = await Connection.connect({ address });
  return { client: new Client({ connection, namespace: temporalNamespace() }), connection };
}

/** Fast activity settings for tests: short heartbeat timeout so lost workers are noticed quickly. */
export const testActivitySettings: SubagentActivitySettings = {
  modelCallTimeoutMs: 60_000,
  modelHeartbeatTimeoutMs: 3_000,
  toolCallTimeoutMs: 30_000,
  modelMaximumAttempts: 4,
};

/** A worker running in this test process. */
export interface RunningWorker {
  worker: Worker;
  /** Shuts the worker down and waits for it to stop. */
  stop(): Promise<void>;
}

/** Starts an in-process worker on `taskQueue` with the given dependencies (`identity`: what the Web UI shows as its worker). */
export async function startTestWorker(taskQueue: string, dependencies: WorkerDependencies, address: string = temporalAddress(), identity?: string): Promise<RunningWorker> {
  const connection = await NativeConnection.connect({ address });
  const worker = await createErrandWorker({
    connection,
    namespace: temporalNamespace(),
    taskQueue,
    dependencies,
    workflows: { workflowBundle: { codePath: workflowBundlePath() } },
    tuning: { shutdownGraceTime: '2s', ...(identity ? { identity } : {}) },
  });
  const running = worker.run();
  return {
    worker,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/** A subagent input with test defaults; override what a test cares about. */
export function subagentInput(overrides: Partial<SubagentInput> & Pick<SubagentInput, 'prompt' | 'workingDir'>): SubagentInput {
  return {
    label: 'test delegation',
    system: {},
    route: { provider: 'scripted', model: 'scripted-model' },
    toolsets: ['developer'],
    maxTurns: 10,
    depth: 1,
    maxDepth: 1,
    activity: testActivitySettings,
    ...overrides,
  };
}

/** Options of {@link testDependencies}. */
export interface TestDependencyOptions {
  /** In-process models by provider name (each also configured as a `scripted` provider with `models`). */
  scripted?: Record<string, { model: ChatModel; models?: ProviderConfig['models'] }>;
  /** Providers reached over HTTP (e.g. the scripted OpenAI-compatible server). */
  providers?: ProviderConfig[];
  /** Extra environment for configuration (ERRAND_*). */
  env?: Record<string, string>;
  /** Home directory for user-level source folders (an empty temp folder by default). */
  homeDirectory?: string;
}

/** Worker dependencies with a fresh data folder, for one test file. */
export function testDependencies(options: TestDependencyOptions = {}): { dependencies: WorkerDependencies; config: ErrandConfig; dataDir: string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'errand-test-data-'));
  const providers: ProviderConfig[] = [
    ...Object.entries(options.scripted ?? {}).map(([name, entry]) => ({ name, kind: 'scripted' as const, models: entry.models ?? ['scripted-model'] })),
    ...(options.providers ?? []),
  ];
  const config = loadConfig({ ERRAND_DATA_DIR: dataDir, ERRAND_PROVIDERS: JSON.stringify(providers), ...options.env });
  const scripted = Object.fromEntries(Object.entries(options.scripted ?? {}).map(([name, entry]) => [name, entry.model]));
  const dependencies = createWorkerDependencies(config, {
    scripted,
    env: process.env,
    homeDirectory: options.homeDirectory ?? mkdtempSync(join(tmpdir(), 'errand-test-home-')),
  });
  return { dependencies, config, dataDir };
}

/** A session input with test defaults. */
export function sessionInput(overrides: Partial<SessionInput> & Pick<SessionInput, 'workingDir'>): SessionInput {
  return {
    label: 'test session',
    route: { provider: 'scripted', model: 'scripted-model' },
    toolsets: ['developer'],
    system: {},
    maxTurnsPerMessage: 10,
    maxDepth: 1,
    tasks: { maxBackgroundTasks: 5, waitTimeoutMs: 30_000, completedTaskTtlMs: 600_000 },
    activity: testActivitySettings,
    ...overrides,
  };
}

/** Asks every running session on `taskQueue` to cancel (a file's clean-up: its sessions end, their children with them). */
export async function cancelRunningSessions(client: Client, taskQueue: string): Promise<void> {
  for await (const execution of client.workflow.list({ query: `TaskQueue = "${taskQueue}" AND WorkflowType = "sessionWorkflow" AND ExecutionStatus = "Running"` })) {
    await client.workflow.getHandle(execution.workflowId).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  }
}

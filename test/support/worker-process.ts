import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { distWorker } from './built-artifacts';
import { temporalAddress, temporalNamespace, workflowBundlePath } from './temporal';

const projectRoot = resolve(__dirname, '..', '..');

/** A worker running as a separate process (so a test can SIGKILL it). */
export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  logFile: string;
  /** Resolves once the worker prints that it is polling. */
  ready: Promise<void>;
  /** SIGKILL: the process dies at once, with whatever it was doing. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts the worker as the image starts it (`node dist/worker/main.js`, the build the global setup keeps fresh)
 * in one child process, so SIGKILL reaches the worker itself, with the given configuration environment.
 * The worker loads the run's prebuilt workflow bundle, so it starts in a couple of seconds.
 */
export function startWorkerProcess(name: string, env: Record<string, string>): WorkerProcess {
  const logDirectory = join(projectRoot, 'test-artifacts', 'workers');
  mkdirSync(logDirectory, { recursive: true });
  const logFile = join(logDirectory, `${name}-${Date.now()}.log`);
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, [distWorker], {
    cwd: projectRoot,
    env: {
      ...process.env,
      ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
      ERRAND_TEMPORAL_NAMESPACE: temporalNamespace(),
      ERRAND_WORKFLOW_BUNDLE: workflowBundlePath(),
      ERRAND_LOG_LEVEL: 'WARN',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error('could not start the worker process');
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const ready = new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${name} did not start within 60 s; see ${logFile}`)), 60_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      log.write(chunk);
      if (chunk.toString().includes('polling task queue')) {
        clearTimeout(timer);
        resolveReady();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker ${name} exited with code ${String(code)} before it was ready; see ${logFile}`));
    });
  });
  ready.catch(() => undefined);
  return {
    child,
    pid: child.pid,
    logFile,
    ready,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

import type { ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';

/** How to tell that a Temporal server that was just started answers. */
export interface TemporalReadiness {
  /** The frontend's `host:port`. */
  address: string;
  /** A namespace the server makes once it is up (`default` for a dev server, `temporal-system` for a cluster's). */
  namespace: string;
  /** What to call the server in errors (`Temporal dev server`, `Temporal server`). */
  name: string;
  /** Where its log is, for errors. */
  logFile: string;
  /** Give up (and kill it) after this long. */
  timeoutMs: number;
  /** Between two tries. */
  pollMs: number;
}

/**
 * Waits until a Temporal server the caller started answers on its frontend and has made `namespace`.
 * Throws when the process exits first, or (after killing it) when it does not answer in time; the errors
 * name the log.
 */
export async function waitUntilTemporalAnswers(child: ChildProcess, ready: TemporalReadiness): Promise<void> {
  const deadline = Date.now() + ready.timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${ready.name} exited (${child.exitCode !== null ? `code ${child.exitCode}` : `signal ${child.signalCode}`}) during start; see its log at ${ready.logFile}`);
    }
    try {
      const connection = await Connection.connect({ address: ready.address, connectTimeout: 1_000 });
      try {
        await connection.workflowService.getSystemInfo({});
        await connection.workflowService.describeNamespace({ namespace: ready.namespace });
      } finally {
        await connection.close();
      }
      return;
    } catch (error) {
      lastError = error;
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${ready.name} did not answer on ${ready.address} in time (${String(lastError)}); see ${ready.logFile}`);
      }
      await new Promise((resolveWait) => setTimeout(resolveWait, ready.pollMs));
    }
  }
}

import type { InjectedSinks } from '@temporalio/worker';
import type { InFlightSinks } from '../contracts/in-flight-sinks';

/**
 * The model and tool calls running in this worker process, by the workflow run that started them.
 *
 * Temporal tells a running activity of its cancellation only in the answer to one of its heartbeats, and
 * heartbeats are slow on purpose (each one that reaches the server is a billable action, decision 0022).
 * A workflow's cancel handler calls the `inFlightCalls` sink (src/contracts/in-flight-sinks.ts); the worker
 * that ran that workflow task calls {@link InFlightCalls.abortRun} here, which aborts every call of that run
 * in this process at once — the provider's HTTP request is closed within milliseconds, not a heartbeat
 * later. A call on another worker still learns of the cancel with its next heartbeat.
 */
export class InFlightCalls {
  private readonly runs = new Map<string, Set<(reason: string) => void>>();

  /** Registers a running call's abort; the returned function removes it (call it when the call ends). */
  register(execution: { workflowId: string; runId: string }, abort: (reason: string) => void): () => void {
    const key = runKey(execution.workflowId, execution.runId);
    let calls = this.runs.get(key);
    if (!calls) {
      calls = new Set();
      this.runs.set(key, calls);
    }
    calls.add(abort);
    return () => {
      const current = this.runs.get(key);
      if (!current) return;
      current.delete(abort);
      if (current.size === 0) this.runs.delete(key);
    };
  }

  /** Aborts every call of the run running in this process; returns how many there were. */
  abortRun(workflowId: string, runId: string, reason: string): number {
    const calls = this.runs.get(runKey(workflowId, runId));
    if (!calls) return 0;
    const aborts = [...calls];
    for (const abort of aborts) abort(reason);
    return aborts.length;
  }

  /** How many calls run in this process now (for tests and diagnostics). */
  get size(): number {
    let count = 0;
    for (const calls of this.runs.values()) count += calls.size;
    return count;
  }
}

function runKey(workflowId: string, runId: string): string {
  return `${workflowId}\u0000${runId}`;
}

/** The worker's side of the `inFlightCalls` sink: a workflow's cancel aborts its calls in `registry`. */
export function inFlightSinks(registry: InFlightCalls): InjectedSinks<InFlightSinks> {
  return {
    inFlightCalls: {
      abortRun: {
        // Not on replay: a replayed cancel was acted on when it happened (sinks add nothing to history).
        fn: (info, reason) => {
          registry.abortRun(info.workflowId, info.runId, reason);
        },
        callDuringReplay: false,
      },
    },
  };
}

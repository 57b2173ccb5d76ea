import { workflowRoundGraceMs, workflowRoundThreadHeapMb, workflowRoundThreads } from '../contracts/limits/workflow-scripts';
import type { WorkflowScriptRoundInput, WorkflowScriptRoundOutput } from '../contracts/workflow-script';
import { threadProgramPlace, WarmThreadPool } from '../threads/warm-threads';

/**
 * Rounds of workflow scripts run in threads of their own (decision 0038), off the event loop that serves
 * every other run and delegation on the worker. The engine's step and time checks stop a script between
 * bytecode operations; one long built-in call (a huge `repeat`, a sort of a large array) runs to its end
 * between two checks, so the thread itself is stopped from outside once the round's time and a grace
 * period have passed, and the round ends `failed` (`time`). A thread whose heap fills ends alone.
 *
 * A thread is kept warm between rounds (starting one costs tens of milliseconds); at most
 * {@link workflowRoundThreads} run at once, the rest wait.
 */

/** The thread's answer to one round. */
export interface RoundThreadReply {
  id: number;
  output: WorkflowScriptRoundOutput;
}

/** Round threads: up to {@link workflowRoundThreads} at once, as many kept warm. */
const pool = new WarmThreadPool({
  place: threadProgramPlace(typeof __dirname === 'string' ? __dirname : undefined, 'round-thread', 'workflow-round-thread', 'the workflow round thread entry'),
  maxThreads: workflowRoundThreads,
  keepWarm: workflowRoundThreads,
  heapMb: workflowRoundThreadHeapMb,
});

function failed(kind: 'time' | 'memory' | 'error', message: string): WorkflowScriptRoundOutput {
  return { status: 'failed', diagnostic: { kind, message, line: null }, logs: [] };
}

/** Runs one round of a workflow script in a round thread; never throws for anything the script does. */
export async function runRoundOffThread(input: WorkflowScriptRoundInput): Promise<WorkflowScriptRoundOutput> {
  return pool.run<RoundThreadReply, WorkflowScriptRoundOutput>({
    message: { input },
    deadlineMs: input.limits.roundMs + workflowRoundGraceMs,
    // A round that failed may leave its engine in any state: its thread is not reused.
    answered: (reply) => ({ result: reply.output, keep: reply.output.status !== 'failed' }),
    ended: (end) => {
      if (end.kind === 'deadline') return failed('time', `the script ran past the time one round may take (${input.limits.roundMs} ms) inside one long built-in call and was stopped`);
      if (end.kind === 'memory') return failed('memory', `the script ran out of memory (its thread's ${end.heapMb} MiB) and was stopped`);
      if (end.kind === 'exit') return failed('error', `the script's round stopped (its thread ended with code ${end.code})`);
      return failed('error', `the script's round stopped: ${end.error instanceof Error ? end.error.message : String(end.error)}`);
    },
  });
}

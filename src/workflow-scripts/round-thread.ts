import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { workflowRoundGraceMs, workflowRoundThreadHeapMb, workflowRoundThreads } from '../contracts/limits';
import type { WorkflowScriptRoundInput, WorkflowScriptRoundOutput } from '../contracts/workflow-script';

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

interface ThreadProgram {
  source: string;
  evaluate: boolean;
}

let program: ThreadProgram | undefined;

/** The thread's entry beside this file: built (`.js`, `.mjs` in a bundle) or the sources under tsx. */
function threadProgram(): ThreadProgram {
  if (program) return program;
  const here = typeof __dirname === 'string' ? __dirname : process.cwd();
  for (const candidate of [join(here, 'round-thread-entry.js'), join(here, 'workflow-round-thread.mjs'), join(here, '..', 'workflow-round-thread.mjs')]) {
    if (existsSync(candidate)) return (program = { source: candidate, evaluate: false });
  }
  const typescript = join(here, 'round-thread-entry.ts');
  if (existsSync(typescript)) {
    return (program = { source: `require('tsx/cjs/api').register(); require(${JSON.stringify(typescript)});`, evaluate: true });
  }
  throw new Error('the workflow round thread entry (round-thread-entry.js or workflow-round-thread.mjs) is missing from this build');
}

class RoundThread {
  readonly worker: Worker;
  readonly ready: Promise<void>;

  constructor() {
    const { source, evaluate } = threadProgram();
    this.worker = new Worker(source, { eval: evaluate, resourceLimits: { maxOldGenerationSizeMb: workflowRoundThreadHeapMb }, stdout: false, stderr: false });
    this.worker.unref();
    this.worker.once('exit', () => {
      const at = idle.indexOf(this);
      if (at >= 0) idle.splice(at, 1);
    });
    this.ready = new Promise((resolve, reject) => {
      this.worker.once('message', () => {
        this.worker.off('error', reject);
        resolve();
      });
      this.worker.once('error', reject);
    });
  }
}

const idle: RoundThread[] = [];
let running = 0;
const waiting: (() => void)[] = [];
let nextId = 0;

async function slot(): Promise<void> {
  while (running >= workflowRoundThreads) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
}

function release(): void {
  running -= 1;
  waiting.shift()?.();
}

function failed(kind: 'time' | 'memory' | 'error', message: string): WorkflowScriptRoundOutput {
  return { status: 'failed', diagnostic: { kind, message, line: null }, logs: [] };
}

/** Runs one round of a workflow script in a round thread; never throws for anything the script does. */
export async function runRoundOffThread(input: WorkflowScriptRoundInput): Promise<WorkflowScriptRoundOutput> {
  await slot();
  try {
    const thread = idle.pop() ?? new RoundThread();
    await thread.ready.catch(async (error: unknown) => {
      await thread.worker.terminate();
      throw error;
    });
    const id = (nextId += 1);
    const deadlineMs = input.limits.roundMs + workflowRoundGraceMs;
    return await new Promise<WorkflowScriptRoundOutput>((resolve) => {
      const { worker } = thread;
      const finish = (output: WorkflowScriptRoundOutput, keep: boolean) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (keep && idle.length < workflowRoundThreads) idle.push(thread);
        else void worker.terminate();
        resolve(output);
      };
      const onMessage = (reply: RoundThreadReply) => {
        // A round that failed may leave its engine in any state: its thread is not reused.
        if (reply.id === id) finish(reply.output, reply.output.status !== 'failed');
      };
      const onError = (error: unknown) => {
        const code = typeof error === 'object' && error !== null && 'code' in error ? (error as { code: unknown }).code : undefined;
        finish(
          code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? failed('memory', `the script ran out of memory (its thread's ${workflowRoundThreadHeapMb} MiB) and was stopped`)
            : failed('error', `the script's round stopped: ${error instanceof Error ? error.message : String(error)}`),
          false,
        );
      };
      const onExit = (code: number) => finish(failed('error', `the script's round stopped (its thread ended with code ${code})`), false);
      const timer = setTimeout(
        () => finish(failed('time', `the script ran past the time one round may take (${input.limits.roundMs} ms) inside one long built-in call and was stopped`), false),
        deadlineMs,
      );
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ id, input });
    });
  } finally {
    release();
  }
}

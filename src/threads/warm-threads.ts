import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * Work that must not hold the event loop (a recipe's template, a workflow script's round) runs in a thread of
 * its own with a deadline and a heap of its own: past the deadline the thread is stopped from outside, a heap
 * that fills ends the thread, not the process, and either way the caller gets an answer while the process
 * goes on serving others. Threads are kept warm between jobs (starting one costs tens of milliseconds), at most
 * `maxThreads` run at once and the rest wait. One pool per kind of work (src/sources/template-thread.ts,
 * src/workflow-scripts/round-thread.ts).
 */

/** Where a pool's thread program is: its built file names beside the caller, or its TypeScript source. */
export interface ThreadProgramPlace {
  /** The caller's folder (its `__dirname`; a bundle's entry folder or its chunks/). */
  here: string;
  /** File names of the built program, tried in order (`x-entry.js` in dist/, `x.mjs` beside a bundle's entry). */
  built: readonly string[];
  /** The program's TypeScript source beside the caller, run through tsx when errand runs from its sources. */
  typescript: string;
  /** What the program is, for the error when a build lacks it. */
  what: string;
}

/**
 * The place of a thread program built as `<entry>-entry.js` in dist/ and `<bundled>.mjs` at the top of a
 * bundle (the calling code may sit in the bundle's entry file or in its chunks/), run from
 * `<entry>-entry.ts` beside the caller under tsx. `here` is the caller's `__dirname` (undefined in an ES
 * module bundle: the working folder then).
 */
export function threadProgramPlace(here: string | undefined, entry: string, bundled: string, what: string): ThreadProgramPlace {
  return {
    here: here ?? process.cwd(),
    built: [`${entry}-entry.js`, `${bundled}.mjs`, join('..', `${bundled}.mjs`)],
    typescript: `${entry}-entry.ts`,
    what,
  };
}

/** Settings of one pool. */
export interface WarmThreadPoolOptions {
  place: ThreadProgramPlace;
  /** Threads running at once; more jobs wait for one. */
  maxThreads: number;
  /** Idle threads kept warm. */
  keepWarm: number;
  /** The heap of a thread (MiB) unless a job asks for another (a thread with another heap is never kept). */
  heapMb: number;
}

/** Why a job's thread ended without answering. */
export type ThreadEnd = { kind: 'deadline' } | { kind: 'memory'; heapMb: number } | { kind: 'error'; error: unknown } | { kind: 'exit'; code: number };

/** What a caller makes of its thread's reply (`keep`: the thread may serve another job) or of its end. */
export interface ThreadJob<Reply, Result> {
  /** What the thread is sent; the pool adds the `id` its reply repeats. */
  message: object;
  deadlineMs: number;
  heapMb?: number;
  answered(reply: Reply): { result: Result; keep: boolean };
  ended(end: ThreadEnd): Result;
}

interface Program {
  source: string;
  evaluate: boolean;
}

function findProgram(place: ThreadProgramPlace): Program {
  for (const name of place.built) {
    const candidate = join(place.here, name);
    if (existsSync(candidate)) return { source: candidate, evaluate: false };
  }
  const typescript = join(place.here, place.typescript);
  if (existsSync(typescript)) return { source: `require('tsx/cjs/api').register(); require(${JSON.stringify(typescript)});`, evaluate: true };
  throw new Error(`${place.what} (${place.built.join(' or ')}) is missing from this build`);
}

/** One thread and the promise that its program has loaded (it says `{ ready: true }` first). */
class WarmThread {
  readonly worker: Worker;
  readonly ready: Promise<void>;

  constructor(program: Program, readonly heapMb: number, what: string, onExit: (thread: WarmThread) => void) {
    this.worker = new Worker(program.source, { eval: program.evaluate, resourceLimits: { maxOldGenerationSizeMb: heapMb }, stdout: false, stderr: false });
    // An idle thread must not keep a process (a CLI command) alive; a job's deadline timer does while it runs.
    this.worker.unref();
    this.worker.once('exit', () => onExit(this));
    this.ready = new Promise((resolve, reject) => {
      this.worker.once('message', (message: unknown) => {
        this.worker.off('error', reject);
        if (typeof message === 'object' && message !== null && 'ready' in message) resolve();
        else reject(new Error(`${what} answered before it said it was ready`));
      });
      this.worker.once('error', reject);
    });
  }
}

/** A pool of warm threads running one program; every message carries an `id` its reply repeats. */
export class WarmThreadPool {
  private program: Program | undefined;
  private readonly idle: WarmThread[] = [];
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private nextId = 0;

  constructor(private readonly options: WarmThreadPoolOptions) {}

  /** Runs one job; the job's own `answered`/`ended` make its result. Throws only when no thread can start. */
  async run<Reply extends { id: number }, Result>(job: ThreadJob<Reply, Result>): Promise<Result> {
    await this.slot();
    try {
      const heapMb = job.heapMb ?? this.options.heapMb;
      const thread = (heapMb === this.options.heapMb ? this.idle.pop() : undefined) ?? this.start(heapMb);
      await thread.ready.catch(async (error: unknown) => {
        await thread.worker.terminate();
        throw error;
      });
      const id = (this.nextId += 1);
      return await new Promise<Result>((resolve) => {
        const { worker } = thread;
        const finish = (result: Result, keep: boolean) => {
          clearTimeout(timer);
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
          if (keep) this.retire(thread);
          else void worker.terminate();
          resolve(result);
        };
        const onMessage = (reply: Reply) => {
          if (reply.id !== id) return;
          const { result, keep } = job.answered(reply);
          finish(result, keep);
        };
        const onError = (error: unknown) => {
          const code = typeof error === 'object' && error !== null && 'code' in error ? (error as { code: unknown }).code : undefined;
          finish(job.ended(code === 'ERR_WORKER_OUT_OF_MEMORY' ? { kind: 'memory', heapMb } : { kind: 'error', error }), false);
        };
        const onExit = (code: number) => finish(job.ended({ kind: 'exit', code }), false);
        const timer = setTimeout(() => finish(job.ended({ kind: 'deadline' }), false), job.deadlineMs);
        worker.on('message', onMessage);
        worker.on('error', onError);
        worker.on('exit', onExit);
        worker.postMessage({ ...job.message, id });
      });
    } finally {
      this.release();
    }
  }

  private start(heapMb: number): WarmThread {
    this.program ??= findProgram(this.options.place);
    // A warm thread that ends while idle is forgotten (the next job starts another).
    return new WarmThread(this.program, heapMb, this.options.place.what, (thread) => {
      const at = this.idle.indexOf(thread);
      if (at >= 0) this.idle.splice(at, 1);
    });
  }

  /** Keeps `thread` warm when there is room, else ends it. */
  private retire(thread: WarmThread): void {
    if (thread.heapMb !== this.options.heapMb || this.idle.length >= this.options.keepWarm) {
      void thread.worker.terminate();
      return;
    }
    this.idle.push(thread);
  }

  private async slot(): Promise<void> {
    while (this.running >= this.options.maxThreads) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running += 1;
  }

  private release(): void {
    this.running -= 1;
    this.waiting.shift()?.();
  }
}

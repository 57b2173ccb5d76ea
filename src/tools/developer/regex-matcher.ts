import { Worker } from 'node:worker_threads';
import { RE2JS } from 're2js';

/**
 * Regular expressions from the model, matched without risk to the worker. Two guards:
 *
 * 1. RE2 (the `re2js` port): matching time is linear in the input, so the classic catastrophic patterns
 *    (`(a+)+$`, `(a|aa)*b`) cannot backtrack exponentially. Lookaround and backreferences, which need
 *    backtracking, are refused with RE2's own message.
 * 2. A worker thread with a deadline: linear can still be slow (a pattern whose program is thousands of
 *    states, run over a long line), and a blocked event loop stops the activity's heartbeats and every
 *    other activity on the worker. Matching therefore runs off the event loop, and the thread is stopped
 *    when the deadline passes or the tool call is cancelled.
 */

/** Thrown when matching did not finish before the deadline. */
export class RegexDeadlineError extends Error {
  readonly errandError = 'RegexDeadlineError';
  constructor(readonly deadlineMs: number) {
    super(`matching the regular expression took longer than ${deadlineMs} ms`);
    this.name = 'RegexDeadlineError';
  }
}

/** Thrown when the tool call was cancelled while matching. */
export class RegexCancelledError extends Error {
  readonly errandError = 'RegexCancelledError';
  constructor() {
    super('matching was cancelled');
    this.name = 'RegexCancelledError';
  }
}

/** Compiles a pattern in RE2 syntax; returns RE2's message for a pattern it refuses. */
export function checkRegex(source: string, caseInsensitive: boolean): { ok: true } | { ok: false; message: string } {
  try {
    RE2JS.compile(source, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
    return { ok: true };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * The thread's code, plain CommonJS evaluated as a string: it needs no build step and no TypeScript
 * loader in the thread. It compiles the pattern once and answers each message (one file's text) with
 * the indexes of its matching lines, at most `max`.
 */
const threadSource = `
const { parentPort, workerData } = require('node:worker_threads');
const { RE2JS } = require(workerData.re2jsPath);
const pattern = RE2JS.compile(workerData.source, workerData.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
parentPort.on('message', (message) => {
  const lines = message.text.split('\\n');
  const found = [];
  for (let index = 0; index < lines.length && found.length < message.max; index += 1) {
    if (pattern.test(lines[index])) found.push(index);
  }
  parentPort.postMessage(found);
});
`;

/** A compiled pattern running in its own thread, with one deadline for everything it matches. */
export class ThreadedRegexMatcher {
  private readonly worker: Worker;
  private readonly deadlineAt: number;
  private failure: Error | undefined;
  private pending: { resolve(lines: number[]): void; reject(error: Error): void } | undefined;
  private readonly onAbort = () => this.stop(new RegexCancelledError());
  private readonly timer: NodeJS.Timeout;

  constructor(source: string, caseInsensitive: boolean, private readonly deadlineMs: number, private readonly signal?: AbortSignal) {
    this.worker = new Worker(threadSource, { eval: true, workerData: { source, caseInsensitive, re2jsPath: require.resolve('re2js') } });
    this.worker.on('message', (lines: number[]) => {
      const pending = this.pending;
      this.pending = undefined;
      pending?.resolve(lines);
    });
    this.worker.on('error', (error) => this.stop(error));
    this.worker.on('exit', () => this.stop(new Error('the matching thread ended')));
    this.deadlineAt = Date.now() + deadlineMs;
    this.timer = setTimeout(() => this.stop(new RegexDeadlineError(deadlineMs)), deadlineMs);
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Indexes (0-based) of the lines of `text` that match, at most `max`. */
  matchLines(text: string, max: number): Promise<number[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (Date.now() >= this.deadlineAt) {
      this.stop(new RegexDeadlineError(this.deadlineMs));
      return Promise.reject(this.failure ?? new RegexDeadlineError(this.deadlineMs));
    }
    return new Promise<number[]>((resolve, reject) => {
      this.pending = { resolve, reject };
      this.worker.postMessage({ text, max });
    });
  }

  /** Stops the thread (idempotent). Call when the search ends. */
  async close(): Promise<void> {
    this.stop(new Error('the matcher was closed'));
    await this.worker.terminate();
  }

  private stop(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this.onAbort);
    const pending = this.pending;
    this.pending = undefined;
    pending?.reject(error);
    void this.worker.terminate();
  }
}

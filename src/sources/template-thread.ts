import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { maxTemplateThreads, templateRenderDeadlineMs, templateThreadHeapMb } from '../contracts/limits/sources';
import type { TemplateRenderOptions } from '../domain/template-render';
import type { TemplateValue } from '../domain/template-values';
import type { RecipeRenderResult } from './recipe-render';

/**
 * Recipe files render in a thread of their own (decision 0024), off the event loop that serves every
 * tenant, with a deadline and a heap of their own. The engine's step and size limits stop every template
 * known to be costly within milliseconds; the thread holds whatever they miss: past the deadline the
 * thread is stopped, a render that would fill its heap ends the thread, not the process, and either way
 * the file ends with a template-limit error while the worker goes on serving others.
 *
 * One thread is kept warm between renders (a render then costs a message each way, well under a
 * millisecond for a plain recipe; starting a thread costs tens of milliseconds from a build, more under
 * tsx); renders that overlap get a thread each, up to {@link maxTemplateThreads}, so one tenant's slow
 * render never queues another's behind it.
 */

/** What the thread is asked: one recipe file to render (see recipe-render.ts). */
export interface TemplateThreadRequest {
  id: number;
  content: string;
  values: Readonly<Record<string, TemplateValue>>;
  file: string;
  path: string;
  options: Pick<TemplateRenderOptions, 'undefinedBehavior'>;
}

/** The thread's answer to one request. */
export interface TemplateThreadReply {
  id: number;
  result: RecipeRenderResult;
}

/** Limits of one render off the event loop; the defaults come from limits.ts (tests lower them). */
export interface TemplateThreadLimits {
  deadlineMs?: number;
  heapMb?: number;
}

/** How a thread is started: the built entry file, or (from the TypeScript sources) a loader for it. */
interface ThreadProgram {
  source: string;
  evaluate: boolean;
}

let program: ThreadProgram | undefined;

/**
 * Finds the thread's entry beside this file: `template-thread-entry.js` in dist/, `template-thread.mjs`
 * at the top of a bundle (this code may sit in the bundle's entry file or in one of its chunks/), or the
 * `.ts` file when errand runs from its sources (through tsx, which the thread registers first).
 */
function threadProgram(): ThreadProgram {
  if (program) return program;
  const here = typeof __dirname === 'string' ? __dirname : process.cwd();
  for (const candidate of [join(here, 'template-thread-entry.js'), join(here, 'template-thread.mjs'), join(here, '..', 'template-thread.mjs')]) {
    if (existsSync(candidate)) return (program = { source: candidate, evaluate: false });
  }
  const typescript = join(here, 'template-thread-entry.ts');
  if (existsSync(typescript)) {
    return (program = { source: `require('tsx/cjs/api').register(); require(${JSON.stringify(typescript)});`, evaluate: true });
  }
  throw new Error('the template thread entry (template-thread-entry.js or template-thread.mjs) is missing from this build');
}

/** One rendering thread and the promise that it has loaded. */
class RenderingThread {
  readonly worker: Worker;
  readonly ready: Promise<void>;

  constructor(readonly heapMb: number) {
    const { source, evaluate } = threadProgram();
    this.worker = new Worker(source, { eval: evaluate, resourceLimits: { maxOldGenerationSizeMb: heapMb }, stdout: false, stderr: false });
    // An idle thread must not keep a process (a CLI command) alive; a render's deadline timer does while it runs.
    this.worker.unref();
    // A warm thread that ends while idle is forgotten (the next render starts another).
    this.worker.once('exit', () => {
      const at = idle.indexOf(this);
      if (at >= 0) idle.splice(at, 1);
    });
    this.ready = new Promise((resolve, reject) => {
      const onMessage = (message: unknown) => {
        if (typeof message === 'object' && message !== null && 'ready' in message) {
          this.worker.off('error', reject);
          resolve();
        }
      };
      this.worker.once('message', onMessage);
      this.worker.once('error', reject);
    });
  }
}

const idle: RenderingThread[] = [];
let running = 0;
const waiting: (() => void)[] = [];
let nextId = 0;

async function slot(): Promise<void> {
  while (running >= maxTemplateThreads) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
}

function release(): void {
  running -= 1;
  waiting.shift()?.();
}

/** Keeps `thread` warm when none is, else ends it. */
function retire(thread: RenderingThread): void {
  if (thread.heapMb !== templateThreadHeapMb || idle.length > 0) {
    void thread.worker.terminate();
    return;
  }
  idle.push(thread);
}

/** Why a thread ended during a render, as the template-limit error of `file`. */
function endedMessage(file: string, heapMb: number, error: unknown): string {
  const code = typeof error === 'object' && error !== null && 'code' in error ? (error as { code: unknown }).code : undefined;
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') return `${file}: template limit: rendering needed more than ${heapMb} MiB of memory (the limit for one template)`;
  return `${file}: template limit: rendering stopped: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * Renders a recipe file (see {@link renderRecipeDocument}) in a rendering thread, within the deadline.
 * Template errors, limits and a thread that had to be stopped are results (`ok: false`, naming the file);
 * only a thread that cannot start at all throws.
 */
export async function renderRecipeOffThread(
  content: string,
  values: Readonly<Record<string, TemplateValue>>,
  file: string,
  path: string,
  options: Pick<TemplateRenderOptions, 'undefinedBehavior'> = {},
  limits: TemplateThreadLimits = {},
): Promise<RecipeRenderResult> {
  const deadlineMs = limits.deadlineMs ?? templateRenderDeadlineMs;
  const heapMb = limits.heapMb ?? templateThreadHeapMb;
  await slot();
  try {
    const warm = heapMb === templateThreadHeapMb ? idle.pop() : undefined;
    const thread = warm ?? new RenderingThread(heapMb);
    await thread.ready.catch(async (error: unknown) => {
      await thread.worker.terminate();
      throw error;
    });
    const request: TemplateThreadRequest = { id: (nextId += 1), content, values, file, path, options };
    return await new Promise<RecipeRenderResult>((resolve) => {
      const { worker } = thread;
      const finish = (result: RecipeRenderResult, keep: boolean) => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (keep) retire(thread);
        else void worker.terminate();
        resolve(result);
      };
      const onMessage = (reply: TemplateThreadReply) => {
        if (reply.id === request.id) finish(reply.result, true);
      };
      const onError = (error: unknown) => finish({ ok: false, error: endedMessage(file, heapMb, error) }, false);
      const onExit = (code: number) => finish({ ok: false, error: `${file}: template limit: rendering stopped (the rendering thread ended with code ${code})` }, false);
      const timer = setTimeout(() => finish({ ok: false, error: `${file}: template limit: rendering took longer than ${deadlineMs} ms (the limit for one template)` }, false), deadlineMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage(request);
    });
  } finally {
    release();
  }
}

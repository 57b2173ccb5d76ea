import { maxTemplateThreads, templateRenderDeadlineMs, templateThreadHeapMb } from '../contracts/limits/sources';
import type { TemplateRenderOptions } from '../domain/template-render';
import type { TemplateValue } from '../domain/template-values';
import type { RecipeRenderResult } from './recipe-render';
import { threadProgramPlace, WarmThreadPool, type ThreadEnd } from '../threads/warm-threads';

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

/** Rendering threads: one kept warm, up to {@link maxTemplateThreads} at once. */
const pool = new WarmThreadPool({
  place: threadProgramPlace(typeof __dirname === 'string' ? __dirname : undefined, 'template-thread', 'template-thread', 'the template thread entry'),
  maxThreads: maxTemplateThreads,
  keepWarm: 1,
  heapMb: templateThreadHeapMb,
});

/** Why a thread ended during a render, as the template-limit error of `file`. */
function endedMessage(file: string, deadlineMs: number, end: ThreadEnd): string {
  if (end.kind === 'deadline') return `${file}: template limit: rendering took longer than ${deadlineMs} ms (the limit for one template)`;
  if (end.kind === 'memory') return `${file}: template limit: rendering needed more than ${end.heapMb} MiB of memory (the limit for one template)`;
  if (end.kind === 'exit') return `${file}: template limit: rendering stopped (the rendering thread ended with code ${end.code})`;
  return `${file}: template limit: rendering stopped: ${end.error instanceof Error ? end.error.message : String(end.error)}`;
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
  const message: Omit<TemplateThreadRequest, 'id'> = { content, values, file, path, options };
  return pool.run<TemplateThreadReply, RecipeRenderResult>({
    message,
    deadlineMs,
    ...(limits.heapMb !== undefined ? { heapMb: limits.heapMb } : {}),
    answered: (reply) => ({ result: reply.result, keep: true }),
    ended: (end) => ({ ok: false, error: endedMessage(file, deadlineMs, end) }),
  });
}

import type { DelegateRequest } from '../contracts/delegation';
import type { ModelRoute } from '../contracts/model';

/**
 * What `fork: true` on `delegate` may be combined with (SEMANTICS §5 "Model routes", decision 0011). Pure.
 *
 * A fork continues the delegating agent's own conversation: the provider sees the same messages again,
 * followed by the fork's task, and can serve that prefix from its prompt cache. Everything that would
 * change the prefix or the route defeats the point and is refused with the reason, so the calling model
 * learns what to do instead.
 */

/** What the fork rules look at besides the request. */
export interface ForkContext {
  /** Whether there is a parent conversation to fork (an API-started delegation has none). */
  hasConversation: boolean;
  /** The delegating workflow's route, which the fork keeps (an MCP session has none, nor a conversation). */
  parentRoute?: ModelRoute;
  /** `ERRAND_SUBAGENT_PROVIDER` / `ERRAND_SUBAGENT_MODEL`. */
  override: { provider?: string; model?: string };
}

/** Why this `fork: true` request cannot start, or undefined when it can. */
export function forkRefusal(request: DelegateRequest, context: ForkContext): string | undefined {
  const parentRoute = context.parentRoute;
  if (!context.hasConversation || parentRoute === undefined) {
    return 'fork: true needs a conversation to fork: only the delegate tool of a running session or subagent can fork (a delegation started through the API or the CLI has no parent conversation)';
  }
  const route = `${parentRoute.provider}/${parentRoute.model}${parentRoute.reasoningEffort ? ` with reasoning effort ${parentRoute.reasoningEffort}` : ''}`;
  if (request.continuable) {
    return 'fork and continuable cannot be combined: a fork is one-shot (it answers once and ends); delegate without fork for a subagent you keep talking to with send_message';
  }
  const routeFields = (['provider', 'model', 'reasoning_effort'] as const).filter((field) => request[field] !== undefined);
  if (routeFields.length > 0) {
    return (
      `fork cannot be combined with ${routeFields.join(', ')}: a fork keeps your route (${route}), because a different provider, model ` +
      'or reasoning effort would not reuse the provider\'s prompt cache of the conversation it continues; leave them out, or delegate without fork'
    );
  }
  if (
    (context.override.provider !== undefined && context.override.provider !== parentRoute.provider) ||
    (context.override.model !== undefined && context.override.model !== parentRoute.model)
  ) {
    const forced = [context.override.provider, context.override.model].filter(Boolean).join('/');
    return `fork is not possible here: the operator routes every delegation to ${forced} (ERRAND_SUBAGENT_PROVIDER / ERRAND_SUBAGENT_MODEL), and a fork keeps your route (${route}); delegate without fork`;
  }
  if (request.source !== undefined) {
    return 'fork cannot be combined with source: a fork continues your own conversation and system prompt, and a source brings instructions of its own; delegate the source without fork, or write the task into instructions';
  }
  const promptFields = (['persona', 'context'] as const).filter((field) => request[field] !== undefined);
  if (promptFields.length > 0) {
    return `fork cannot be combined with ${promptFields.join(' or ')}: a fork keeps your system prompt unchanged (it is the start of the cached prefix); put what you wanted to say there into instructions, or delegate without fork`;
  }
  if (request.instructions === undefined) return 'fork needs instructions: the task the fork works on after your conversation so far';
  return undefined;
}

/**
 * The fork's route: the parent's provider, model and reasoning effort, unchanged. The temperature may be
 * set (it does not change the prompt), else the parent's applies.
 */
export function forkRoute(parentRoute: ModelRoute, temperature: number | undefined): ModelRoute {
  return temperature === undefined ? { ...parentRoute } : { ...parentRoute, temperature };
}

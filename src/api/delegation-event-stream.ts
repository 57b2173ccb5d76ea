import type { Context } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import { eventStreamKeepAliveMs, eventStreamRetryMs } from '../contracts/limits/api';
import { decodeCursor, encodeCursor, liveEvents, type LiveCursor } from '../domain/live-events';
import type { ApiEnv } from './api-env';
import type { DelegationService } from './delegation-service';
import type { EventStreamHub } from './event-stream-hub';
import { ApiProblem, isApiProblem, ProblemKind } from './problem';
import { createLogger } from '../observability/json-logger';

const log = createLogger('api');

/**
 * `GET /v1/delegations/{id}/events`: a server-sent event stream of what a delegation does. The server looks
 * at the delegation every `eventStreamPollMs` (describe, peek query, the pending model call's
 * heartbeat details) and sends what changed (`domain/live-events.ts`), then `settled` with the result when
 * the workflow has closed, and ends. Each look checks the tenant again, as every route does. The looks are
 * shared by every stream of the delegation, and a tenant's open streams are capped (event-stream-hub.ts).
 *
 * Bounded: the stream closes after `lifetimeMs` (the API's longest wait) and the client reconnects with
 * `Last-Event-ID`, whose value is a cursor of what it was told, so nothing is sent twice and nothing is
 * lost. Comment lines every {@link eventStreamKeepAliveMs} keep proxies from closing an idle stream.
 */

/** The event id of `settled`: a client that reconnects with it gets 204 (EventSource then stops reconnecting). */
export const settledEventId = 'settled';

/** Settings of one stream. */
export interface EventStreamOptions {
  delegations: DelegationService;
  /** The shared pollers and the per-tenant cap of this API process. */
  hub: EventStreamHub;
  tenant: string;
  id: string;
  lastEventId: string | undefined;
  /** How long the stream stays open before the client must reconnect, ms. */
  lifetimeMs: number;
}

/**
 * True when the request came through the Lambda adapter (`hono/aws-lambda` passes API Gateway's request
 * context as `c.env.requestContext`): API Gateway HTTP APIs buffer the whole response, so a stream would
 * arrive only when it ends.
 */
export function servedByLambda(c: Context<ApiEnv>): boolean {
  const env: unknown = c.env;
  return typeof env === 'object' && env !== null && 'requestContext' in env;
}

/** The answer of the event route where responses are buffered. */
export function eventStreamNotAvailable(id: string): ApiProblem {
  return new ApiProblem(501, ProblemKind.notAvailableHere, 'Event streams are not available on this deployment', {
    detail:
      `this API runs behind API Gateway + Lambda, which buffer responses, so an event stream cannot be delivered; poll GET /v1/delegations/${encodeURIComponent(id)} ` +
      'every second or so instead: its peek has the text the model is writing now as `partial`, and GET …/result?wait= waits for the end',
  });
}

/** Answers the event route: 404 for ids the tenant does not own, 204 after `settled`, otherwise the stream. */
export async function delegationEventStream(c: Context<ApiEnv>, options: EventStreamOptions): Promise<Response> {
  // Checked before the stream starts, so an unknown id is an ordinary 404 problem answer.
  await options.delegations.describeOwned(options.tenant, options.id);
  if (options.lastEventId === settledEventId) return c.body(null, 204);
  const told = decodeCursor(options.lastEventId);
  // Past the tenant's cap: a 429 problem answer, before the stream starts.
  const release = options.hub.reserve(options.tenant);
  try {
    return streamSSE(c, (stream) => follow(stream, options, told, release));
  } catch (error) {
    release();
    throw error;
  }
}

async function follow(stream: SSEStreamingApi, options: EventStreamOptions, told: LiveCursor | undefined, release: () => void): Promise<void> {
  const { hub, tenant, id } = options;
  const deadline = Date.now() + options.lifetimeMs;
  let cursor = told;
  let lastWrite = Date.now();
  const looks = hub.subscribe(tenant, id);
  // A client that goes away frees its slot and its share of the poller at once, not at the next look.
  stream.onAbort(() => {
    looks.close();
    release();
  });
  try {
    await stream.write(`retry: ${eventStreamRetryMs}\n\n`);
    while (!stream.aborted && !stream.closed) {
      const look = await looks.next();
      if (stream.aborted || stream.closed) return;
      if (look.kind === 'error') throw look.error;
      const live = liveEvents(cursor, look.observation);
      cursor = live.cursor;
      const eventId = encodeCursor(live.cursor);
      for (const [index, event] of live.events.entries()) {
        // Only the last event of a look carries the id: a client cut off inside a look resumes before it (nothing is lost).
        await stream.writeSSE({ event: event.event, data: JSON.stringify(event.data), ...(index === live.events.length - 1 ? { id: eventId } : {}) });
        lastWrite = Date.now();
      }
      if (look.settled !== undefined) {
        await stream.writeSSE({ event: 'settled', data: JSON.stringify(look.settled), id: settledEventId });
        return;
      }
      if (Date.now() >= deadline) {
        await stream.write(': the stream closes after its longest life; reconnect with Last-Event-ID to continue\n\n');
        return;
      }
      if (Date.now() - lastWrite >= eventStreamKeepAliveMs) {
        await stream.write(': keep-alive\n\n');
        lastWrite = Date.now();
      }
    }
  } catch (error) {
    if (stream.aborted || stream.closed) return;
    // The stream has started (200): a failure becomes an `error` event, and the client may reconnect.
    if (!isApiProblem(error)) log.warn('event stream stopped', { workflowId: id, error });
    const detail = isApiProblem(error) ? error.options.detail ?? error.title : 'the server could not look at the delegation; reconnect to try again';
    await stream.writeSSE({ event: 'error', data: JSON.stringify({ detail }) }).catch(() => undefined);
  } finally {
    looks.close();
    release();
  }
}

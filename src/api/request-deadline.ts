import type { Context } from 'hono';
import { mcpAnswerMarginMs } from '../contracts/limits';
import type { ApiEnv } from './api-env';
import { resolveWait } from './wait-duration';

/**
 * How long a request may still wait for a result. Under Node, the API's longest wait
 * (`ERRAND_API_MAX_WAIT_MS`); in a Lambda, also at most the function's remaining time less a margin for the
 * answer — measured when the wait begins, so what a start spent (the daily-cap hold, planning, the start
 * itself) comes off the wait, and the client gets "still running" rather than the gateway's timeout.
 */
export function remainingWaitMs(c: Context<ApiEnv>, maxWaitMs: number): { ms: number; cutByFunction: boolean } {
  const env: unknown = c.env;
  const lambdaContext = typeof env === 'object' && env !== null && 'lambdaContext' in env ? (env.lambdaContext as { getRemainingTimeInMillis?: () => number } | undefined) : undefined;
  const remaining = lambdaContext?.getRemainingTimeInMillis?.();
  if (remaining === undefined) return { ms: maxWaitMs, cutByFunction: false };
  const left = Math.max(0, remaining - mcpAnswerMarginMs);
  return left < maxWaitMs ? { ms: left, cutByFunction: true } : { ms: maxWaitMs, cutByFunction: false };
}

/**
 * A `?wait=` as this request can keep it: the server's cap (resolveWait) and, in a Lambda, the function's
 * remaining time; the notice (the Errand-Wait-Capped header) says which cut it.
 */
export function requestWait(c: Context<ApiEnv>, value: string | undefined, maxWaitMs: number): { ms: number; cappedNotice?: string } {
  const asked = resolveWait(value, maxWaitMs);
  const left = remainingWaitMs(c, maxWaitMs);
  if (!left.cutByFunction || left.ms >= asked.ms) return asked;
  return { ms: left.ms, cappedNotice: `waited at most ${left.ms} ms (what this function had left of its time limit, less ${mcpAnswerMarginMs} ms to answer), not the ${asked.ms} ms asked for` };
}

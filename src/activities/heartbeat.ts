import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type { LiveText } from '../contracts/live-text';
import { defaultLiveTextIntervalMs, heartbeatKeepAliveShare, heartbeatTickMs } from '../contracts/limits/workflow';
import type { InFlightCalls } from './in-flight-calls';

/**
 * How a worker's model and tool calls heartbeat (decision 0022). Every heartbeat that reaches Temporal is a
 * billable action on Temporal Cloud, so a call heartbeats only when it has something to say: new live text
 * at most once per `liveTextIntervalMs`, otherwise a keep-alive within its heartbeat timeout.
 */
export interface HeartbeatSettings {
  /** Least time between two heartbeats that carry new live text (`ERRAND_LIVE_TEXT_INTERVAL_MS`). */
  liveTextIntervalMs: number;
  /** This worker's running calls, which a workflow's cancel aborts at once (the in-flight sink); absent: none. */
  inFlight?: InFlightCalls;
}

/** The settings used where none are given (a test building activities by hand). */
export const defaultHeartbeatSettings: HeartbeatSettings = { liveTextIntervalMs: defaultLiveTextIntervalMs };

/** How long a call with nothing new to say waits before a keep-alive heartbeat (ms), from its heartbeat timeout. */
export function keepAliveIntervalMs(heartbeatTimeoutMs: number | undefined, liveTextIntervalMs: number): number {
  // Without a heartbeat timeout nothing waits for a keep-alive; one per live-text interval ×4 still reports progress.
  if (heartbeatTimeoutMs === undefined || heartbeatTimeoutMs <= 0) return liveTextIntervalMs * 4;
  return Math.max(heartbeatTickMs, Math.floor(heartbeatTimeoutMs * heartbeatKeepAliveShare));
}

/**
 * Decides, at each tick, whether a heartbeat is due: new text once the live-text interval has passed since
 * the last heartbeat, or anything once the keep-alive interval has. Pure, so the pacing is tested alone.
 */
export class HeartbeatPacer {
  private lastSentAt: number;
  private sentChars: number | undefined;

  constructor(private readonly liveTextIntervalMs: number, private readonly keepAliveMs: number, startedAt: number) {
    // The activity's start told Temporal it is alive: the first heartbeat is due one interval later.
    this.lastSentAt = startedAt;
  }

  /** Whether to heartbeat now with `live` (the text so far, if any); records the heartbeat when it says yes. */
  due(now: number, live: LiveText | undefined): boolean {
    const elapsed = now - this.lastSentAt;
    const fresh = live !== undefined && live.chars !== this.sentChars;
    if ((fresh && elapsed >= this.liveTextIntervalMs) || elapsed >= this.keepAliveMs) {
      this.lastSentAt = now;
      this.sentChars = live?.chars;
      return true;
    }
    return false;
  }
}

/**
 * Runs `work` while heartbeating, so a lost worker is noticed and a cancellation is delivered. `details`
 * (when given) is the text a model has written so far, which peek, the API and the Web UI show while the
 * call runs; it goes with a heartbeat only when it is new (and with keep-alives, so the shown text stays).
 * Heartbeat details cost no history, and losing them with a worker loses nothing: the final answer is
 * stored as always.
 *
 * A cancel reaches the call two ways: with the answer to a heartbeat (any worker), or at once through the
 * in-flight registry when the workflow's cancel handler ran on this worker. In the second case the work
 * is aborted first (the provider's request closes), then the call heartbeats until Temporal confirms the
 * cancellation, so it still ends as cancelled, with what the model had written.
 */
export async function withHeartbeat<T>(
  work: (signal: AbortSignal) => Promise<T>,
  settings: HeartbeatSettings = defaultHeartbeatSettings,
  details?: () => LiveText | undefined,
): Promise<T> {
  const context = Context.current();
  const { info } = context;
  // A local activity has no heartbeats (its workflow task is kept alive instead); cancellation still reaches it.
  if (info.isLocal) return cancelledAsFailure(() => work(context.cancellationSignal), context, details);
  const local = new AbortController();
  const signal = AbortSignal.any([context.cancellationSignal, local.signal]);
  const execution = info.workflowExecution;
  const unregister = execution && settings.inFlight
    ? settings.inFlight.register(execution, (reason) => local.abort(new CancelledFailure(reason)))
    : undefined;
  const pacer = new HeartbeatPacer(settings.liveTextIntervalMs, keepAliveIntervalMs(info.heartbeatTimeoutMs, settings.liveTextIntervalMs), Date.now());
  const timer = setInterval(() => {
    const live = details?.();
    if (pacer.due(Date.now(), live)) context.heartbeat(live);
  }, heartbeatTickMs);
  try {
    const result = await cancelledAsFailure(() => work(signal), context, details, () => confirmCancel(context, local.signal, details));
    // Aborted by its workflow's cancel, the work may still have ended normally (a killed command has an outcome):
    // it is not this call's outcome once Temporal confirms the cancellation.
    if (local.signal.aborted) {
      await confirmCancel(context, local.signal, details);
      if (context.cancellationSignal.aborted) throw cancelledFailure(details);
    }
    return result;
  } finally {
    clearInterval(timer);
    unregister?.();
  }
}

/** Runs `work`; an error after a cancellation becomes the CancelledFailure that carries the text so far. */
async function cancelledAsFailure<T>(work: () => Promise<T>, context: Context, details?: () => LiveText | undefined, beforeCheck?: () => Promise<void>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    await beforeCheck?.();
    if (context.cancellationSignal.aborted) throw cancelledFailure(details);
    throw error;
  }
}

/**
 * The text written so far goes with the cancellation, so a run cancelled mid-answer can report it as its
 * partial output (it is bounded: the last few KB).
 */
function cancelledFailure(details?: () => LiveText | undefined): CancelledFailure {
  const live = details?.();
  return live ? new CancelledFailure('cancelled while the model was writing', [live]) : new CancelledFailure('cancelled while running');
}

/**
 * After the in-flight registry aborted the work, heartbeats (the worker's throttle spaces them) until
 * Temporal answers one with the cancellation, at most for the keep-alive interval's worth of the heartbeat
 * timeout; an activity may end as cancelled only once Temporal asked for it.
 */
async function confirmCancel(context: Context, locallyAborted: AbortSignal, details?: () => LiveText | undefined): Promise<void> {
  if (!locallyAborted.aborted || context.cancellationSignal.aborted) return;
  const deadline = Date.now() + keepAliveIntervalMs(context.info.heartbeatTimeoutMs, heartbeatTickMs);
  while (!context.cancellationSignal.aborted && Date.now() < deadline) {
    context.heartbeat(details?.());
    await context.sleep(heartbeatTickMs).catch(() => undefined); // rejects when the cancellation arrives
  }
}

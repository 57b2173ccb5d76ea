import type { Client, WorkflowHandle } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';

/**
 * Profiling from a workflow's history: event counts by type, activity counts and time by activity type,
 * workflow task count and time. Used to explain a missed target with facts rather than guesses.
 */

/** What one history holds. */
export interface HistoryProfile {
  events: number;
  /** Event count by event type (attribute name without the `EventAttributes` suffix). */
  eventCounts: Record<string, number>;
  /** Activities scheduled, by activity type. */
  activityCounts: Record<string, number>;
  /** Milliseconds from scheduled to completed, summed by activity type. */
  activityMs: Record<string, number>;
  /** Milliseconds from scheduled to started (queueing), summed over all activities. */
  activityQueueMs: number;
  workflowTasks: number;
  /** Milliseconds from workflow task scheduled to completed, summed. */
  workflowTaskMs: number;
  /** Milliseconds from first to last event. */
  spanMs: number;
  /** Bytes of all payloads in the history (inputs, results, signals, updates, markers). */
  payloadBytes: number;
}

function numberOf(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'object' && value !== null && 'toNumber' in value && typeof value.toNumber === 'function') {
    const converted: unknown = value.toNumber();
    return typeof converted === 'number' ? converted : 0;
  }
  return Number(value ?? 0);
}

/** Long or number → number (the gRPC API returns int64 as Long). */
export function toNumber(value: unknown): number {
  return numberOf(value);
}

function eventKind(event: object): { kind: string; attributes: Record<string, unknown> } {
  for (const [key, value] of Object.entries(event)) {
    if (key.endsWith('EventAttributes') && value !== null && typeof value === 'object') {
      return { kind: key.slice(0, -'EventAttributes'.length), attributes: value as Record<string, unknown> };
    }
  }
  return { kind: 'unknown', attributes: {} };
}

/** A workflow's history as the client fetches it. */
export type WorkflowHistory = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;

/** The histories of the given workflows (latest runs), fetched once for every reader below. */
export async function fetchHistories(client: Client, workflowIds: readonly string[]): Promise<Map<string, WorkflowHistory>> {
  const histories = new Map<string, WorkflowHistory>();
  for (const workflowId of workflowIds) histories.set(workflowId, await client.workflow.getHandle(workflowId).fetchHistory());
  return histories;
}

/** The activity type named by an activityTaskScheduled event's attributes. */
function activityTypeName(attributes: Record<string, unknown>): string {
  const type = attributes.activityType;
  return typeof type === 'object' && type !== null && 'name' in type && typeof type.name === 'string' ? type.name : 'unknown';
}

/** Sums the bytes of every `data` field of every payload found anywhere under a value. */
function payloadBytesOf(value: unknown, depth = 0): number {
  if (depth > 12 || value === null || typeof value !== 'object') return 0;
  if (value instanceof Uint8Array) return 0;
  let total = 0;
  if ('data' in value && value.data instanceof Uint8Array && 'metadata' in value) total += value.data.length;
  for (const child of Object.values(value)) {
    if (child !== null && typeof child === 'object') total += payloadBytesOf(child, depth + 1);
  }
  return total;
}

/** Profiles the history of one run (latest run when `runId` is omitted). */
export async function profileHistory(client: Client, workflowId: string, runId?: string): Promise<HistoryProfile> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const events = history.events ?? [];
  const eventCounts: Record<string, number> = {};
  const activityCounts: Record<string, number> = {};
  const activityMs: Record<string, number> = {};
  const scheduled = new Map<number, { type: string; at: number }>();
  const taskScheduled = new Map<number, number>();
  let activityQueueMs = 0;
  let workflowTasks = 0;
  let workflowTaskMs = 0;
  let payloadBytes = 0;
  for (const event of events) {
    const { kind, attributes } = eventKind(event);
    eventCounts[kind] = (eventCounts[kind] ?? 0) + 1;
    payloadBytes += payloadBytesOf(attributes);
    const id = numberOf(event.eventId);
    const at = tsToMs(event.eventTime);
    if (kind === 'activityTaskScheduled') {
      const type = activityTypeName(attributes);
      activityCounts[type] = (activityCounts[type] ?? 0) + 1;
      scheduled.set(id, { type, at });
    } else if (kind === 'activityTaskStarted') {
      const origin = scheduled.get(numberOf(attributes.scheduledEventId));
      if (origin) activityQueueMs += at - origin.at;
    } else if (kind === 'activityTaskCompleted' || kind === 'activityTaskFailed' || kind === 'activityTaskTimedOut' || kind === 'activityTaskCanceled') {
      const origin = scheduled.get(numberOf(attributes.scheduledEventId));
      if (origin) activityMs[origin.type] = (activityMs[origin.type] ?? 0) + (at - origin.at);
    } else if (kind === 'workflowTaskScheduled') {
      taskScheduled.set(id, at);
    } else if (kind === 'workflowTaskCompleted') {
      workflowTasks += 1;
      const origin = taskScheduled.get(numberOf(attributes.scheduledEventId));
      if (origin !== undefined) workflowTaskMs += at - origin;
    }
  }
  const first = events[0];
  const last = events[events.length - 1];
  return {
    events: events.length,
    eventCounts,
    activityCounts,
    activityMs,
    activityQueueMs,
    workflowTasks,
    workflowTaskMs,
    spanMs: first && last ? tsToMs(last.eventTime) - tsToMs(first.eventTime) : 0,
    payloadBytes,
  };
}

/** Current history size in bytes and event count of a run, from describe (latest run when `runId` is omitted). */
export async function historySize(client: Client, workflowId: string, runId?: string): Promise<{ runId: string; bytes: number; events: number }> {
  const description = await client.workflow.getHandle(workflowId, runId).describe();
  const info = description.raw.workflowExecutionInfo;
  return { runId: description.runId, bytes: toNumber(info?.historySizeBytes), events: toNumber(info?.historyLength) };
}

/** "name×count" pairs, largest first, for notes. */
export function formatCounts(counts: Record<string, number>, divisor = 1): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([name, count]) => `${name} ${divisor === 1 ? count : (count / divisor).toFixed(2)}`)
    .join(', ');
}

/** Timeouts and retries across several workflows: what a recovery waited for. */
export function timeoutProfile(histories: Iterable<WorkflowHistory>): { workflowTaskTimeouts: number; workflowTaskTimeoutKinds: Record<string, number>; workflowTaskTimeoutSeconds: string[]; workflowTaskFailures: number; activityTimeouts: Record<string, number>; activityRetries: Record<string, number> } {
  let workflowTaskTimeouts = 0;
  let workflowTaskFailures = 0;
  const workflowTaskTimeoutKinds: Record<string, number> = {};
  const taskTimeouts = new Set<string>();
  const activityTimeouts: Record<string, number> = {};
  const activityRetries: Record<string, number> = {};
  for (const history of histories) {
    const types = new Map<number, string>();
    for (const event of history.events ?? []) {
      const { kind, attributes } = eventKind(event);
      if (kind === 'workflowTaskTimedOut') {
        workflowTaskTimeouts += 1;
        // 1 = start-to-close (the task was running on the lost worker), 2 = schedule-to-start (its sticky queue).
        const type = numberOf(attributes.timeoutType) === 2 ? 'schedule-to-start' : numberOf(attributes.timeoutType) === 1 ? 'start-to-close' : `type ${String(attributes.timeoutType)}`;
        workflowTaskTimeoutKinds[type] = (workflowTaskTimeoutKinds[type] ?? 0) + 1;
      }
      if (kind === 'workflowTaskFailed') workflowTaskFailures += 1;
      if (kind === 'workflowExecutionStarted') taskTimeouts.add(String(numberOf((attributes.workflowTaskTimeout as { seconds?: unknown } | undefined)?.seconds)));
      if (kind === 'activityTaskScheduled') types.set(numberOf(event.eventId), activityTypeName(attributes));
      if (kind === 'activityTaskStarted' && numberOf(attributes.attempt) > 1) {
        const type = types.get(numberOf(attributes.scheduledEventId)) ?? 'unknown';
        activityRetries[type] = (activityRetries[type] ?? 0) + 1;
      }
      if (kind === 'activityTaskTimedOut') {
        const type = types.get(numberOf(attributes.scheduledEventId)) ?? 'unknown';
        activityTimeouts[type] = (activityTimeouts[type] ?? 0) + 1;
      }
    }
  }
  return { workflowTaskTimeouts, workflowTaskTimeoutKinds, workflowTaskTimeoutSeconds: [...taskTimeouts], workflowTaskFailures, activityTimeouts, activityRetries };
}

/**
 * One workflow's events from `sinceMs` on, as "kind +seconds" (workflow task timeouts with their kind,
 * activity starts with their attempt): what a slow recovery waited for.
 */
export async function eventTimeline(client: Client, workflowId: string, sinceMs: number, maxEvents = 14): Promise<string> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const parts: string[] = [];
  for (const event of history.events ?? []) {
    const at = tsToMs(event.eventTime);
    if (at < sinceMs) continue;
    const { kind, attributes } = eventKind(event);
    let label = kind;
    if (kind === 'workflowTaskTimedOut') label += numberOf(attributes.timeoutType) === 2 ? '(schedule-to-start)' : '(start-to-close)';
    if (kind === 'activityTaskStarted') label += `(attempt ${numberOf(attributes.attempt)})`;
    parts.push(`${label} +${((at - sinceMs) / 1000).toFixed(2)}`);
    if (parts.length >= maxEvents) break;
  }
  return parts.join(', ');
}

/**
 * Per workflow: when the first activity of `activityType` completed at or after `sinceMs` (server event
 * time, ms), if one did — the moment an answer was back in the workflow's history.
 */
export function firstActivityCompletions(histories: ReadonlyMap<string, WorkflowHistory>, activityType: string, sinceMs: number): Map<string, number> {
  const completions = new Map<string, number>();
  for (const [workflowId, history] of histories) {
    const types = new Map<number, string>();
    for (const event of history.events ?? []) {
      const { kind, attributes } = eventKind(event);
      if (kind === 'activityTaskScheduled') types.set(numberOf(event.eventId), activityTypeName(attributes));
      if (kind !== 'activityTaskCompleted' || types.get(numberOf(attributes.scheduledEventId)) !== activityType) continue;
      const at = tsToMs(event.eventTime);
      if (at >= sinceMs) {
        completions.set(workflowId, at);
        break;
      }
    }
  }
  return completions;
}

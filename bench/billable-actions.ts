import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { toNumber, type WorkflowHistory } from './history-profile';

/**
 * Counting Temporal Cloud's billable actions (docs.temporal.io, "Temporal Cloud Actions") as the server
 * sees them, two ways: from history events, and from the dev server's Prometheus metrics.
 *
 * From history (per workflow run): a workflow started (client start, child start, continue-as-new); each
 * activity attempt (ActivityTaskStarted's `attempt` says how many there were); a timer started; a signal
 * received; an update accepted; a search-attribute upsert (but not the SDK's upsert of `TemporalChangeVersion`
 * when a workflow first meets a patch, which is exempt); and the local activities of one workflow task,
 * which bill as one action together. Not in history, so from the metrics: heartbeats that reached the
 * server (RecordActivityTaskHeartbeat requests) and queries (QueryWorkflow requests). The server's own
 * `action` counter is read too, as a cross-check.
 */

/** The search attribute the SDK upserts with the ids of the patches a workflow has met (not billed). */
const temporalChangeVersion = 'TemporalChangeVersion';

/** Billable actions by kind. */
export type ActionCounts = Record<string, number>;

/** Sum of the counts. */
export function totalActions(counts: ActionCounts): number {
  return Object.values(counts).reduce((sum, count) => sum + count, 0);
}

/** Adds `more` into `into`. */
export function addCounts(into: ActionCounts, more: ActionCounts): ActionCounts {
  for (const [kind, count] of Object.entries(more)) into[kind] = (into[kind] ?? 0) + count;
  return into;
}

/** The billable actions of one history, optionally only of events in [fromMs, toMs). */
export function historyActions(history: WorkflowHistory, fromMs = 0, toMs = Number.POSITIVE_INFINITY): ActionCounts {
  const counts: ActionCounts = {};
  const add = (kind: string, count = 1) => {
    counts[kind] = (counts[kind] ?? 0) + count;
  };
  const localActivityTasks = new Set<string>();
  for (const event of history.events ?? []) {
    const at = event.eventTime ? tsToMs(event.eventTime) : 0;
    if (at < fromMs || at >= toMs) continue;
    if (event.workflowExecutionStartedEventAttributes) add('workflow started');
    else if (event.activityTaskStartedEventAttributes) add('activity attempt', Math.max(1, toNumber(event.activityTaskStartedEventAttributes.attempt)));
    else if (event.timerStartedEventAttributes) add('timer');
    else if (event.workflowExecutionSignaledEventAttributes) add('signal');
    else if (event.workflowExecutionUpdateAcceptedEventAttributes) add('update');
    else if (event.upsertWorkflowSearchAttributesEventAttributes) {
      // The SDK's own upsert of TemporalChangeVersion at a patch's first use is not billed (Temporal Cloud's
      // pricing: the attribute "is exempt from action counting"); errand's own upserts are.
      const fields = Object.keys(event.upsertWorkflowSearchAttributesEventAttributes.searchAttributes?.indexedFields ?? {});
      if (fields.some((field) => field !== temporalChangeVersion)) add('search attributes');
    }
    else if (event.markerRecordedEventAttributes?.markerName === 'core_local_activity') {
      // All local activities of one workflow task are one action.
      const task = String(toNumber(event.markerRecordedEventAttributes.workflowTaskCompletedEventId));
      if (!localActivityTasks.has(task)) {
        localActivityTasks.add(task);
        add('local activities');
      }
    }
  }
  return counts;
}

/** Every run of `workflowId` (continue-as-new makes several), newest last. */
export async function allRunHistories(client: Client, workflowId: string): Promise<WorkflowHistory[]> {
  const runIds: string[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runIds.push(execution.runId);
  const latest = await client.workflow.getHandle(workflowId).describe();
  if (!runIds.includes(latest.runId)) runIds.push(latest.runId);
  return Promise.all(runIds.map((runId) => client.workflow.getHandle(workflowId, runId).fetchHistory()));
}

/** The billable actions in history of the given workflows (all their runs), in [fromMs, toMs). */
export async function workflowActions(client: Client, workflowIds: readonly string[], fromMs = 0, toMs = Number.POSITIVE_INFINITY): Promise<ActionCounts> {
  const counts: ActionCounts = {};
  for (const workflowId of workflowIds) {
    for (const history of await allRunHistories(client, workflowId)) addCounts(counts, historyActions(history, fromMs, toMs));
  }
  return counts;
}

/** One scrape of the server's metrics: value by series (`name{labels}`). */
export type MetricScrape = Map<string, number>;

/** Reads the dev server's Prometheus metrics. */
export async function scrapeMetrics(metricsUrl: string): Promise<MetricScrape> {
  const response = await fetch(metricsUrl);
  if (!response.ok) throw new Error(`metrics at ${metricsUrl} answered ${response.status}`);
  const scrape: MetricScrape = new Map();
  for (const line of (await response.text()).split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const cut = line.lastIndexOf(' ');
    const value = Number(line.slice(cut + 1));
    if (Number.isFinite(value)) scrape.set(line.slice(0, cut), value);
  }
  return scrape;
}

/** The increase of every series of `name` whose labels match all of `labels`, summed. */
export function metricDelta(before: MetricScrape, after: MetricScrape, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const [series, value] of after) {
    if (series !== name && !series.startsWith(`${name}{`)) continue;
    if (!Object.entries(labels).every(([key, wanted]) => series.includes(`${key}="${wanted}"`))) continue;
    sum += value - (before.get(series) ?? 0);
  }
  return sum;
}

/** What the metrics say happened between two scrapes: heartbeats, queries and the server's own action count. */
export function metricActions(before: MetricScrape, after: MetricScrape): { heartbeats: number; queries: number; serverActions: number } {
  return {
    // The frontend's count: the history service counts the same requests again as the frontend passes them on.
    heartbeats: metricDelta(before, after, 'service_requests', { operation: 'RecordActivityTaskHeartbeat', service_name: 'frontend' }),
    queries: metricDelta(before, after, 'service_requests', { operation: 'QueryWorkflow', service_name: 'frontend' }),
    serverActions: metricDelta(before, after, 'action'),
  };
}

/** The label sets of the `action` counter that moved between two scrapes (what the server counts, by type). */
export function actionSeries(before: MetricScrape, after: MetricScrape): string {
  const moved: string[] = [];
  for (const [series, value] of after) {
    if (!series.startsWith('action{')) continue;
    const delta = value - (before.get(series) ?? 0);
    if (delta > 0) moved.push(`${series.replace(/^action/, '')} +${delta}`);
  }
  return moved.join('; ') || 'none';
}

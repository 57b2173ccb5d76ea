import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { workflowAgentId } from '../src/contracts/workflow-ids';
import { addCounts, historyActions, type ActionCounts } from './billable-actions';
import { mapLimit } from './harness';
import { historySize, toNumber, type WorkflowHistory } from './history-profile';

/**
 * Reading a finished workflow run (SEMANTICS §7) back from Temporal for the bench: every run of its
 * continue-as-new chain, their history sizes, the script rounds it ran (activity `runWorkflowRound`) with
 * their times and journal sizes, and the billable actions of the run and of its agents' delegations.
 */

/** One run of a workflow run's continue-as-new chain. */
export interface RunOfChain {
  runId: string;
  history: WorkflowHistory;
  /** History size in bytes as the server counts it (describe's historySizeBytes). */
  bytes: number;
  events: number;
}

/**
 * Every run of the chain, first to last: it follows each run's closing continued-as-new event to the next
 * run id (no visibility query, so nothing depends on the index having caught up).
 */
export async function runChain(client: Client, workflowId: string, firstRunId: string): Promise<RunOfChain[]> {
  const chain: RunOfChain[] = [];
  let runId: string | undefined = firstRunId;
  while (runId !== undefined && chain.length < 1_000) {
    const history: WorkflowHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const size = await historySize(client, workflowId, runId);
    chain.push({ runId, history, bytes: size.bytes, events: size.events });
    const next: unknown = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    runId = typeof next === 'string' && next.length > 0 ? next : undefined;
  }
  return chain;
}

/** One script round: its activity's start-to-completion time and the journal's size when it ran. */
export interface RoundSample {
  /** Milliseconds from the activity's start (a worker took it) to its completion. */
  ms: number;
  /** Journal entries the round ran against (`journalSize` of its result). */
  journalSize: number;
}

/** The `runWorkflowRound` activities of the chain, in order, with their time and journal size. */
export function roundSamples(chain: readonly RunOfChain[]): RoundSample[] {
  const samples: RoundSample[] = [];
  for (const { history } of chain) {
    const rounds = new Set<string>();
    const started = new Map<string, number>();
    for (const event of history.events ?? []) {
      const id = String(toNumber(event.eventId));
      const at = event.eventTime ? tsToMs(event.eventTime) : 0;
      if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'runWorkflowRound') rounds.add(id);
      const start = event.activityTaskStartedEventAttributes;
      if (start && rounds.has(String(toNumber(start.scheduledEventId)))) started.set(String(toNumber(start.scheduledEventId)), at);
      const done = event.activityTaskCompletedEventAttributes;
      if (!done || !rounds.has(String(toNumber(done.scheduledEventId)))) continue;
      const startedAt = started.get(String(toNumber(done.scheduledEventId)));
      const data = done.result?.payloads?.[0]?.data;
      let journalSize = -1;
      if (data) {
        const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as { journalSize?: unknown };
        if (typeof parsed.journalSize === 'number') journalSize = parsed.journalSize;
      }
      if (startedAt !== undefined) samples.push({ ms: at - startedAt, journalSize });
    }
  }
  return samples;
}

/** Billable actions of the chain's own histories. */
export function chainActions(chain: readonly RunOfChain[]): ActionCounts {
  const counts: ActionCounts = {};
  for (const { history } of chain) addCounts(counts, historyActions(history));
  return counts;
}

/** The agents' delegations of a run (ids `<run id>~agent-<n>`, n = 1..agents): their actions, history sizes and first-to-last-event spans. */
export async function agentDelegations(client: Client, workflowId: string, agents: number): Promise<{ actions: ActionCounts; bytes: number[]; spansMs: number[] }> {
  const actions: ActionCounts = {};
  const spansMs: number[] = [];
  const bytes = await mapLimit(Array.from({ length: agents }, (_, index) => workflowAgentId(workflowId, index + 1)), 8, async (childId) => {
    const history = await client.workflow.getHandle(childId).fetchHistory();
    addCounts(actions, historyActions(history));
    const events = history.events ?? [];
    const first = events[0]?.eventTime;
    const last = events.at(-1)?.eventTime;
    if (first && last) spansMs.push(tsToMs(last) - tsToMs(first));
    return (await historySize(client, childId)).bytes;
  });
  return { actions, bytes, spansMs };
}

/** Activities of the chain by type: how many ran and their start-to-completion time in all (ms), and queueing (scheduled to started). */
export function activityTimes(chain: readonly RunOfChain[]): Record<string, { count: number; ms: number; queuedMs: number }> {
  const times: Record<string, { count: number; ms: number; queuedMs: number }> = {};
  for (const { history } of chain) {
    const scheduled = new Map<string, { type: string; at: number; startedAt?: number }>();
    for (const event of history.events ?? []) {
      const at = event.eventTime ? tsToMs(event.eventTime) : 0;
      const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
      if (type) scheduled.set(String(toNumber(event.eventId)), { type, at });
      const start = event.activityTaskStartedEventAttributes;
      const startOf = start ? scheduled.get(String(toNumber(start.scheduledEventId))) : undefined;
      if (startOf) startOf.startedAt = at;
      const done = event.activityTaskCompletedEventAttributes;
      const origin = done ? scheduled.get(String(toNumber(done.scheduledEventId))) : undefined;
      if (!origin || origin.startedAt === undefined) continue;
      const entry = (times[origin.type] ??= { count: 0, ms: 0, queuedMs: 0 });
      entry.count += 1;
      entry.ms += at - origin.startedAt;
      entry.queuedMs += origin.startedAt - origin.at;
    }
  }
  return times;
}

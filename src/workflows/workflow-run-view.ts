import type { WorkflowAgentState, WorkflowAgentView, WorkflowLabelView, WorkflowRunStatus, WorkflowRunView } from '../contracts/workflow-run';
import { workflowViewMaxAgents } from '../contracts/workflow-run';
import { workflowViewMaxLabels } from '../contracts/limits/workflow-scripts';
import type { WorkflowWaitingCount } from '../contracts/workflow-run-activities';
import type { WorkflowScriptDiagnostic } from '../contracts/workflow-script';
import type { JsonValue } from '../contracts/json';
import type { AgentReservation } from './workflow-run-caps';

/** One agent this run of the workflow started, as it tracks it. */
export interface AgentSlot {
  key: string;
  n: number;
  label: string | null;
  phase: string | null;
  workflowId: string;
  state: WorkflowAgentState;
  /** Whether its child workflow has started (a planned agent has not yet). */
  started: boolean;
  tokens: number;
  costMicroUsd: number;
  startedAt: number;
  endedAt: number | null;
  failure: { type: string; message: string } | null;
  /** What it holds of the run's token and cost caps while it runs (a run with such caps). */
  reserved?: AgentReservation;
}

/** The label an agent is counted under: its label, else its phase. */
export function labelKey(label: string | null, phase: string | null): string {
  return label ?? phase ?? '(no label)';
}

/**
 * Counts one queued request as no longer waiting (it starts): the round counted it under its label, or
 * under "(other labels)" past the view's number of labels.
 */
export function takeFromWaiting(waiting: WorkflowWaitingCount[], label: string | null, phase: string | null): void {
  const entry = waiting.find((count) => count.label === labelKey(label, phase)) ?? waiting.find((count) => count.label === '(other labels)');
  if (entry && entry.count > 0) entry.count -= 1;
}

/** Adds one finished agent to per-label totals (bounded: further labels go under one). */
export function addToLabels(labels: WorkflowLabelView[], slot: AgentSlot): void {
  let name = labelKey(slot.label, slot.phase);
  let entry = labels.find((candidate) => candidate.label === name);
  if (!entry && labels.length >= workflowViewMaxLabels) {
    name = '(other labels)';
    entry = labels.find((candidate) => candidate.label === name);
  }
  if (!entry) {
    entry = { label: name, waiting: 0, running: 0, done: 0, failed: 0, tokens: 0, costMicroUsd: 0 };
    labels.push(entry);
  }
  if (slot.state === 'done') entry.done += 1;
  else entry.failed += 1;
  entry.tokens += slot.tokens;
  entry.costMicroUsd += slot.costMicroUsd;
}

/** What the view is built from. */
export interface ViewState {
  id: string;
  scriptName: string;
  status: WorkflowRunStatus;
  phase: string | null;
  /** Finished agents' totals per label (earlier runs' and this one's). */
  labels: WorkflowLabelView[];
  waiting: WorkflowWaitingCount[];
  slots: Iterable<AgentSlot>;
  /** Agents the run has started, over all its runs (continue-as-new): the view lists some and counts the rest. */
  agentsStarted: number;
  tokens: number;
  costMicroUsd: number;
  elapsedMs: number;
  now: number;
  result?: JsonValue;
  diagnostic?: WorkflowScriptDiagnostic;
  logs: string[];
}

function agentView(slot: AgentSlot, now: number): WorkflowAgentView {
  return {
    key: slot.key,
    label: slot.label,
    phase: slot.phase,
    state: slot.state,
    delegationId: slot.started ? slot.workflowId : null,
    tokens: slot.tokens,
    costMicroUsd: slot.costMicroUsd,
    fromJournal: false,
    elapsedMs: (slot.endedAt ?? now) - slot.startedAt,
    failure: slot.failure,
  };
}

/** The run's view: per-label counts and the agents, running ones first, then the latest finished. */
export function buildView(state: ViewState): WorkflowRunView {
  const labels = state.labels.map((entry) => ({ ...entry, waiting: 0, running: 0 }));
  const find = (name: string) => {
    let entry = labels.find((candidate) => candidate.label === name);
    if (!entry) {
      entry = { label: name, waiting: 0, running: 0, done: 0, failed: 0, tokens: 0, costMicroUsd: 0 };
      labels.push(entry);
    }
    return entry;
  };
  const running: AgentSlot[] = [];
  const finished: AgentSlot[] = [];
  for (const slot of state.slots) (slot.state === 'running' || slot.state === 'waiting' ? running : finished).push(slot);
  for (const slot of running) find(labelKey(slot.label, slot.phase)).running += 1;
  for (const count of state.waiting) find(count.label).waiting += count.count;
  const listed = [...running, ...finished.slice(-Math.max(0, workflowViewMaxAgents - running.length))].slice(0, workflowViewMaxAgents);
  return {
    id: state.id,
    scriptName: state.scriptName,
    status: state.status,
    phase: state.phase,
    labels,
    agents: listed.map((slot) => agentView(slot, state.now)),
    // The slots are this run's (pruned as they are journaled): earlier runs' agents are counted, not listed.
    agentsOmitted: Math.max(running.length + finished.length, state.agentsStarted) - listed.length,
    tokens: state.tokens,
    costMicroUsd: state.costMicroUsd,
    elapsedMs: state.elapsedMs,
    ...(state.result !== undefined ? { result: state.result } : {}),
    ...(state.diagnostic ? { diagnostic: state.diagnostic } : {}),
    logs: state.logs,
  };
}

import { patched } from '@temporalio/workflow';
import { workflowAgentsBeforeContinueAsNew, workflowAgentsBeforeContinueAsNewUnpatched } from '../contracts/limits/workflow-scripts';
import type { WorkflowLabelView } from '../contracts/workflow-run';
import type { FinishedWorkflowAgent, RecordWorkflowAgentsOutput } from '../contracts/workflow-run-activities';
import { addToLabels, type AgentSlot } from './workflow-run-view';

/** Patch id of runs of the workflow that start up to 1,000 agents before they continue as new, not 200 (decision 0056). */
export const longerRunLinksPatch = 'workflow-run-longer-links';

/**
 * How many agents this run of the workflow starts before it continues as new. Asked once, when the run
 * starts, and kept for the whole run (see `quietWaits`): a run that started before the patch keeps its 200.
 */
export function agentsBeforeContinueAsNew(): number {
  return patched(longerRunLinksPatch) ? workflowAgentsBeforeContinueAsNew : workflowAgentsBeforeContinueAsNewUnpatched;
}

/** How a run's lanes stand, for its decisions to journal and to run a round. */
export interface Lanes {
  /** Agents planned or running. */
  running: number;
  /** Agents ended and not journaled yet. */
  finished: number;
  /** Requests known (from the last round) and not started. */
  queued: number;
  concurrency: number;
  /** This run of the workflow is due to continue as new: it starts no agent and runs no round. */
  dueToContinue: boolean;
}

/**
 * Whether the finished agents go into the journal now. They are journaled in batches: when a lane set's
 * worth have ended, when nothing runs, or when the queue runs low (a round follows to learn the requests
 * that depend on their results). Lanes never wait for it: a queued request starts as a lane frees.
 */
export function journalNow(lanes: Lanes): boolean {
  if (lanes.finished === 0) return false;
  return lanes.running === 0 || lanes.finished >= lanes.concurrency || roundWanted(lanes);
}

/** Whether new results call for a round: the queue has fewer requests than lanes, or nothing runs. */
export function roundWanted(lanes: Lanes): boolean {
  return !lanes.dueToContinue && (lanes.queued < lanes.concurrency || lanes.running === 0);
}

/**
 * Restarts a finished agent (the run's `restartAgent` update): its key goes to the journal's removals and
 * out of the slots, and an end still waiting for the journal is dropped (journaled after the removal, it
 * would stay). A running agent is refused.
 */
export function restartAgent(key: string, slots: Map<string, AgentSlot>, removals: string[], finished: FinishedWorkflowAgent[]): { restarted: boolean; message: string } {
  const slot = slots.get(key);
  if (slot && (slot.state === 'running' || slot.state === 'waiting')) return { restarted: false, message: `agent ${key} is running; it can be restarted once it has finished` };
  removals.push(key);
  slots.delete(key);
  const pending = finished.findIndex((entry) => entry.key === key);
  if (pending >= 0) finished.splice(pending, 1);
  return { restarted: true, message: `agent ${key} is dropped from the journal: its call runs again at the next round` };
}

/**
 * Takes journaled agents into the run's totals: each counts under its label, and journaled slots past the
 * view's needs go (the totals live on in `labels`); slots of agents not journaled yet (`finished`) stay, as a
 * guard against starting them twice. Answers how many were done and how many failed.
 */
export function takeInJournaled(entries: RecordWorkflowAgentsOutput['entries'], slots: Map<string, AgentSlot>, labels: WorkflowLabelView[], finished: readonly FinishedWorkflowAgent[]): { done: number; failed: number } {
  const counted = { done: 0, failed: 0 };
  for (const entry of entries) {
    const slot = slots.get(entry.key);
    if (entry.outcome === 'done') counted.done += 1;
    else counted.failed += 1;
    if (slot) addToLabels(labels, slot);
  }
  const unjournaled = new Set(finished.map((entry) => entry.key));
  for (const slot of [...slots.values()]) {
    if (slots.size <= 400) break;
    if (slot.state !== 'running' && slot.state !== 'waiting' && !unjournaled.has(slot.key)) slots.delete(slot.key);
  }
  return counted;
}

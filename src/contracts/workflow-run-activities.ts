/**
 * Signatures of the activities a workflow run schedules (SEMANTICS §7): one round of its script (with the
 * journal's update before it), the plans of a batch of agents, and the journal's update alone. JSON only, and small: the journal, the agents' requests and a
 * large result go by reference in errand's blob store, so a run's history does not grow with them.
 */
import type { PlanDelegationOutput } from './activities';
import type { WorkflowAgentSummary } from './workflow-run';
import type { JsonValue } from './json';
import type { WorkflowScriptDiagnostic } from './workflow-script';

/** Run one round of a script against the journal at `journalRef`. */
export interface RunWorkflowRoundInput {
  /** The script's text, given to the first round only; later rounds pass `scriptRef`. */
  script?: string;
  /** The script's text by reference (what an earlier round's output named). */
  scriptRef?: string;
  args: JsonValue;
  /** The journal (`null`: empty), by reference. */
  journalRef: string | null;
  /**
   * Ended agents to add to the journal and restarted keys to drop from it before the round runs (decision 0048):
   * the journal write a round needs goes in the round's activity rather than one of its own.
   */
  record?: { add: FinishedWorkflowAgent[]; remove: string[] };
  /** The agent definitions this run has read so far (`null`: none yet), by reference. */
  definitionsRef: string | null;
  /** Keys of the agents running now: the round leaves them out of `requests` and `waiting`. */
  running: string[];
  /**
   * How many requests the round returns at most: all the agents it waits on that are not running, up to
   * what this run of the workflow may still start (its agent limit, continue-as-new). The run queues them
   * and starts the next as a lane frees, so the round need not run again until the queue runs low.
   */
  take: number;
  /** `agent()` calls the run may make (the sandbox refuses the one past it). */
  maxAgents: number;
  budgetTokens: number | null;
  workingDir: string;
  tenant?: string;
}

export type { WorkflowAgentSummary } from './workflow-run';

/** Agents waiting (not running, `requests` included), counted by label or phase. */
export interface WorkflowWaitingCount {
  label: string;
  count: number;
}

/** What every round answers besides its outcome. */
export interface RoundCommon {
  /** The script's text by reference, for the next rounds. */
  scriptRef: string;
  /** Entries in the journal the round ran against. */
  journalSize: number;
  /** What the round put into the journal first (its input's `record`): the new journal and each added agent's outcome. */
  recorded?: Pick<RecordWorkflowAgentsOutput, 'journalRef' | 'entries'>;
}

/** What a round comes to. */
export type RunWorkflowRoundOutput = RoundCommon &
  (
  | {
      status: 'waiting';
      requests: WorkflowAgentSummary[];
      waiting: WorkflowWaitingCount[];
      /** Agents waiting in all (not running), `requests` included. */
      waitingTotal: number;
      definitionsRef: string | null;
      logs: string[];
    }
  | { status: 'done'; result?: JsonValue; resultRef?: string; logs: string[] }
  | { status: 'failed'; diagnostic: WorkflowScriptDiagnostic; logs: string[] }
  );

/** Plan the delegations of agents of a run: each stored request becomes a child input. */
export interface PlanWorkflowAgentsInput {
  /** The agents' keys, in the order they are to start. */
  keys: string[];
  /** The run's workflow id. */
  runId: string;
  workingDir: string;
  tenant?: string;
  remainingTokens?: number;
  remainingTimeMs?: number;
  remainingCostMicroUsd?: number;
}

/**
 * The plans of the first keys asked, in their order: all of them, or as many as keep the answer under
 * `workflowPlanBatchMaxChars` (at least one); the run asks for the others again.
 */
export interface PlanWorkflowAgentsOutput {
  plans: PlanDelegationOutput[];
}

/** One finished agent, for the journal: its child's result is read from Temporal, or the failure given. */
export type FinishedWorkflowAgent =
  | { key: string; workflowId: string }
  | { key: string; failure: { type: string; message: string } };

/** Add finished agents to a journal and drop restarted keys; the new journal's reference comes back. */
export interface RecordWorkflowAgentsInput {
  journalRef: string | null;
  add: FinishedWorkflowAgent[];
  remove: string[];
  /** Drop the failed entries too (a run resumed from an ended one runs its failed agents again). */
  dropFailed?: boolean;
}

/** How each added agent went into the journal. */
export interface RecordWorkflowAgentsOutput {
  journalRef: string;
  /** Entries in the journal now. */
  size: number;
  entries: { key: string; outcome: 'done' | 'failed'; tokens: number; failure?: { type: string; message: string } }[];
}

/** The activities of a workflow run. */
export interface WorkflowRunActivities {
  runWorkflowRound(input: RunWorkflowRoundInput): Promise<RunWorkflowRoundOutput>;
  planWorkflowAgents(input: PlanWorkflowAgentsInput): Promise<PlanWorkflowAgentsOutput>;
  recordWorkflowAgents(input: RecordWorkflowAgentsInput): Promise<RecordWorkflowAgentsOutput>;
}

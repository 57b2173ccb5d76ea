/**
 * Wire types of a workflow run (SEMANTICS §7): the Temporal workflow that runs a workflow script, its
 * messages and the view its query answers. JSON only. The workflow is src/workflows/workflow-run.ts; the
 * API, the CLI and the MCP/session `run_workflow` tool speak these types.
 */
import type { JsonValue } from './json.js';
import type { WorkflowScriptDiagnostic } from './workflow-script.js';

/** One agent a round waits on, as the workflow needs it: the request itself is stored under its key. */
export interface WorkflowAgentSummary {
  key: string;
  label: string | null;
  phase: string | null;
}

/** The Temporal workflow type of a workflow run. */
export const workflowRunWorkflowType = 'workflowRunWorkflow';

/**
 * Memo key of a run's start facts (a JSON string: `inputKey`, the run's input by content in errand's store;
 * a resume of the ended run reads the input from there, decision 0039).
 */
export const workflowRunMemoKey = 'errandWorkflowRun';

/** Names of the run's messages (queries, signals, updates). */
export const workflowRunMessageNames = {
  /** Query: {@link WorkflowRunView}. */
  viewQuery: 'workflowView',
  /** Signal: no new agent starts; running ones finish. */
  pauseSignal: 'workflowPause',
  /** Signal: agents start again. */
  resumeSignal: 'workflowResume',
  /** Signal ({@link WorkflowRunCancelInput}): cancels every running agent and ends the run `cancelled`. */
  cancelSignal: 'cancel',
  /** Update ({@link WorkflowRestartAgentInput}): drops one key from the journal so its call runs again. */
  restartAgentUpdate: 'workflowRestartAgent',
} as const;

/** Where a run's script comes from: inline text, or a workflow source by name (`.claude/workflows/<name>.js`). */
export type WorkflowScriptRef = { kind: 'inline'; text: string; name?: string } | { kind: 'source'; name: string };

/** Caps of a whole run: they cover every agent it starts. */
export interface WorkflowRunCaps {
  tokenBudget?: number;
  timeBudgetMs?: number;
  costBudgetMicroUsd?: number;
}

/** Input of a workflow run. */
export interface WorkflowRunInput {
  /** The script's text as resolved when the run was started (a source's content, read once). */
  script: string;
  /** Where it came from, for the view and the Web UI summary. */
  scriptName: string;
  /** The value the script reads as `args` (`null` when none was given). */
  args: JsonValue;
  workingDir: string;
  tenant?: string;
  caps: WorkflowRunCaps;
  /** Agents running at once (default and ceiling: ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS). */
  concurrency: number;
  /** `agent()` calls the run may make (default ERRAND_WORKFLOW_MAX_AGENTS). */
  maxAgents: number;
  /** Who started it (`api`, `cli`, a session id): search attribute and summary. */
  startedBy: string;
  /**
   * The journal of an earlier run to start from (a `resume` of an ended run, or the run's own journal
   * carried across continue-as-new): a reference in errand's store, never the entries themselves.
   */
  journalRef?: string;
  /** What the run carries across continue-as-new besides the journal (counts, spend, paused). */
  carried?: WorkflowRunCarried;
}

/** State a run carries across continue-as-new (the journal goes by reference). */
export interface WorkflowRunCarried {
  startedAtMs: number;
  paused: boolean;
  tokens: number;
  costMicroUsd: number;
  /** `agent()` calls started so far, counted against maxAgents. */
  agentsStarted: number;
  /** The agent definitions the run has read, by reference (read once per run, kept across continue-as-new). */
  definitionsRef?: string | null;
  /** The script's text by reference in errand's store (stored by the first round). */
  scriptRef?: string;
  /** Agents finished in earlier runs of this workflow (before continue-as-new), and those found in the journal at the start. */
  agentsDone?: number;
  agentsFailed?: number;
  fromJournal?: number;
  /** Per label, what earlier runs of this workflow finished (the view adds the current run's). */
  labels?: WorkflowLabelView[];
  /** Runs of this workflow so far (continue-as-new count). */
  generation?: number;
  /**
   * The first requests the last round named that had not started (at most two lane sets): the next run starts
   * them at once, while its first round runs (decision 0048). Absent in an earlier build's input.
   */
  queue?: WorkflowAgentSummary[];
}

/** Input of the cancel signal. */
export interface WorkflowRunCancelInput {
  reason?: string;
}

/** Input of the restart update. */
export interface WorkflowRestartAgentInput {
  key: string;
}

/** How one agent of a run stands. */
export type WorkflowAgentState = 'waiting' | 'running' | 'done' | 'failed' | 'cancelled';

/** One agent of a run, as the view shows it. */
export interface WorkflowAgentView {
  key: string;
  label: string | null;
  phase: string | null;
  state: WorkflowAgentState;
  /** The agent's delegation (child workflow id) once started. */
  delegationId: string | null;
  tokens: number;
  costMicroUsd: number;
  /** From the journal: finished in an earlier run and not run again. */
  fromJournal: boolean;
  elapsedMs: number | null;
  failure: { type: string; message: string } | null;
}

/** Counts per label (or phase, for calls without a label). */
export interface WorkflowLabelView {
  label: string;
  waiting: number;
  running: number;
  done: number;
  failed: number;
  tokens: number;
  costMicroUsd: number;
}

/** How a run ended. `budget`: a run-level cap was crossed. */
export type WorkflowRunStatus = 'running' | 'paused' | 'completed' | 'failed' | 'cancelled' | 'budget';

/** What the view query answers (and, when the run has ended, its result). */
export interface WorkflowRunView {
  id: string;
  scriptName: string;
  status: WorkflowRunStatus;
  phase: string | null;
  labels: WorkflowLabelView[];
  /** The agents of the current round and the finished ones (at most {@link workflowViewMaxAgents}; `agentsOmitted` counts the rest). */
  agents: WorkflowAgentView[];
  agentsOmitted: number;
  tokens: number;
  costMicroUsd: number;
  elapsedMs: number;
  /** Present once the script returned. */
  result?: JsonValue;
  /** Present when the run ended `failed` because of the script (or `budget`, naming the cap). */
  diagnostic?: WorkflowScriptDiagnostic;
  logs: string[];
}

/** Agents a view lists one by one; the rest are counted. */
export const workflowViewMaxAgents = 200;

/** What a run returns when it ends (its workflow result). */
export interface WorkflowRunResult {
  status: Exclude<WorkflowRunStatus, 'running' | 'paused'>;
  result?: JsonValue;
  diagnostic?: WorkflowScriptDiagnostic;
  tokens: number;
  costMicroUsd: number;
  agents: { done: number; failed: number; fromJournal: number };
  /** The journal at the end, by reference: `resume` of this run starts from it. */
  journalRef: string;
  /** A result too large for the workflow's history: its JSON in errand's store (then `result` is absent). */
  resultRef?: string;
}

/**
 * Wire types of one round of a workflow script (SEMANTICS §7): what the activity that runs the script
 * receives and returns. JSON only: the workflow stores these in its history and replays them.
 */
import type { JsonObject, JsonValue } from './json.js';
import { workflowMaxAgents, workflowMaxItems, workflowScriptMemoryBytes, workflowScriptRoundMs, workflowScriptSteps } from './limits.js';

/** What the journal holds for one `agent()` call, under its content key (src/domain/workflow-journal.ts). */
export type WorkflowJournalEntry =
  | { outcome: 'done'; result: JsonValue; tokens: number }
  | { outcome: 'failed'; failure: { type: string; message: string } };

/** Finished agents by content key. */
export type WorkflowJournal = Record<string, WorkflowJournalEntry>;

/** The sandbox's limits for one round; defaults in limits.ts (`workflowScript*`). */
export interface WorkflowScriptLimits {
  /** Bytes the script's heap may hold. */
  memoryBytes: number;
  /** Interrupt checks the engine may pass (about ten thousand bytecode operations each) before the round ends. */
  steps: number;
  /** Wall-clock time the round may take (ms), checked with the steps. */
  roundMs: number;
  /** `agent()` calls one run may make. */
  agents: number;
  /** Items one `parallel` or `pipeline` call may take. */
  items: number;
}

/** Input of one round: the script runs from its start against the journal. */
export interface WorkflowScriptRoundInput {
  /** The script's source text, as its author wrote it. */
  script: string;
  /** The value the script reads as `args` (`null` when none was given). */
  args: JsonValue;
  /** Results of the agents that finished so far. */
  journal: WorkflowJournal;
  /**
   * Contents of the agent definitions the script names (`agent: 'name'`), by name; `null` for a name that
   * has no definition. A name missing here makes the round ask for it (`definitionsNeeded`).
   */
  agentDefinitions: Record<string, string | null>;
  /** The run's token target that `budget.total` shows (`null`: none). */
  budgetTokens: number | null;
  limits: WorkflowScriptLimits;
}

/** One `agent()` call whose result is not in the journal yet. */
export interface WorkflowAgentRequest {
  key: string;
  prompt: string;
  /** The call's options as the script gave them (label, schema, model, agentType, ...). */
  options: JsonObject;
  /** The phase the script was in (`phase(title)`) when it made the call, or the call's own `phase`. */
  phase: string | null;
}

/** Why a script ended failed: `line` is the script's own line number when the engine knows it. */
export interface WorkflowScriptDiagnostic {
  /** `budget` and `agents`: not the script's doing but the run's caps (a run-level cap, its `maxAgents`). */
  kind: 'syntax' | 'unsupported' | 'steps' | 'time' | 'memory' | 'error' | 'stalled' | 'budget' | 'agents';
  message: string;
  line: number | null;
}

/** Output of one round. */
export type WorkflowScriptRoundOutput =
  | { status: 'waiting'; requests: WorkflowAgentRequest[]; definitionsNeeded: string[]; logs: string[] }
  | { status: 'done'; result: JsonValue; logs: string[] }
  | { status: 'failed'; diagnostic: WorkflowScriptDiagnostic; logs: string[] };

/** The sandbox limits errand uses unless a run asks for lower ones. */
export const defaultWorkflowScriptLimits: WorkflowScriptLimits = {
  memoryBytes: workflowScriptMemoryBytes,
  steps: workflowScriptSteps,
  roundMs: workflowScriptRoundMs,
  agents: workflowMaxAgents,
  items: workflowMaxItems,
};

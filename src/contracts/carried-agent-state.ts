import type { MessageRef } from './agent-wire';
import type { TokenUsage } from './model';
import type { TaskState } from './subagent-state';
import type { SubagentPeek, SubagentResult } from './subagent-result';
export type { TaskState } from './subagent-state';

/**
 * The parts of an agent's state (`AgentState`, agent-state.ts) that have types of their own: task
 * records, queued notices and messages, attempts, structured-output progress and transcript entries. JSON only.
 */

/** One delegation a workflow started, as it tracks it. JSON only (carried across continue-as-new). */
export interface TaskRecord {
  taskId: string;
  workflowId: string;
  description: string;
  mode: 'foreground' | 'background' | 'continuable';
  /** `workflow`: a workflow run the `run_workflow` tool started (its result is a run's, read as a task's). Absent: a delegation. */
  kind?: 'workflow';
  state: TaskState;
  startedAt: number;
  /** When its last run (or activation) settled. */
  settledAt?: number;
  /** When its final result was first read (by `load`, a foreground wait or a notice); the TTL counts from here. */
  readAt?: number;
  peek?: SubagentPeek;
  /** The last settled result; carried records hold previews and a blob reference, never whole outputs. */
  result?: SubagentResult;
  totalUsage: TokenUsage;
  /**
   * Its calls under `ask` are decided by a person only, though this workflow's model may decide others'
   * (an agent file's `permissionMode: auto`): its approvals are not announced to the model.
   */
  approvalsByPersonOnly?: true;
  /**
   * What it holds of this workflow's caps while it is live (its own caps, set when it started): the
   * children of one parent may be given together no more than the parent has left (decision 0027).
   */
  reserved?: ChildReservation;
}

/** A live child's share of its parent's token and cost caps (absent where the parent has no such cap). */
export interface ChildReservation {
  tokens?: number;
  costMicroUsd?: number;
}

/** A notice waiting to be put into the conversation before the next model call. */
export interface PendingNotice {
  text: string;
  /** The task it is about; its result counts as read once the notice is in the conversation. */
  taskId?: string;
  /** The task's full output by reference, appended after `text` when the inline output was cut. */
  outputRef?: MessageRef;
  /** Text after the referenced output (the end of its fence); its presence marks the output as the task's words. */
  after?: string;
  /** Its number once an MCP client was offered it: it stays until the client's call that got it is acknowledged. */
  number?: number;
}

/**
 * One attempt of a recipe's `retry`: each starts a fresh conversation (system prompt and task), stored
 * under its own conversation id, so the conversation stays valid and history per attempt stays flat.
 */
export interface AttemptState {
  /** 1 for the first run, 2 for the first retry, and so on. */
  number: number;
  /** Messages in earlier attempts' conversations: keeps approval ids (`<workflow>:<message>:<call>`) unique across attempts. */
  messageBase: number;
}

/** Where a structured-output run stands (SEMANTICS §5: `final_output`). */
export interface FinalOutputState {
  /** Blob key of the output schema (stored once at the start, so model calls carry a key, not the schema). */
  schemaKey: string;
  /** Invalid `final_output` calls in this run. */
  invalidCalls: number;
  /** Whether this run got its reminder after a plain answer. */
  reminded: boolean;
  /** The last validation errors, for the diagnostic. */
  lastErrors?: string[];
}

/** One entry of the bounded transcript a session or continuable subagent keeps for queries. */
export interface TranscriptEntry {
  /** `event`: something errand did (a compaction, a failed run), not a message. */
  role: 'user' | 'assistant' | 'notice' | 'event';
  text: string;
  at: number;
}

/** A message accepted by a session or continuable subagent, waiting for its turn. */
export interface QueuedMessage {
  text?: string;
  key?: string;
  /** Short preview for the transcript and the Web UI. */
  preview: string;
}

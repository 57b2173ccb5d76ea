import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { TokenUsage } from './model';
import type { SubagentState } from './subagent-state';
import type { TranscriptEntry } from './carried-agent-state';
import type { SubagentPeek, SubagentResult } from './subagent-result';
import { messageNames, peekQueryName } from './wire-names';
export type { PendingApproval } from './subagent-state';

/**
 * The queries, signals and updates of a session or subagent workflow, with their inputs and answers. Kept
 * apart from the workflow's input and state types so a client that only sends messages needs no more.
 */

/** Input of the cancel signal. */
export interface CancelInput {
  reason?: string;
}

/** Peek at a subagent: state, counters, last tool call and text. Never blocks. */
export const peekQuery = defineQuery<SubagentPeek>(peekQueryName);
/** Ask a subagent to stop: in-flight model and tool calls are cancelled, the run ends `cancelled`. */
export const cancelSignal = defineSignal<[CancelInput]>(messageNames.cancelSignal);
/**
 * Ask a waiting session or continuable to continue as new at once, so it runs on the current code from its
 * next run: the way out for runs that started before a behaviour that is decided once per run (decision
 * 0021's quiet waits) — docs/deploy.md's upgrade step sends it to every running one. A run that is busy
 * continues as new at its next safe point. Carries nothing.
 */
export const refreshSignal = defineSignal<[]>('errandRefresh');

/** Progress a child reports to its parent as its turns start (so peeking the parent never blocks); see {@link childProgressSignal}. */
export interface ChildProgressInput {
  taskId: string;
  peek: SubagentPeek;
  /** Tokens used by the child and all its descendants so far. */
  totalUsage: TokenUsage;
}

/** A child's settlement: one finished run (or turn-run of a continuable subagent). */
export interface ChildSettledInput {
  taskId: string;
  result: SubagentResult;
  /** True when the child has ended for good; false when a continuable child waits for more messages. */
  final: boolean;
  /** Tokens used by the child and all its descendants so far. */
  totalUsage: TokenUsage;
}

/**
 * Sent by a child to its parent as a turn starts, at most once per `childProgressIntervalMs` (limits.ts) unless
 * its state, pending approvals or recipe check step changed, or it settled since its last report.
 */
export const childProgressSignal = defineSignal<[ChildProgressInput]>('childProgress');
/** Sent by a child to its parent when a run ends (and after each answer of a continuable child). */
export const childSettledSignal = defineSignal<[ChildSettledInput]>('childSettled');

/** Input of the sendMessage update: the next user turn of a continuable subagent (or a session). */
export interface SendMessageInput {
  /** The message text. Give it inline or by reference (`messageKey`), not both. */
  message?: string;
  /** Blob key of a stored message text (the caller stored it), so the body does not pass through history. */
  messageKey?: string;
  /** Characters of the referenced message (checked against the message limit by the validator). */
  messageChars?: number;
  /** Idempotency id: a message with an id that was already accepted is not queued again (also across continue-as-new). */
  messageId?: string;
  /** Who sent it (for the transcript): `api:<tenant>`, `parent`, `cli`. */
  from?: string;
}

/** Answer of the sendMessage update once the workflow has durably accepted the message. */
export interface SendMessageResult {
  accepted: true;
  /** Messages waiting for a turn, this one included (0 when it started a turn at once). */
  queuedTurns: number;
  /** True when a message with the same `messageId` had already been accepted (not queued again). */
  duplicate?: boolean;
}

/**
 * Give a continuable subagent (or a session) its next message. An update, not a signal, because the caller
 * must know it was accepted: the validator rejects it when the subagent is not continuable or has ended.
 */
export const sendMessageUpdate = defineUpdate<SendMessageResult, [SendMessageInput]>(messageNames.sendMessageUpdate);

/** What the transcript query returns. */
export interface TranscriptView {
  state: SubagentState;
  entries: TranscriptEntry[];
  queuedMessages: number;
}

/** The bounded transcript of a session or continuable subagent. */
export const transcriptQuery = defineQuery<TranscriptView>(messageNames.transcriptQuery);

/** Input of the approval update. */
export interface ApprovalInput {
  approvalId: string;
  decision: 'approve' | 'deny';
  reason?: string;
  /** Who decides (set by the API from the caller's tenant). */
  by?: string;
}

/** What an accepted approval answers. */
export interface ApprovalAccepted {
  accepted: true;
}

/** Approve or deny a pending tool call. Rejected at once when no such approval is pending. */
export const approvalUpdate = defineUpdate<ApprovalAccepted, [ApprovalInput]>(messageNames.approvalUpdate);

import type { MessageInput } from '../contracts/activities';
import type { ContextWindowState } from '../contracts/agent-wire';
import type { AgentState, AgentStateView } from '../contracts/agent-state';
import { previewLength } from '../contracts/limits/workflow';
import { addUsage, type TokenUsage } from '../contracts/model';
import type { ToolCallSummary } from '../contracts/subagent-result';
import { preview } from './subagent-prompt';
import { expireTasks, retireUsage } from './task-registry';

/*
 * The agent's ledger (decision 0040): the conversation's length and what waits to be stored, turns, tool
 * calls and usage — its own, its tasks' and that of task records that expired. Pure functions over
 * AgentState: each returns the next state.
 */

/** A model turn starts: one more turn in the workflow's life and in this run. */
export function beginTurn(state: AgentState): AgentState {
  return { ...state, turns: state.turns + 1, runTurns: state.runTurns + 1 };
}

/** What a model call answered, as the ledger keeps it. */
export interface AnswerEntry {
  text: string;
  textTruncated: boolean;
  usage: TokenUsage;
}

/** The answer of a model call stored at the next sequence number, at `now`. */
export function recordAnswer(state: AgentState, answer: AnswerEntry, now: number): AgentState {
  const seq = state.length;
  const next: AgentState = { ...state, length: seq + 1, lastActivityAt: now, usage: addUsage(state.usage, answer.usage) };
  return answer.text.length > 0 ? withLastText(next, seq, answer.text, answer.textTruncated) : next;
}

/** The text stored at `seq` is the last answer (`text` cut at the inline limit when `truncated`). */
export function withLastText(state: AgentState, seq: number, text: string, truncated: boolean): AgentState {
  return { ...state, lastAssistantText: preview(text, previewLength), lastText: { seq, text, truncated } };
}

/** Tool calls of the current turn take the next sequence numbers for their results. */
export function recordToolCalls(state: AgentState, calls: readonly Pick<ToolCallSummary, 'name' | 'argumentsPreview'>[]): AgentState {
  const last = calls[calls.length - 1];
  return {
    ...state,
    length: state.length + calls.length,
    toolCalls: state.toolCalls + calls.length,
    ...(last ? { lastToolCall: { name: last.name, argumentsPreview: last.argumentsPreview, turn: state.turns } } : {}),
  };
}

/** A tool call whose result is not stored in the conversation (an MCP client's call): the counters only. */
export function countToolCall(state: AgentState, call: Pick<ToolCallSummary, 'name' | 'argumentsPreview'>): AgentState {
  return { ...state, toolCalls: state.toolCalls + 1, lastToolCall: { name: call.name, argumentsPreview: call.argumentsPreview, turn: state.turns } };
}

/** `count` messages were stored (or their sequence numbers taken) at the end of the conversation. */
export function appended(state: AgentState, count: number): AgentState {
  return { ...state, length: state.length + count };
}

/** Messages the next model call stores: their sequence numbers are taken now. */
export function appendBeforeNextTurn(state: AgentState, messages: readonly MessageInput[]): AgentState {
  if (messages.length === 0) return state;
  const pending = state.pending ?? { startSeq: state.length, messages: [] };
  return { ...state, pending: { startSeq: pending.startSeq, messages: [...pending.messages, ...messages] }, length: state.length + messages.length };
}

/** The pending messages that start at `startSeq` were stored (by a model call or on their own). */
export function pendingStored(state: AgentState, startSeq: number): AgentState {
  if (!state.pending || state.pending.startSeq !== startSeq) return state;
  const { pending: _pending, ...rest } = state;
  return rest;
}

/** Usage of a model call that was not a turn (a compaction). */
export function spend(state: AgentState, usage: TokenUsage): AgentState {
  return { ...state, usage: addUsage(state.usage, usage) };
}

/** The conversation was compacted: its new window. */
export function compacted(state: AgentState, context: ContextWindowState): AgentState {
  return { ...state, context };
}

/**
 * Drops task records whose result was read longer than `ttlMs` ago (and the oldest beyond `maxRecords`);
 * their usage moves to the ledger of retired usage, so it stays in the total.
 */
export function pruneTasks(state: AgentState, now: number, ttlMs: number, maxRecords: number): AgentState {
  const { tasks, dropped } = expireTasks(state, now, ttlMs, maxRecords);
  if (dropped.length === 0) return state;
  return { ...state, tasks, retiredUsage: retireUsage(state.retiredUsage, dropped) };
}

/**
 * Tokens used by the agent and all its descendants. `withRetired`: with those of task records that expired
 * (runs from before that ledger leave them out, see spend-adds-up.ts).
 */
export function totalUsage(state: AgentStateView, withRetired: boolean): TokenUsage {
  const own = withRetired ? addUsage(state.usage, state.retiredUsage) : state.usage;
  return state.tasks.reduce((sum, task) => addUsage(sum, task.totalUsage), own);
}

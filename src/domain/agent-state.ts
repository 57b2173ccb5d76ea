import type { AgentState, AgentStateView, CarriedAgentInput, CarriedAgentState, CarriedPhase } from '../contracts/agent-state';
import type { PreparedWorktree } from '../contracts/agent-wire';
import type { TranscriptEntry } from '../contracts/carried-agent-state';
import { carriedTranscriptEntries, previewLength, transcriptEntries, transcriptEntryLength } from '../contracts/limits/workflow';
import { zeroUsage } from '../contracts/model';
import type { RetryView } from '../contracts/subagent-result';
import { preview } from './subagent-prompt';
import { carriedRegistry } from './task-registry';

/*
 * An agent's durable state (AgentState, decision 0040) as a value: where it starts, what is carried across
 * continue-as-new, and the changes that belong to no narrower ledger (runs, attempts, the transcript).
 * Pure functions: each returns the next state and leaves its argument as it was. The conversation's
 * counters and usage are in agent-ledger.ts, messages in message-queue.ts, notices in notices.ts, tasks in
 * task-registry.ts.
 */

/** The state of an agent whose first run starts at `now`. A field added to AgentState gets its starting value here. */
export function newAgentState(now: number): AgentState {
  return {
    startedAt: now,
    lastActivityAt: now,
    length: 0,
    turns: 0,
    runTurns: 0,
    toolCalls: 0,
    usage: zeroUsage,
    retiredUsage: zeroUsage,
    lastToolCall: null,
    lastAssistantText: null,
    tasks: [],
    nextTaskNumber: 1,
    announcedApprovals: [],
    pendingNotices: [],
    lastNoticeNumber: 0,
    pendingMessages: [],
    recentMessageIds: [],
    stopHookBlocked: false,
    answers: 0,
    transcript: [],
    attempt: { number: 1, messageBase: 0 },
  };
}

/**
 * The state a run starts from: the carried one (of this build or an earlier one: a field an earlier build
 * did not write takes its starting value), or a new one on the first run.
 */
export function agentStateOf(carried: CarriedAgentInput | undefined, now: number): AgentState {
  if (!carried) return newAgentState(now);
  const { phase: _phase, ...fields } = carried;
  const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<AgentState>;
  const state: AgentState = { ...newAgentState(now), ...defined };
  // Notices offered to an MCP client before the counter was carried hold the numbers already given.
  const lastNoticeNumber = Math.max(state.lastNoticeNumber, ...state.pendingNotices.map((notice) => notice.number ?? 0));
  return { ...state, stopHookBlocked: state.stopHookBlocked === true, lastNoticeNumber };
}

/**
 * What a run carries into the next (continue-as-new): the whole state with previews and references in
 * place of whole outputs (task results, the recent transcript only — the conversation is in its store).
 */
export function carriedAgentState(state: AgentStateView, phase: CarriedPhase): CarriedAgentState {
  const registry = carriedRegistry(state, previewLength);
  return {
    ...(state as AgentState),
    tasks: registry.tasks,
    nextTaskNumber: registry.nextTaskNumber,
    transcript: state.transcript.slice(-carriedTranscriptEntries),
    phase,
  };
}

/** A new run (a delegation run, a session message, an activation, an attempt): its turns, final_output and Stop-hook flag start over. */
export function startRun(state: AgentState): AgentState {
  const finalOutput = state.finalOutput ? { schemaKey: state.finalOutput.schemaKey, invalidCalls: 0, reminded: false } : undefined;
  return { ...state, runTurns: 0, stopHookBlocked: false, ...(finalOutput ? { finalOutput } : {}) };
}

/**
 * The next attempt of a recipe's `retry`: an empty conversation of its own, a fresh context window and
 * fresh structured-output counters.
 */
export function startAttempt(state: AgentState): AgentState {
  const { context: _context, lastText: _lastText, ...rest } = state;
  const finalOutput = state.finalOutput ? { schemaKey: state.finalOutput.schemaKey, invalidCalls: 0, reminded: false } : undefined;
  return {
    ...rest,
    attempt: { number: state.attempt.number + 1, messageBase: state.attempt.messageBase + state.length },
    length: 0,
    ...(finalOutput ? { finalOutput } : {}),
  };
}

/** Something happened at `now` (a turn ended, a message arrived): idle time counts from here. */
export function touch(state: AgentState, now: number): AgentState {
  return { ...state, lastActivityAt: now };
}

/** Appends an entry to the bounded transcript. */
export function remember(state: AgentState, role: TranscriptEntry['role'], text: string, now: number): AgentState {
  const transcript = [...state.transcript, { role, text: preview(text, transcriptEntryLength), at: now }];
  return { ...state, transcript: transcript.length > transcriptEntries ? transcript.slice(transcript.length - transcriptEntries) : transcript };
}

/** The agent works in this git worktree from now on (`isolation: worktree`). */
export function workIn(state: AgentState, worktree: PreparedWorktree): AgentState {
  return { ...state, worktree };
}

/** What peek shows of the recipe's checks. */
export function showRetry(state: AgentState, retryView: RetryView): AgentState {
  return { ...state, retryView };
}

/** A Stop hook sent the run back to work (`stop_hook_active` from now on in this run). */
export function blockStop(state: AgentState): AgentState {
  return { ...state, stopHookBlocked: true };
}

/** One more settled activation of a continuable subagent. */
export function countAnswer(state: AgentState): AgentState {
  return { ...state, answers: state.answers + 1 };
}

/** Structured output from now on: the stored schema, no call yet. */
export function expectFinalOutput(state: AgentState, schemaKey: string): AgentState {
  return { ...state, finalOutput: { schemaKey, invalidCalls: 0, reminded: false } };
}

/** The run got its one reminder to call final_output after a plain answer. */
export function remindFinalOutput(state: AgentState): AgentState {
  return state.finalOutput ? { ...state, finalOutput: { ...state.finalOutput, reminded: true } } : state;
}

/** `count` final_output calls were rejected, the last with `errors`. */
export function rejectFinalOutputs(state: AgentState, count: number, errors: string[]): AgentState {
  if (!state.finalOutput) return state;
  return { ...state, finalOutput: { ...state.finalOutput, invalidCalls: state.finalOutput.invalidCalls + count, lastErrors: errors } };
}

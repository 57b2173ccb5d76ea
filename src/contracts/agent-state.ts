import type { ContextWindowState, MessageInput, PreparedWorktree } from './agent-wire';
import type {
  AttemptState,
  FinalOutputState,
  PendingNotice,
  QueuedMessage,
  TaskRecord,
  TranscriptEntry,
} from './carried-agent-state';
import type { TokenUsage } from './model';
import type { RetryView, ToolCallSummary } from './subagent-result';

/**
 * The durable part of an agent (a session or a subagent): one JSON value, carried whole across
 * continue-as-new. Everything else an agent holds lives for one run and is rebuilt from this value and the
 * workflow input when the run starts (decision 0040).
 *
 * **Adding a carried field is one edit in this interface** (plus its starting value in `newAgentState`,
 * src/domain/agent-state.ts, when it has one): the carried value is this one, spread whole, and a run that
 * was carried without the field starts from that value. Change it only through the pure functions in
 * `src/domain/` (agent-state.ts, agent-ledger.ts, message-queue.ts, notices.ts, task-registry.ts); the agent
 * applies them and shows the value read-only.
 *
 * The field names are those of the carried input before decision 0040, so both shapes are one type: an
 * older input lacks some fields (see {@link CarriedAgentInput}), never names one differently.
 */
export interface AgentState {
  /** When the workflow's first run started (the time cap counts from here). */
  startedAt: number;
  /** When the workflow last did something (turn, message); idle timeouts count from here. */
  lastActivityAt: number;
  /** Messages in the conversation store (of the current attempt), pending ones included. */
  length: number;
  /** Model turns over the workflow's whole life. */
  turns: number;
  /** Turns of the current run (one delegation run, one session message, one continuable activation). */
  runTurns: number;
  toolCalls: number;
  /** Tokens and cost of this workflow's own model calls. */
  usage: TokenUsage;
  /** Usage of task records dropped from the registry (expired): it stays in the total for the workflow's whole life. */
  retiredUsage: TokenUsage;
  lastToolCall: ToolCallSummary | null;
  lastAssistantText: string | null;
  /** The last answer's text (cut at the inline limit) and where it is stored. */
  lastText?: LastText;
  /** The task registry (src/domain/task-registry.ts): records in start order. */
  tasks: TaskRecord[];
  nextTaskNumber: number;
  /** Child approvals already announced to the model (each once). */
  announcedApprovals: string[];
  /** Notices waiting to be put into the conversation (or handed to an MCP client). */
  pendingNotices: PendingNotice[];
  /** The last number given to a notice offered to an MCP client. */
  lastNoticeNumber: number;
  /** Accepted messages waiting for their turn. */
  pendingMessages: QueuedMessage[];
  /** Ids of the latest accepted messages, so a retried delivery is not queued twice. */
  recentMessageIds: string[];
  /** A Stop hook already sent the current run back to work (`stop_hook_active`): the loop breaker holds across continue-as-new. */
  stopHookBlocked: boolean;
  /** Settled activations of a continuable subagent. */
  answers: number;
  /** The bounded transcript for queries (only its recent part is carried). */
  transcript: TranscriptEntry[];
  /** Compaction state of the conversation. */
  context?: ContextWindowState;
  /** Messages with reserved sequence numbers not stored yet (the next model call stores them). */
  pending?: PendingMessages;
  /** The attempt of a recipe's `retry`. */
  attempt: AttemptState;
  /** Progress of the recipe's checks, for peek. */
  retryView?: RetryView;
  /** Structured output: the stored schema and this run's `final_output` calls. */
  finalOutput?: FinalOutputState;
  /** The subagent's git worktree (`isolation: worktree`). */
  worktree?: PreparedWorktree;
}

/** The last answer's text as the agent keeps it. */
export interface LastText {
  seq: number;
  text: string;
  truncated: boolean;
}

/** Messages whose sequence numbers are reserved and that the next model call stores. */
export interface PendingMessages {
  startSeq: number;
  messages: MessageInput[];
}

/** Where the loop was when it continued as new: mid-run between turns, or waiting for a message. */
export type CarriedPhase = 'running' | 'waiting';

/** What a run carries into the next (continue-as-new): the agent's state, whole, and where it was. */
export type CarriedAgentState = AgentState & { phase: CarriedPhase };

/**
 * What a run accepts as carried input: the state of this build, or one written by an earlier build
 * (before decision 0040 several fields were written only when they differed from their starting value).
 * `agentStateOf` (src/domain/agent-state.ts) turns either into an {@link AgentState}.
 */
export type CarriedAgentInput = Partial<AgentState> & { phase: CarriedPhase };

/**
 * The agent's state as everything but its owner sees it: no field can be assigned, no list changed in
 * place, and no field of a task record assigned (the registry's functions return changed records, which
 * the owner keeps: see task-registry.ts).
 */
export type AgentStateView = {
  readonly [K in keyof AgentState]: K extends 'tasks' ? readonly Readonly<TaskRecord>[] : AgentState[K] extends readonly (infer Item)[] ? readonly Item[] : Readonly<AgentState[K]>;
};

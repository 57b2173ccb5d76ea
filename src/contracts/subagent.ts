import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RecipeServerWire, RunningRecipe, ToolPolicyNarrowingWire } from './activities';
import type { JsonObject } from './json';
import type { ModelRoute, TokenUsage } from './model';

/**
 * Wire types and message definitions of the subagent workflow (one delegation). JSON only.
 */

/** How a subagent run ended. */
export const EndStatus = {
  completed: 'completed',
  maxTurns: 'max_turns',
  cancelled: 'cancelled',
  failed: 'failed',
  budget: 'budget',
} as const;
/** One of the end statuses. */
export type EndStatus = (typeof EndStatus)[keyof typeof EndStatus];

/** Live state of a subagent: running a turn, waiting for an approval or a message (continuable), or ended. */
export type SubagentState = 'running' | 'waiting_approval' | 'waiting' | EndStatus;

/** Where the task definition came from, as resolved when the delegation started. */
export interface SourceSummary {
  kind: 'recipe' | 'agent' | 'subrecipe';
  name: string;
  /** Store that served it (e.g. `dir:/recipes`, `git:https://…#main`, `s3://bucket/prefix`). */
  store: string;
  /** Commit SHA, ETag / VersionId, or mtime + content hash. */
  version: string;
  /** Path inside the store. */
  path?: string;
}

/** Timeouts and retry settings of the activities a subagent schedules (from configuration at start). */
export interface SubagentActivitySettings {
  /** Upper bound of one model call, including time spent waiting for the provider (ms). */
  modelCallTimeoutMs: number;
  /** Heartbeat timeout of a model call: how soon a lost worker is noticed (ms). */
  modelHeartbeatTimeoutMs: number;
  /** Upper bound of one tool call (ms). */
  toolCallTimeoutMs: number;
  /** Attempts for retryable model failures (429, 5xx, timeouts). */
  modelMaximumAttempts: number;
}

/** The fully resolved, JSON-only input of a subagent workflow. Nothing in it is read again from a store. */
export interface SubagentInput {
  /** Short label for listings and the Web UI. */
  label: string;
  /** The task: the first user message. */
  prompt: string;
  /** System prompt parts: the agent's or recipe's instructions, and reference context. */
  system: { instructions?: string; context?: string };
  route: ModelRoute;
  /** Toolset names the subagent may use (e.g. `developer`). */
  toolsets: string[];
  /** Tool allow/deny lists (qualified or plain names) applied within those toolsets. */
  toolFilter?: { allow?: string[]; deny?: string[] };
  maxTurns: number;
  /** Absolute working directory; every tool path is confined to it. */
  workingDir: string;
  /** 1 for a direct child of a session or an API-started subagent. */
  depth: number;
  maxDepth: number;
  source?: SourceSummary;
  /** The parent workflow to send progress and settlement signals to. */
  parent?: { workflowId: string; taskId: string };
  continuable?: boolean;
  tenant?: string;
  /** Total tokens (input + output, this subagent and its descendants) after which it ends with `budget`. */
  tokenBudget?: number;
  activity: SubagentActivitySettings;
  /** Background-task limits, used when this subagent may itself delegate (depth < maxDepth). */
  tasks?: TaskLimits;
  /** The recipe this subagent runs (a snapshot): its subrecipes are sources for its own delegations. */
  recipe?: RunningRecipe;
  /** A continuable subagent ends after this long without a message (default: never). */
  idleTimeoutMs?: number;
  /** Narrowings of the operator's tool policy (recipe, delegation). */
  toolPolicy?: ToolPolicyNarrowingWire[];
  /** MCP servers its recipe declared (when the operator allows them). */
  recipeServers?: RecipeServerWire[];
  /** How long a tool call waits for an approval before it counts as denied (ms). */
  approvalTimeoutMs?: number;
  /** goose `retry` of the delegated recipe: checks to run after each answer, and how often to start again. */
  retry?: RetryPolicy;
  /**
   * JSON Schema (an object schema, already checked) of the structured result: the input schema of the
   * subagent's `final_output` tool (`output_schema` of the request, else the recipe's `response.json_schema`).
   */
  outputSchema?: JsonObject;
  /** Work in a new git worktree of `workingDir` (agent `isolation: worktree` or `isolation` on the request). */
  isolation?: 'worktree';
  /** State carried across continue-as-new; absent on the first run. */
  carried?: CarriedAgentState;
}

/**
 * A recipe's goose `retry` (SEMANTICS §5), with goose's defaults filled in: after the subagent answers,
 * every check runs in its working directory; all pass → completed; otherwise `onFailure` runs and the
 * subagent starts again from the recipe's instructions, up to `maxRetries` more times.
 */
export interface RetryPolicy {
  /** Further attempts after the first (≥ 1). */
  maxRetries: number;
  /** Shell commands whose exit status 0 means the attempt succeeded, in order. */
  checks: { type: 'shell'; command: string }[];
  /** Shell command run after a failed attempt (cleanup), if any. */
  onFailure?: string;
  /** Time limit of one check command (seconds; goose's default 300). */
  timeoutSeconds: number;
  /** Time limit of the `onFailure` command (seconds; goose's default 600). */
  onFailureTimeoutSeconds: number;
}

/** Limits of a workflow's background tasks (SEMANTICS §2). */
export interface TaskLimits {
  /** Running background tasks at once (`ERRAND_MAX_BACKGROUND_TASKS`, default 5). */
  maxBackgroundTasks: number;
  /** How long `load(task_id)` waits (ms; default 5 minutes). */
  waitTimeoutMs: number;
  /** How long a finished task's result stays retrievable (ms; `ERRAND_COMPLETED_TASK_TTL_SECS`, default 600 s). */
  completedTaskTtlMs: number;
}

/** One delegation a workflow started, as it tracks it. JSON only (carried across continue-as-new). */
export interface TaskRecord {
  taskId: string;
  workflowId: string;
  description: string;
  mode: 'foreground' | 'background' | 'continuable';
  state: 'starting' | SubagentState;
  startedAt: number;
  settledAt?: number;
  peek?: SubagentPeek;
  result?: SubagentResult;
  /** True once `load(task_id)` returned the result. */
  resultRead: boolean;
  totalUsage: TokenUsage;
}

/** Everything a workflow's agent loop carries into its next run (continue-as-new). */
export interface CarriedAgentState {
  startedAt: number;
  length: number;
  turns: number;
  toolCalls: number;
  usage: TokenUsage;
  lastToolCall: ToolCallSummary | null;
  lastAssistantText: string | null;
  lastText?: { seq: number; text: string; truncated: boolean };
  tasks: TaskRecord[];
  /** Child approvals already announced to the model. */
  announcedApprovals?: string[];
  nextTaskNumber: number;
  pendingNotices: string[];
  pendingMessages: string[];
  /** Turns used by the current run of a continuable subagent or session message. */
  runTurns: number;
  /** Where the loop was when it continued as new: mid-run between turns, or waiting for a message. */
  phase: 'running' | 'waiting';
  /** Results of earlier answers (continuable subagents). */
  answers: number;
  transcript: TranscriptEntry[];
}

/** One entry of the bounded transcript a session or continuable subagent keeps for queries. */
export interface TranscriptEntry {
  role: 'user' | 'assistant' | 'notice';
  text: string;
  at: number;
}

/** The last tool call a subagent made, for peek. */
export interface ToolCallSummary {
  name: string;
  /** The arguments as JSON, cut to a preview length. */
  argumentsPreview: string;
  turn: number;
}

/** What `peek` shows without waiting. */
export interface SubagentPeek {
  workflowId: string;
  /** Tasks this subagent delegated, if it may delegate. */
  tasks?: { taskId: string; state: TaskRecord['state']; description: string; turns: number }[];
  /** Messages queued for a continuable subagent. */
  queuedMessages?: number;
  /** Tool calls waiting for an approval. */
  pendingApprovals?: PendingApproval[];
  label: string;
  state: SubagentState;
  /** Epoch ms when the run started (workflow time). */
  startedAt: number;
  elapsedMs: number;
  turns: number;
  maxTurns: number;
  /** Time since the last model or tool activity finished. */
  idleMs: number;
  toolCalls: number;
  lastToolCall: ToolCallSummary | null;
  lastAssistantText: string | null;
  usage: TokenUsage;
  model: string;
}

/** The result of a subagent run. */
export interface SubagentResult {
  workflowId: string;
  status: EndStatus;
  /** The final answer (empty unless completed). */
  output: string;
  /** Whatever the subagent said before it stopped (the last assistant texts), when not completed. */
  partialOutput: string;
  /** Why it did not complete: the provider's message, the cancel reason, the limit reached. */
  diagnostic?: string;
  turns: number;
  toolCalls: number;
  usage: TokenUsage;
  durationMs: number;
}

/** Input of the cancel signal. */
export interface CancelInput {
  reason?: string;
}

/** Peek at a subagent: state, counters, last tool call and text. Never blocks. */
export const peekQuery = defineQuery<SubagentPeek>('peek');
/** Ask a subagent to stop: in-flight model and tool calls are cancelled, the run ends `cancelled`. */
export const cancelSignal = defineSignal<[CancelInput]>('cancel');

/** Progress a child reports to its parent after each turn (so peeking the parent never blocks). */
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

/** Sent by a child to its parent after each turn. */
export const childProgressSignal = defineSignal<[ChildProgressInput]>('childProgress');
/** Sent by a child to its parent when a run ends (and after each answer of a continuable child). */
export const childSettledSignal = defineSignal<[ChildSettledInput]>('childSettled');

/** Input of the sendMessage update: the next user turn of a continuable subagent (or a session). */
export interface SendMessageInput {
  message: string;
}

/** Answer of the sendMessage update once the workflow has durably accepted the message. */
export interface SendMessageResult {
  accepted: true;
  /** Messages waiting for a turn, this one included (0 when it started a turn at once). */
  queuedTurns: number;
}

/**
 * Give a continuable subagent (or a session) its next message. An update, not a signal, because the caller
 * must know it was accepted: the validator rejects it when the subagent is not continuable or has ended.
 */
export const sendMessageUpdate = defineUpdate<SendMessageResult, [SendMessageInput]>('sendMessage');

/** Parent → child: the next message for a continuable child (send_message from a parent workflow). */
export const messageSignal = defineSignal<[SendMessageInput]>('message');

/** What the transcript query returns. */
export interface TranscriptView {
  state: SubagentState;
  entries: TranscriptEntry[];
  queuedMessages: number;
}

/** The bounded transcript of a session or continuable subagent. */
export const transcriptQuery = defineQuery<TranscriptView>('transcript');

/** A tool call that waits for an approval. */
export interface PendingApproval {
  /** `<workflow id>:<assistant message seq>:<call index>`: unique and stable across restarts. */
  id: string;
  workflowId: string;
  tool: string;
  argumentsPreview: string;
  /** Epoch ms (workflow time). */
  requestedAt: number;
  /** Epoch ms after which the call counts as denied. */
  expiresAt: number;
}

/** Input of the approval update. */
export interface ApprovalInput {
  approvalId: string;
  decision: 'approve' | 'deny';
  reason?: string;
  /** Who decides (set by the API from the caller's tenant). */
  by?: string;
}

/** Approve or deny a pending tool call. Rejected at once when no such approval is pending. */
export const approvalUpdate = defineUpdate<{ accepted: true }, [ApprovalInput]>('approval');

/** Parent → child: a decision on a pending approval (the parent's model used the `approve` tool). Unknown ids are ignored. */
export const approvalSignal = defineSignal<[ApprovalInput]>('approvalDecision');

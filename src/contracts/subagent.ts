import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ContextWindowState, ConversationPrefix, MessageInput, MessageRef, PreparedWorktree, RecipeServerWire, RunningRecipe, ToolPolicyNarrowingWire, WorktreeOutcome } from './agent-wire';

export type { ContextWindowState, ConversationPrefix, MessageRef, PreparedWorktree, WorktreeOutcome } from './agent-wire';
import type { JsonObject } from './json';
import type { ModelRoute, TokenUsage } from './model';
import { peekQueryName } from './wire-names';

/**
 * Wire types and message definitions of the subagent workflow (one delegation). JSON only.
 */

/** How a subagent run ended. */
export const EndStatus = {
  completed: 'completed',
  /** The model's answer was cut off at its output-token limit. */
  truncated: 'truncated',
  maxTurns: 'max_turns',
  cancelled: 'cancelled',
  failed: 'failed',
  budget: 'budget',
  /**
   * Listed by SEMANTICS §5 and kept on the wire; nothing ends with it: failed recipe checks and invalid
   * structured output end `failed`, as SEMANTICS §5 says.
   */
  declined: 'declined',
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
  /** System prompt parts: the agent's or recipe's instructions, reference context, and the delegation's persona. */
  system: { instructions?: string; context?: string; persona?: string };
  route: ModelRoute;
  /**
   * A fork (`fork: true`): the parent's conversation up to its last completed turn, by reference. The
   * subagent's own conversation then starts with its task (`prompt`) and no system prompt of its own: the
   * model sees the parent's messages, then the task (decision 0011).
   */
  fork?: ConversationPrefix;
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
  /** A continuable subagent ends after this long without a message (`ERRAND_CONTINUABLE_IDLE_TIMEOUT_SECS`). */
  idleTimeoutMs?: number;
  /** Output-token limit of each model call (delegate > recipe > agent); absent = the model entry's or the configured default. */
  maxOutputTokens?: number;
  /** Who may decide this workflow's children's approvals: a person only (default), or also this workflow's model. */
  approvers?: Approvers;
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

/** Who decides a tool call under `ask`: a person only, or a person or the delegating model (`toolPolicy.approvers`). */
export type Approvers = 'human' | 'human-or-parent';

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
  /** Background tasks running a turn at once (`ERRAND_MAX_BACKGROUND_TASKS`, default 5); a waiting continuable holds no slot. */
  maxBackgroundTasks: number;
  /** Continuable tasks alive at once (`ERRAND_MAX_CONTINUABLES`, default 20). */
  maxContinuables?: number;
  /** How long `load(task_id)` waits (ms; default 5 minutes). */
  waitTimeoutMs: number;
  /** How long a finished task's result stays retrievable after it was first read (ms; `ERRAND_COMPLETED_TASK_TTL_SECS`, default 600 s). */
  completedTaskTtlMs: number;
  /** How long continuable children wait for a message before they end (ms; `ERRAND_CONTINUABLE_IDLE_TIMEOUT_SECS`). */
  continuableIdleTimeoutMs?: number;
}

/** The state of a task as its parent tracks it. */
export type TaskState = 'starting' | SubagentState;

/** One delegation a workflow started, as it tracks it. JSON only (carried across continue-as-new). */
export interface TaskRecord {
  taskId: string;
  workflowId: string;
  description: string;
  mode: 'foreground' | 'background' | 'continuable';
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
}

/** A notice waiting to be put into the conversation before the next model call. */
export interface PendingNotice {
  text: string;
  /** The task it is about; its result counts as read once the notice is in the conversation. */
  taskId?: string;
  /** The task's full output by reference, appended after `text` when the inline output was cut. */
  outputRef?: MessageRef;
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
  pendingNotices: PendingNotice[];
  pendingMessages: QueuedMessage[];
  /** Ids of the latest accepted messages, so a retried delivery is not queued twice (also across continue-as-new). */
  recentMessageIds?: string[];
  /** When the workflow last did something (turn, message); idle timeouts count from here. */
  lastActivityAt?: number;
  /** Compaction state of the conversation. */
  context?: ContextWindowState;
  /** Messages with reserved sequence numbers not stored yet (the next model call stores them). */
  pending?: { startSeq: number; messages: MessageInput[] };
  /** Turns used by the current run of a continuable subagent or session message. */
  runTurns: number;
  /** Where the loop was when it continued as new: mid-run between turns, or waiting for a message. */
  phase: 'running' | 'waiting';
  /** Results of earlier answers (continuable subagents). */
  answers: number;
  transcript: TranscriptEntry[];
  /** The attempt of a recipe's `retry` this run is in, when past the first. */
  attempt?: AttemptState;
  /** Progress of the recipe's checks, for peek. */
  retryView?: RetryView;
  /** Structured output: the stored schema and this run's `final_output` calls. */
  finalOutput?: FinalOutputState;
  /** The subagent's git worktree (`isolation: worktree`). */
  worktree?: PreparedWorktree;
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

/** The recipe's checks (goose `retry`) as peek shows them. */
export interface RetryView {
  /** The attempt running or being checked (1 = the first run). */
  attempt: number;
  /** Attempts allowed: 1 + `maxRetries`. */
  attempts: number;
  /** What happens now or happened last, e.g. `working`, `running check 1 of 2`, `check 1 failed`, `running on_failure`, `checks passed`. */
  state: string;
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
  /** Epoch ms when the workflow started (workflow time). Durations are computed by whoever reads the peek. */
  startedAt: number;
  /** Epoch ms when its last model or tool call finished, or its last message arrived. */
  lastActivityAt: number;
  turns: number;
  maxTurns: number;
  toolCalls: number;
  /** Context compactions so far (older turns summarised to stay inside the model's context window). */
  compactions?: number;
  /** The recipe's checks (goose `retry`): attempt and what happens now. */
  retry?: RetryView;
  lastToolCall: ToolCallSummary | null;
  lastAssistantText: string | null;
  usage: TokenUsage;
  model: string;
}

/** The result of a subagent run. */
export interface SubagentResult {
  workflowId: string;
  status: EndStatus;
  /** The final answer (empty unless completed). Cut to a preview when `outputRef` is set and `outputCut`. */
  output: string;
  /** Whatever the subagent said before it stopped (the last assistant text), when not completed. */
  partialOutput: string;
  /** The stored message that holds the whole output (its last assistant text). */
  outputRef?: MessageRef;
  /** True when `output` / `partialOutput` is a preview and the whole text is at `outputRef`. */
  outputCut?: boolean;
  /** Why it did not complete: the provider's message, the cancel reason, the limit reached. */
  diagnostic?: string;
  /** The validated arguments of its `final_output` call, when it ran with an output schema and completed. */
  structured?: JsonObject;
  /** Its git worktree (`isolation: worktree`): kept with its branch when it changed something, removed otherwise. */
  worktree?: WorktreeOutcome;
  /** The recipe's checks (goose `retry`): how many attempts ran and the last failure. */
  checks?: CheckSummary;
  turns: number;
  toolCalls: number;
  usage: TokenUsage;
  durationMs: number;
}

/** What the recipe's checks (goose `retry`) came to. */
export interface CheckSummary {
  /** Attempts that ran (1 = no retry was needed or allowed). */
  attempts: number;
  /** Whether the last attempt's checks all passed. */
  passed: boolean;
  /** The last check that failed, if any. */
  lastFailure?: CheckFailure;
}

/** One failed check (or `on_failure` command). */
export interface CheckFailure {
  /** 1-based number of the check (0 for the `on_failure` command). */
  check: number;
  command: string;
  /** Its exit code; null when it was killed (time limit) or could not start. */
  exitCode: number | null;
  /** Why it failed, in words: `exited with code 1`, `timed out after 300 s`, `was not run: …`. */
  reason: string;
  /** Its output, cut to its start and end when long. */
  outputPreview: string;
  /** Blob key of its whole output (as far as it was kept), when the preview is cut. */
  outputKey?: string;
}

/** Input of the cancel signal. */
export interface CancelInput {
  reason?: string;
}

/** Peek at a subagent: state, counters, last tool call and text. Never blocks. */
export const peekQuery = defineQuery<SubagentPeek>(peekQueryName);
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

/** A message accepted by a session or continuable subagent, waiting for its turn. */
export interface QueuedMessage {
  text?: string;
  key?: string;
  /** Short preview for the transcript and the Web UI. */
  preview: string;
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
export const sendMessageUpdate = defineUpdate<SendMessageResult, [SendMessageInput]>('sendMessage');


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

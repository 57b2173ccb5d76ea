import type { AgentHooksWire } from './agent-hooks';
import type { ConversationPrefix, RecipeServerWire, RunningRecipe, ToolPolicyNarrowingWire } from './agent-wire';
import type { CarriedAgentInput } from './agent-state';

export type { ContextWindowState, ConversationPrefix, MessageRef, PreparedWorktree, WorktreeOutcome } from './agent-wire';
import type { JsonObject } from './json';
import type { ModelRoute } from './model';
export { EndStatus, isCapStatus, type BudgetCap, type CapStatus, type SubagentState } from './subagent-state';

/**
 * Wire types of the subagent workflow (one delegation): its end statuses, its input and the limits it
 * runs under. JSON only. Its state, peek and result are in `agent-state.ts` and
 * `subagent-result.ts`; its queries, signals and updates in `subagent-messages.ts`.
 */

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

/**
 * Where an agent's memory lives (decision 0031): tenant, scope, project (a hash of the working directory,
 * for `project` and `local`) and agent name; the worker builds the blob-store folder from them and checks
 * each part again.
 */
export interface AgentMemoryLocation {
  tenant?: string;
  scope: 'user' | 'project' | 'local';
  /** For `project` and `local`: 32 hex digits naming the working directory. */
  project?: string;
  agent: string;
}

/** The start of an agent's MEMORY.md as its system prompt shows it. */
export interface MemoryPromptPart {
  scope: 'user' | 'project' | 'local';
  /** The first lines of MEMORY.md (empty when there is none yet). */
  excerpt: string;
  /** Whether MEMORY.md goes on past the excerpt. */
  truncated: boolean;
}

/** A skill put into an agent's system prompt at start (`skills` in its agent file). */
export interface PreloadedSkill {
  name: string;
  /** Where it was found, worded for people (`project .claude/skills`, ...). */
  from: string;
  /** The SKILL.md text, frontmatter included. */
  content: string;
}

/** The fully resolved, JSON-only input of a subagent workflow. Nothing in it is read again from a store. */
export interface SubagentInput {
  /** Short label for listings and the Web UI. */
  label: string;
  /** The task: the first user message. */
  prompt: string;
  /**
   * System prompt parts: the agent's or recipe's instructions, reference context, the delegation's persona,
   * the agent's preloaded skills and the start of its memory (read when the delegation was planned).
   */
  system: { instructions?: string; context?: string; persona?: string; skills?: PreloadedSkill[]; memory?: MemoryPromptPart };
  /** The agent's memory folder (`memory` in its agent file): its memory tools read and write there. */
  memory?: AgentMemoryLocation;
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
  /** Wall-clock milliseconds from its start (workflow clock) after which it ends with `time_budget`. */
  timeBudgetMs?: number;
  /** Micro-dollars (this subagent and its descendants) after which it ends with `cost_budget`. */
  costBudgetMicroUsd?: number;
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
  /** The agent file's `hooks` (SubagentStart, PreToolUse, PostToolUse, Stop), with the agent's name. */
  hooks?: AgentHooksWire;
  /** State carried across continue-as-new; absent on the first run. */
  carried?: CarriedAgentInput;
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
  /** Messages queued for one session or continuable at once (`ERRAND_MAX_QUEUED_MESSAGES`, default 100). */
  maxQueuedMessages?: number;
}

import type { RunningRecipe } from './agent-wire';
import type { ModelRoute } from './model';
import type { Approvers, SubagentActivitySettings, TaskLimits } from './subagent';
import type { CarriedAgentInput } from './agent-state';

/**
 * Input of a session workflow: a conversation with a model whose tools are `load`, `delegate`,
 * `send_message`, `list_subagent_models` and the configured toolsets. Messages arrive through the
 * `sendMessage` update; replies are read through the `transcript` query.
 */
export interface SessionInput {
  label: string;
  /**
   * The session's model. Absent only for an MCP session started where no model is configured: its client's
   * model calls the tools, and each delegation resolves its own model at planning (SEMANTICS §6).
   */
  route?: ModelRoute;
  toolsets: string[];
  workingDir: string;
  /** Instructions and context of the recipe the session runs, if any. */
  system: { instructions?: string; context?: string };
  /** The recipe the session runs (a snapshot): its subrecipes become sources, its settings apply. */
  recipe?: RunningRecipe;
  /** Model calls one message may cause. */
  maxTurnsPerMessage: number;
  /** Depth limit for its delegations (1: its subagents cannot delegate further). */
  maxDepth: number;
  tenant?: string;
  tasks: TaskLimits;
  tokenBudget?: number;
  /** Wall-clock milliseconds from the session's start after which it ends with `time_budget`. */
  timeBudgetMs?: number;
  /** Micro-dollars (the session and its tasks) after which it ends with `cost_budget`. */
  costBudgetMicroUsd?: number;
  activity: SubagentActivitySettings;
  /** How long a tool call under `ask` waits for a decision (ms). */
  approvalTimeoutMs?: number;
  /** A first message, run at once (e.g. the recipe's prompt). */
  initialMessage?: string;
  /** The session ends after this long without a message or notice (`ERRAND_SESSION_IDLE_TIMEOUT_SECS`). */
  idleTimeoutMs?: number;
  /** Output-token limit of the session's model calls; absent = the model entry's or the configured default. */
  maxOutputTokens?: number;
  /** Who may decide its children's approvals: a person only (default), or also the session's model. */
  approvers?: Approvers;
  /**
   * An MCP session (SEMANTICS §6): no model of its own; its MCP client calls the orchestration tools through
   * the `callTool` update and gets the notices of its background tasks with its next tool result.
   */
  mcp?: boolean;
  carried?: CarriedAgentInput;
}

/** What a session returns when it ends: cancelled, idle for too long, or over one of its caps (tokens, time, money). */
export interface SessionResult {
  workflowId: string;
  status: 'cancelled' | 'idle' | 'budget' | 'failed';
  diagnostic?: string;
  turns: number;
  messages: number;
}

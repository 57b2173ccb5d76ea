import type { AgentHooksWire } from '../contracts/agent-hooks';
import type { RecipeServerWire, RunningRecipe, ToolPolicyNarrowingWire } from '../contracts/activities';
import type { ModelRoute } from '../contracts/model';
import type { AgentMemoryLocation, Approvers, ConversationPrefix, SubagentActivitySettings, TaskLimits } from '../contracts/subagent';
import { defaultApprovalTimeoutMs } from '../contracts/limits/workflow';

/** What a session or subagent workflow configures its agent with. */
export interface AgentOptions {
  kind: 'session' | 'subagent';
  workflowId: string;
  /**
   * Key of this workflow's conversation in the blob store (workflow id and first run id, stable across
   * continue-as-new). A recipe's retry attempts after the first get conversations of their own (see
   * `Agent.conversationId`).
   */
  conversationId: string;
  /** Another conversation's turns this one continues (a fork), by reference: the model sees them first. */
  prefix?: ConversationPrefix;
  label: string;
  /** The model it calls; absent only for an MCP session, which calls none (SessionInput.route). */
  route?: ModelRoute;
  toolsets: string[];
  toolFilter?: { allow?: string[]; deny?: string[] };
  workingDir: string;
  /** 0 for a session, 1 for its children, and so on. */
  depth: number;
  maxDepth: number;
  activity: SubagentActivitySettings;
  tasks: TaskLimits;
  recipe?: RunningRecipe;
  tenant?: string;
  /** Token budget of this workflow and its descendants. */
  tokenBudget?: number;
  /** Wall-clock milliseconds from its start (workflow clock) it may run. */
  timeBudgetMs?: number;
  /** Micro-dollars this workflow and its descendants may spend. */
  costBudgetMicroUsd?: number;
  /** Output-token limit of each model call, if the delegation or recipe set one. */
  maxOutputTokens?: number;
  /** Narrowings of the operator's tool policy (recipe, delegation). */
  toolPolicy?: ToolPolicyNarrowingWire[];
  /** MCP servers its recipe declared. */
  recipeServers?: RecipeServerWire[];
  /** The agent's memory folder (`memory` in its agent file): its memory tools are offered (decision 0031). */
  memory?: AgentMemoryLocation;
  /** How long a tool call under `ask` waits for a decision before it is denied (ms). */
  approvalTimeoutMs: number;
  /** Who may decide its children's approvals. */
  approvers: Approvers;
  /** The agent file's hooks, if it has any (run by activities: tool hooks inside runTool, the others by runAgentHook). */
  hooks?: AgentHooksWire;
  /** Wall clock at the start of this run. */
  now: number;
}

/** What the session's and the subagent's inputs say alike about their agent. */
export interface SharedAgentInput {
  label: string;
  route?: ModelRoute;
  toolsets: string[];
  workingDir: string;
  maxDepth: number;
  activity: SubagentActivitySettings;
  recipe?: RunningRecipe;
  tenant?: string;
  tokenBudget?: number;
  timeBudgetMs?: number;
  costBudgetMicroUsd?: number;
  maxOutputTokens?: number;
  approvalTimeoutMs?: number;
  approvers?: Approvers;
}

/** The options both workflows give their agent alike, from their input (the caller adds its own: depth, tasks, ...). */
export function sharedAgentOptions(input: SharedAgentInput, run: { workflowId: string; conversationId: string; now: number }): Omit<AgentOptions, 'kind' | 'depth' | 'tasks'> {
  return {
    workflowId: run.workflowId,
    conversationId: run.conversationId,
    label: input.label,
    ...(input.route ? { route: input.route } : {}),
    toolsets: input.toolsets,
    workingDir: input.workingDir,
    maxDepth: input.maxDepth,
    activity: input.activity,
    ...(input.recipe ? { recipe: input.recipe } : {}),
    ...(input.tenant ? { tenant: input.tenant } : {}),
    ...(input.tokenBudget !== undefined ? { tokenBudget: input.tokenBudget } : {}),
    ...(input.timeBudgetMs !== undefined ? { timeBudgetMs: input.timeBudgetMs } : {}),
    ...(input.costBudgetMicroUsd !== undefined ? { costBudgetMicroUsd: input.costBudgetMicroUsd } : {}),
    ...(input.maxOutputTokens !== undefined ? { maxOutputTokens: input.maxOutputTokens } : {}),
    approvalTimeoutMs: input.approvalTimeoutMs ?? defaultApprovalTimeoutMs,
    approvers: input.approvers ?? 'human',
    now: run.now,
  };
}

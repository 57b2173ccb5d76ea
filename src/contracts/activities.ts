import type { JsonObject } from './json';
import type { SourceSnapshot } from './source';
import type { SourceSummary, SubagentActivitySettings, SubagentInput } from './subagent';
import type { ChatMessage, FinishReason, ModelRoute, TokenUsage } from './model';

/**
 * Signatures of the activities workflows schedule. Workflows import only these types (never the
 * implementations), so the workflow bundle stays free of I/O code.
 *
 * Conversations live in the conversation store (by reference); activity inputs and outputs carry only
 * the conversation id, lengths and short previews, so history per turn does not grow with the length of
 * the conversation.
 */

/** Append messages at known sequence numbers (idempotent per sequence number). */
export interface AppendMessagesInput {
  conversationId: string;
  startSeq: number;
  messages: ChatMessage[];
}

/** One model call over the first `length` messages of a conversation. */
export interface ModelTurnInput {
  workflowId: string;
  conversationId: string;
  /** Messages 0..length-1 are the conversation so far; the answer is stored at `length`. */
  length: number;
  route: ModelRoute;
  toolsets: string[];
  toolFilter?: { allow?: string[]; deny?: string[] };
  turn: number;
  maxTurns: number;
  /** A transient system note for this call only (e.g. the turn budget reminder); not stored. */
  note?: string;
  /** Orchestration tools (load, delegate, ...) to offer besides the toolsets; handled by the workflow. */
  orchestrationTools?: string[];
  /** Narrowings of the operator's tool policy by the recipe and the delegation (never widen it). */
  toolPolicy?: ToolPolicyNarrowingWire[];
  /** Recipe-declared MCP servers among `toolsets`: registered by the worker before tools are listed. */
  recipeServers?: RecipeServerWire[];
}

/**
 * A narrowing of the operator's tool policy (JSON copy of the schema in src/tools/tool-policy.ts, kept
 * here so workflow code does not import tool code). Decisions: allow, ask, deny; the strictest wins.
 */
export interface ToolPolicyNarrowingWire {
  default?: 'allow' | 'ask' | 'deny';
  rules?: Record<string, 'allow' | 'ask' | 'deny'>;
  /** An agent's `permissionMode: dontAsk`: a final `ask` is a `deny`. */
  askBecomes?: 'deny';
  /** An agent's `acceptEdits` / `bypassPermissions`: tools whose operator `ask` by default (no rule) becomes `allow`. */
  allowOverDefaultAsk?: string[];
}

/**
 * An MCP server a recipe declared, converted for errand (JSON copy of `RecipeServer` in src/tools/mcp-config.ts;
 * the worker re-validates the config before it starts anything).
 */
export interface RecipeServerWire {
  /** The name the recipe gave the extension. */
  declaredName: string;
  /** The server config; its `name` is the registered toolset name (`recipe-<name>-<hash>`). */
  config: JsonObject;
}

/** A person's (or the parent's) decision on a tool call that needed approval. */
export interface ApprovalDecision {
  decision: 'approve' | 'deny';
  reason?: string;
  /** Who decided: `api:<tenant>`, `parent`, `timeout`, ... */
  by: string;
}

/** A tool call as the workflow sees it: id, name and a short preview of the arguments. */
export interface ToolCallRef {
  id: string;
  name: string;
  argumentsPreview: string;
  /** Full arguments, only for orchestration tools (the workflow itself handles those). */
  arguments?: JsonObject;
  /** The tool's policy is `ask`: the call waits for an approval before it runs. */
  needsApproval?: true;
}

/** What a model call returns to the workflow. */
export interface ModelTurnOutput {
  /** The assistant text, cut to the inline limit when `textTruncated`. */
  text: string;
  textTruncated: boolean;
  toolCalls: ToolCallRef[];
  finishReason: FinishReason;
  usage: TokenUsage;
}

/** Run one tool call of the assistant message at `assistantSeq`; store its result at `resultSeq`. */
export interface RunToolInput {
  workflowId: string;
  conversationId: string;
  assistantSeq: number;
  callIndex: number;
  resultSeq: number;
  workingDir: string;
  toolsets: string[];
  toolFilter?: { allow?: string[]; deny?: string[] };
  toolPolicy?: ToolPolicyNarrowingWire[];
  recipeServers?: RecipeServerWire[];
  /** The decision on a call that needed approval. */
  approval?: ApprovalDecision;
}

/** What a tool call returns to the workflow. */
export interface RunToolOutput {
  isError: boolean;
  /** The start of the tool's output. */
  preview: string;
}

/** Read the full text of one stored message. */
export interface ReadMessageTextInput {
  conversationId: string;
  seq: number;
}

/**
 * The recipe a session or subagent runs, as resolved when it started: its `sub_recipes` are sources for
 * its delegations, and the values it was rendered with render templated subrecipe `values`.
 */
export interface RunningRecipe {
  snapshot: SourceSnapshot;
  values: Record<string, string>;
}

/** What the delegating workflow is, for planning a delegation (SEMANTICS §2-§3). */
export interface DelegationParent {
  workflowId: string;
  taskId: string;
  /** Depth of the child to be started (parent depth + 1). */
  childDepth: number;
  maxDepth: number;
  workingDir: string;
  route: ModelRoute;
  toolsets: string[];
  toolFilter?: { allow?: string[]; deny?: string[] };
  /** The parent's tool policy narrowings; a child inherits them and may only narrow further. */
  toolPolicy?: ToolPolicyNarrowingWire[];
  /** Recipe-declared MCP servers among the parent's toolsets. */
  recipeServers?: RecipeServerWire[];
  /** The recipe the parent runs, if any (its `sub_recipes`, its `settings.max_turns`). */
  recipe?: RunningRecipe;
  tenant?: string;
  activity: SubagentActivitySettings;
}

/** Plan a delegation: resolve its source, render and validate it, apply precedence rules. */
export interface PlanDelegationInput {
  /** The model's raw `delegate` arguments: validated (strictly) by the activity. */
  request: JsonObject;
  parent: DelegationParent;
}

/** The plan: a ready child input, or a message for the calling model that says what is wrong. */
export type PlanDelegationOutput =
  | {
      ok: true;
      input: SubagentInput;
      source?: SourceSummary;
      warnings: string[];
      /** The delegated agent says `background: true`: run it in the background whatever the call asked. */
      forceBackground?: true;
    }
  | { ok: false; message: string };

/** The `load` listing for a workflow: sources it can see plus its background tasks. */
export interface LoadListingInput {
  workingDir: string;
  recipe?: RunningRecipe;
  tasks: { id: string; state: 'running' | 'completed' | 'failed' | 'cancelled'; description?: string }[];
}

/** The content of one source, or not-found with suggestions. */
export interface LoadSourceInput {
  name: string;
  workingDir: string;
  recipe?: RunningRecipe;
}

/** The agent loop's activities: conversation, model calls and tool calls. */
export interface AgentLoopActivities {
  appendMessages(input: AppendMessagesInput): Promise<void>;
  modelTurn(input: ModelTurnInput): Promise<ModelTurnOutput>;
  runTool(input: RunToolInput): Promise<RunToolOutput>;
  readMessageText(input: ReadMessageTextInput): Promise<string>;
}

/** The activities behind the orchestration tools (sources, planning, model listing). */
export interface OrchestrationActivities {
  planDelegation(input: PlanDelegationInput): Promise<PlanDelegationOutput>;
  loadListing(input: LoadListingInput): Promise<string>;
  loadSource(input: LoadSourceInput): Promise<string>;
  listSubagentModels(input: { provider?: string; model?: string }): Promise<string>;
}

/** Every activity a session or subagent workflow schedules. */
export type SubagentActivities = AgentLoopActivities & OrchestrationActivities;

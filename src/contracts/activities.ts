import type { JsonObject } from './json';
import type { LiveText } from './live-text';
import type { AgentHooksWire } from './agent-hooks';
import type { PlanningFailure } from './planning-failure';
import type { ApprovalDecision, MessageInput, RecipeServerWire, RunningRecipe, ToolPolicyNarrowingWire } from './agent-wire';
import type { AgentMemoryLocation, Approvers, ContextWindowState, ConversationPrefix, SourceSummary, SubagentActivitySettings, SubagentInput } from './subagent';
import type { SubagentResult } from './subagent-result';
import type { WorkflowRunInput } from './workflow-run';
import type { AnswerCap, FinishReason, ModelRoute, TokenUsage } from './model';

/**
 * Signatures of the activities workflows schedule. Workflows import only these types (never the
 * implementations), so the workflow bundle stays free of I/O code.
 *
 * Conversations live in the conversation store (by reference); activity inputs and outputs carry only
 * the conversation id, lengths and short previews, so history per turn does not grow with the length of
 * the conversation.
 */



/** Append messages at known sequence numbers (idempotent per sequence number; the first write wins). */
export interface AppendMessagesInput {
  conversationId: string;
  startSeq: number;
  messages: MessageInput[];
}

/** Store a "not run: <why>" result for each tool call of an assistant message that has none yet. */
export interface SealToolCallsInput {
  conversationId: string;
  assistantSeq: number;
  /** Seq of the result of call 0; call i's result is at `firstResultSeq + i`. */
  firstResultSeq: number;
  /** Indexes of the calls to seal. */
  callIndexes: number[];
  /** Why they were not run (turn limit, cancelled, budget, ...). */
  reason: string;
}

/** Summarise older turns of a conversation into one stored summary (context compaction). */
export interface CompactConversationInput {
  workflowId: string;
  /** The tenant whose call this is: a priced summary counts against its daily cost cap (decision 0027). */
  tenant?: string;
  conversationId: string;
  /** Messages 0..length-1 are the conversation so far. */
  length: number;
  route: ModelRoute;
  /** The current compaction state, if the conversation was compacted before. */
  window?: ContextWindowState;
  /** Another conversation's turns this one continues (a fork): kept verbatim, like the head. */
  prefix?: ConversationPrefix;
  /** Keep fewer recent turns than usual (after the provider said the prompt was too long). */
  aggressive?: boolean;
  /**
   * The threshold the prompt passed and what its tool specs take (from the model turn that asked for
   * compaction): the verbatim tail is sized so that the prompt lands under the threshold with room for
   * new turns, instead of compacting again at the next one (review N8).
   */
  budget?: { thresholdTokens: number; toolTokens: number };
}

/** The new compaction state, or why nothing could be compacted. */
export type CompactConversationOutput =
  | { compacted: true; window: ContextWindowState; summarisedMessages: number; tokensBefore: number; tokensAfter: number; usage: TokenUsage }
  | { compacted: false; reason: string; usage: TokenUsage };

/** One model call over the first `length` messages of a conversation. */
export interface ModelTurnInput {
  workflowId: string;
  /** The tenant whose call this is: its priced calls count against its daily cost cap (decision 0027). */
  tenant?: string;
  conversationId: string;
  /** Messages 0..length-1 are the conversation so far; the answer is stored at `length`. */
  length: number;
  route: ModelRoute;
  toolsets: string[];
  toolFilter?: { allow?: string[]; deny?: string[] };
  /** The turn of this run (an activation, an attempt of a recipe's checks), counted against `maxTurns`. */
  turn: number;
  maxTurns: number;
  /** The workflow's turns so far, this one included (peek's `turns`): what the text-so-far is labelled with. */
  totalTurn?: number;
  /** A transient note for this call only (e.g. the turn budget reminder); not stored. */
  note?: string;
  /** Output-token limit (delegate > recipe > agent); absent = the model entry's or the configured default. */
  maxOutputTokens?: number;
  /** When the run's time budget ends (epoch ms, workflow clock): an answer still streaming then is cut. */
  deadlineAt?: number;
  /** Messages to store at `startSeq` before the call (the user message or notices of this turn). */
  pending?: { startSeq: number; messages: MessageInput[] };
  /** Compaction state: which older messages a summary stands for. */
  window?: ContextWindowState;
  /** Another conversation's turns this one continues (a fork): the model sees them before messages `0..length-1`. */
  prefix?: ConversationPrefix;
  /** Check the estimated prompt against the context window first, and ask for a compaction instead of calling when it is over. */
  checkContext?: boolean;
  /** Orchestration tools (load, delegate, ...) to offer besides the toolsets; handled by the workflow. */
  orchestrationTools?: string[];
  /** Narrowings of the operator's tool policy by the recipe and the delegation (never widen it). */
  toolPolicy?: ToolPolicyNarrowingWire[];
  /** Recipe-declared MCP servers among `toolsets`: registered by the worker before tools are listed. */
  recipeServers?: RecipeServerWire[];
  /** The agent's memory folder: its memory tools are offered besides the toolsets (decision 0031). */
  memory?: AgentMemoryLocation;
  /** The working directory (recipe servers run for it, in the sandbox where one is configured). */
  workingDir?: string;
  /** Offer the `final_output` tool, whose input schema is the stored output schema (SEMANTICS §5). */
  finalOutput?: FinalOutputTool;
}

/** The `final_output` tool of a structured-output run: its schema, stored once, by key. */
export interface FinalOutputTool {
  schemaKey: string;
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
  /**
   * An orchestration call the workflow must not run (the policy denies it, or its arguments were not a
   * JSON object): the workflow stores this text as its error result instead.
   */
  denied?: string;
  /**
   * A fast built-in file tool (read, write, list, search): the workflow runs it as a local activity, inside
   * the workflow task that received the answer, instead of a workflow task and an activity task of its own.
   */
  local?: true;
  /** The call's own time limit (`run_command`'s `timeout_ms`, clamped): the activity that runs it must outlast it. */
  timeLimitMs?: number;
}

/** What a model call returns to the workflow. */
export interface ModelTurnOutput {
  /** The assistant text, cut to the inline limit when `textTruncated`. */
  text: string;
  textTruncated: boolean;
  toolCalls: ToolCallRef[];
  finishReason: FinishReason;
  usage: TokenUsage;
  /** The output-token limit the call was made with. */
  maxOutputTokens: number;
  /** Set when errand's own cap on an answer's bytes or time cut it off (finish reason `length`). */
  answerCap?: AnswerCap;
  /**
   * Set instead of an answer when `checkContext` found the estimated prompt over the compaction threshold:
   * nothing was sent to the model and nothing stored.
   */
  needsCompaction?: {
    estimatedTokens: number;
    thresholdTokens: number;
    contextWindow: number;
    /** What the prompt takes besides the messages (the offered tools' specs): compaction cannot shrink it, so the tail it keeps leaves room for it. */
    toolTokens?: number;
  };
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
  /** The agent's memory folder: its memory tools (`memory__*`) work there (decision 0031). */
  memory?: AgentMemoryLocation;
  /** The decision on a call that needed approval. */
  approval?: ApprovalDecision;
  /** Set for a `final_output` call: its arguments are validated against this stored schema. */
  finalOutput?: FinalOutputTool;
  /** The agent file's hooks (`PreToolUse` and `PostToolUse` run around the call, in this activity). */
  hooks?: AgentHooksWire;
}

/** What a tool call returns to the workflow. */
export interface RunToolOutput {
  isError: boolean;
  /** The start of the tool's output. */
  preview: string;
  /** For a `final_output` call: the accepted value, or why it was not accepted. */
  finalOutput?: FinalOutputVerdict;
}

/** The verdict on one `final_output` call. */
export type FinalOutputVerdict = { valid: true; value: JsonObject } | { valid: false; errors: string[] };

/** Read the full text of one stored message. */
export interface ReadMessageTextInput {
  conversationId: string;
  seq: number;
}

/** Read the text of one stored message if it is at most `maxChars` long. */
export interface ReadMessageTextUpToInput extends ReadMessageTextInput {
  maxChars: number;
}

/** The text of a stored message when it was short enough, else only its length. JSON. */
export type MessageTextUpTo = { text: string } | { tooLong: number };


/** What the delegating workflow is, for planning a delegation (SEMANTICS §2-§3). */
export interface DelegationParent {
  workflowId: string;
  taskId: string;
  /** Depth of the child to be started (parent depth + 1). */
  childDepth: number;
  maxDepth: number;
  workingDir: string;
  /** The parent's route; absent for an MCP session, which has no model of its own (the child's is chosen without it). */
  route?: ModelRoute;
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
  /** Tokens the parent has left of its budget: a child gets at most this much. */
  remainingBudget?: number;
  /** Milliseconds the parent has left of its time budget (workflow clock): a child gets at most this much. */
  remainingTimeMs?: number;
  /** Micro-dollars the parent has left of its cost budget: a child gets at most this much. */
  remainingCostMicroUsd?: number;
  /**
   * Prompt tokens of the parent's last model call as its provider reported them: what a fork's first
   * prompt repeats (the fork continues exactly that conversation). Given only with `conversation`.
   */
  conversationTokens?: number;
  /** Who may decide the child's own children's approvals (inherited). */
  approvers?: Approvers;
  /**
   * The parent's conversation up to its last completed turn (before the assistant message whose
   * `delegate` call is being planned), given only when that call asks for `fork: true`.
   */
  conversation?: ConversationPrefix;
}

/** Plan a delegation: resolve its source, render and validate it, apply precedence rules. */
export interface PlanDelegationInput {
  /** The model's raw `delegate` arguments: validated (strictly) by the activity. */
  request: JsonObject;
  parent: DelegationParent;
}

/** A delegation the planner can start: a ready child input. */
export interface PlannedDelegation {
  ok: true;
  input: SubagentInput;
  source?: SourceSummary;
  warnings: string[];
  /** The delegated agent says `background: true`: run it in the background whatever the call asked. */
  forceBackground?: true;
  /** A fork's or a large `context`'s first prompt as estimated (checked again when the child's caps are fitted at its start). */
  firstPrompt?: { tokens: number; costMicroUsd?: number; fork: boolean };
}

/**
 * The plan: a ready child input, or why it cannot start. `message` is the failure as the calling model
 * reads it (rendered where the activity ends); `failure` is the typed failure it was rendered from, absent
 * in results recorded before planning failures had a type (decision 0041).
 */
export type PlanDelegationOutput = PlannedDelegation | { ok: false; message: string; failure?: PlanningFailure };

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

/** Deliver a message or an approval decision to a child workflow by update, and say whether it was accepted. */
export type DeliverToChildInput =
  | { workflowId: string; kind: 'message'; message: string; messageId: string; from: string }
  | { workflowId: string; kind: 'approval'; approvalId: string; decision: 'approve' | 'deny'; reason?: string; by: string; updateId: string };

/** Whether the child accepted it; if not, why (it has ended, it is not continuable, nothing is pending). */
export type DeliverToChildOutput = { accepted: true; queuedTurns?: number } | { accepted: false; reason: string };

/** Ask Temporal how children this workflow no longer watches are doing (started before a continue-as-new). */
export interface ProbeChildrenInput {
  workflowIds: string[];
}

/** A child that has closed, with its result when it returned one. */
export interface ClosedChild {
  workflowId: string;
  /** Temporal's status name: COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT, ... */
  temporalStatus: string;
  /** The child's own result, when it completed (it then settled itself, unless the signal was lost). */
  result?: SubagentResult;
  /** What Temporal says about a child that did not complete (failure message, termination reason). */
  diagnostic?: string;
}

/** Plan a workflow run a session's model (or MCP client) asked for with `run_workflow`. */
export interface PlanWorkflowRunInput {
  /** The tool call's arguments, unchecked (the activity validates them). */
  request: JsonObject;
  workingDir: string;
  tenant?: string;
  /** Who starts it (the session's workflow id), for the run's details. */
  startedBy: string;
  /** What is left of the caller's caps for a new task (its running tasks' holds taken off). */
  remainingBudget?: number;
  remainingTimeMs?: number;
  remainingCostMicroUsd?: number;
}

/** A planned run (its input, stored by content under `inputKey` for a resume of the ended run), or why not. */
export type PlanWorkflowRunOutput =
  | { ok: true; input: WorkflowRunInput; inputKey: string; projectionText: string }
  | { ok: false; message: string };

/** Read the text a child's model call has written so far (for the parent's `load(task_id, peek: true)`). */
export interface ReadLiveTextInput {
  workflowId: string;
}

/** The agent loop's activities: conversation, model calls and tool calls. */
export interface AgentLoopActivities {
  appendMessages(input: AppendMessagesInput): Promise<void>;
  modelTurn(input: ModelTurnInput): Promise<ModelTurnOutput>;
  runTool(input: RunToolInput): Promise<RunToolOutput>;
  readMessageText(input: ReadMessageTextInput): Promise<string>;
  readMessageTextUpTo(input: ReadMessageTextUpToInput): Promise<MessageTextUpTo>;
  sealToolCalls(input: SealToolCallsInput): Promise<void>;
  compactConversation(input: CompactConversationInput): Promise<CompactConversationOutput>;
}

/** The activities behind the orchestration tools (sources, planning, model listing). */
export interface OrchestrationActivities {
  planDelegation(input: PlanDelegationInput): Promise<PlanDelegationOutput>;
  loadListing(input: LoadListingInput): Promise<string>;
  loadSource(input: LoadSourceInput): Promise<string>;
  listSubagentModels(input: { provider?: string; model?: string }): Promise<string>;
  deliverToChild(input: DeliverToChildInput): Promise<DeliverToChildOutput>;
  /** Closed children among those asked about (running ones are left out). */
  probeChildren(input: ProbeChildrenInput): Promise<ClosedChild[]>;
  /** The child's text-so-far from its pending model call's heartbeat details; null when it is not writing. */
  readLiveText(input: ReadLiveTextInput): Promise<LiveText | null>;
  /** Plans a `run_workflow` call: its script (inline or a workflow source), caps within what is left, the projection. */
  planWorkflowRun(input: PlanWorkflowRunInput): Promise<PlanWorkflowRunOutput>;
  /** A running workflow run's view as text (for `load(task_id, peek: true)` on a run). */
  peekWorkflowRun(input: { workflowId: string }): Promise<string>;
}

/** Every activity a session or subagent workflow schedules. */
export type AgentActivities = AgentLoopActivities & OrchestrationActivities;

export type { ApprovalDecision, MessageInput, MessageRef, RecipeServerWire, RunningRecipe, TextPart, ToolPolicyNarrowingWire } from './agent-wire';

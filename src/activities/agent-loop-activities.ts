import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type {
  AgentLoopActivities,
  AppendMessagesInput,
  CompactConversationInput,
  CompactConversationOutput,
  MessageInput,
  ModelTurnInput,
  ModelTurnOutput,
  MessageTextUpTo,
  ReadMessageTextInput,
  ReadMessageTextUpToInput,
  RunToolInput,
  RunToolOutput,
  SealToolCallsInput,
  TextPart,
} from '../contracts/activities';
import { FailureType } from '../contracts/failures';
import { previewLength } from '../contracts/limits/workflow';
import { addUsage, zeroUsage, type ChatMessage, type ModelResponse, type TokenUsage } from '../contracts/model';
import type { JsonObject } from '../contracts/json';
import { formatDenial } from '../domain/delegation-texts';
import { finalOutputToolName } from '../domain/final-output';
import { orchestrationToolSpecs } from '../domain/orchestration-tools';
import { preview, toolHookAdditions, toolHookBlocked } from '../domain/subagent-prompt';
import { defaultOutputTokensFor } from '../domain/model-precedence';
import { estimateTokens } from '../domain/token-estimate';
import type { ModelRegistry } from '../llm/model-port';
import { inModelSpan, inToolSpan, nameToolSpan, recordModelAnswer, recordToolOutcome } from '../observability/genai-spans';
import { toolError } from '../tools/tool';
import { applyOrchestrationPolicy, applyToolPolicy, checkToolCall, type ToolPolicyConfig } from '../tools/tool-policy';
import type { SpendRecord } from '../contracts/tenant-spend';
import type { WorkerToolsetRegistry } from '../tools/toolset-registry-factory';
import type { AgentMemoryOptions } from './agent-memory';
import { isMemoryTool, memoryToolSpecs, runMemoryTool } from './memory-tools';
import { checkReasoningEffort, classifyAndThrow, classifyStoreErrors, modelInfo, resolveModel } from './agent-loop-failures';
import type { BlobStore } from './blob-store';
import { compactConversation, windowedMessages } from './compaction';
import { liveText, type LiveText } from '../contracts/live-text';
import { FinalOutputTools } from './final-output';
import { appendFirstWins, mayHaveRun, storedAnswer, storedToolResult, storeFirstWins, type ToolResultOutcome } from './first-writer-wins';
import { invalidArgumentsText, toModelTurnOutput } from './model-turn-output';
import { defaultHeartbeatSettings, withHeartbeat, type HeartbeatSettings } from './heartbeat';
import { conversationSegment, type ConversationStore } from './conversation-store';
import type { TenantSpendGuard } from './tenant-spend-guard';
import { resolveTextParts } from './text-parts';
import type { AgentHooksWire } from '../contracts/agent-hooks';
import type { CommandOptions } from '../tools/command-environment';
import type { PathRules } from '../tools/confine-path';
import { hookToolNames, matchingHooks } from './agent-hook-matching';
import { runHooks, type HookProgress, type HookRunOutcome } from './agent-hook-runner';
import { hookProgress } from './hook-progress';
import { storedOutcome, storeOutcome } from './stored-outcomes';

/** What the agent-loop activities need; injected so tests and the worker choose the real parts. */
export interface AgentLoopActivityDependencies {
  models: ModelRegistry;
  toolsets: WorkerToolsetRegistry;
  conversations: ConversationStore;
  /** Holds model answers and tool results by turn, so a retried activity never repeats finished work. */
  blobs: BlobStore;
  /** How agents' memory folders are kept (revisions kept per file, `ERRAND_MEMORY_REVISIONS_KEPT`); absent: the defaults. */
  memory?: AgentMemoryOptions;
  /** The operator's tool policy (allow / ask / deny per toolset or tool); absent = allow all. */
  toolPolicy?: ToolPolicyConfig;
  /** Output-token limit when neither the call nor the model entry sets one (`ERRAND_MAX_OUTPUT_TOKENS`). */
  defaultMaxOutputTokens: number;
  /** Share of the context window at which a conversation is compacted before a call (`ERRAND_COMPACT_AT`). */
  compactAt: number;
  /** How model and tool calls heartbeat (live-text interval, the in-flight registry); absent: the defaults. */
  heartbeats?: HeartbeatSettings;
  /**
   * The tenant's daily cap where money is spent (set when the operator caps a tenant's daily cost,
   * `ERRAND_TENANT_DAILY_COST_USD`; decision 0027): checked before each model call, told of each priced one.
   */
  tenantSpend?: TenantSpendGuard;
  /** How `run_command` runs on this worker: an agent file's command hooks run the same way (absent: hooks cannot run). */
  commands?: CommandOptions;
  /** The worker's path rules (working root, errand's own folders), for hooks' working directory. */
  paths?: PathRules;
}

/** Refuses the model call at the tenant's daily cap (a `DailyCostCap` failure), under heartbeats while the day is read. */
async function checkDailyCap(guard: TenantSpendGuard | undefined, tenant: string | undefined, heartbeats: HeartbeatSettings): Promise<void> {
  if (guard && tenant !== undefined) await withHeartbeat(() => guard.check(tenant), heartbeats);
}

/** Reports a priced call to the tenant's day under heartbeats; the guard logs a failed report and never throws. */
function reportSpend(guard: TenantSpendGuard, tenant: string, record: SpendRecord, heartbeats: HeartbeatSettings): Promise<void> {
  // The run's workflow owns the call: its start's hold on the day's cap ends as its spend is counted.
  const owner = Context.current().info.workflowExecution?.workflowId;
  return withHeartbeat(() => guard.report(tenant, owner === undefined ? record : { ...record, owner }), heartbeats);
}

/** The transient note (turn budget) for this call only: added to the last user or tool message, never stored. */
function withNote(messages: ChatMessage[], note: string | undefined): ChatMessage[] {
  if (!note) return messages;
  const last = messages[messages.length - 1];
  const marked = `[errand] ${note}`;
  if (last && (last.role === 'user' || last.role === 'tool')) return [...messages.slice(0, -1), { ...last, content: `${last.content}\n\n${marked}` }];
  return [...messages, { role: 'user', content: marked }];
}

/**
 * Builds the agent-loop activities (sessions and subagents alike). Each one is idempotent: a retry after
 * a lost worker finds the stored outcome of a model or tool call that already finished and returns it,
 * so no finished turn is ever paid for or run twice.
 */
export function createAgentLoopActivities(deps: AgentLoopActivityDependencies): AgentLoopActivities {
  const finalOutput = new FinalOutputTools(deps.blobs);
  const heartbeats = deps.heartbeats ?? defaultHeartbeatSettings;
  /** Resolves text parts: inline text, a stored message's text, or a stored blob. */
  const resolveParts = (parts: TextPart[]): Promise<string> => resolveTextParts(parts, deps);
  const toChatMessage = async (message: MessageInput): Promise<ChatMessage> => {
    if (!('parts' in message)) return message;
    const content = await resolveParts(message.parts);
    if (message.role === 'user') return { role: 'user', content };
    return { role: 'tool', toolCallId: message.toolCallId, toolName: message.toolName, content, ...(message.isError ? { isError: true } : {}) };
  };

  const appendMessages = async (input: AppendMessagesInput): Promise<void> => {
    for (const [index, message] of input.messages.entries()) {
      await deps.conversations.append(input.conversationId, input.startSeq + index, await toChatMessage(message));
    }
  };
  const parts: LoopParts = { deps, heartbeats, finalOutput, appendMessages };

  const activities: AgentLoopActivities = {
    appendMessages,

    modelTurn: (input: ModelTurnInput) => modelTurn(parts, input),

    runTool: (input: RunToolInput) => runTool(parts, input),

    async readMessageText(input: ReadMessageTextInput): Promise<string> {
      const [message] = await deps.conversations.readRange(input.conversationId, input.seq, 1);
      if (!message) {
        throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `message ${input.seq} of conversation ${input.conversationId} is missing`, nonRetryable: true });
      }
      return message.content;
    },

    async readMessageTextUpTo(input: ReadMessageTextUpToInput): Promise<MessageTextUpTo> {
      const text = await activities.readMessageText(input);
      // Its length only: a text this long would not fit in the workflow's history (a local activity's marker).
      return text.length > input.maxChars ? { tooLong: text.length } : { text };
    },

    async sealToolCalls(input: SealToolCallsInput): Promise<void> {
      const [assistant] = await deps.conversations.readRange(input.conversationId, input.assistantSeq, 1);
      const calls = assistant?.role === 'assistant' ? assistant.toolCalls ?? [] : [];
      for (const index of input.callIndexes) {
        const call = calls[index];
        if (!call) continue;
        await appendFirstWins(deps.conversations, input.conversationId, input.firstResultSeq + index, {
          role: 'tool',
          toolCallId: call.id,
          toolName: call.name,
          content: input.reason,
          isError: true,
        });
      }
    },

    async compactConversation(input: CompactConversationInput): Promise<CompactConversationOutput> {
      const model = resolveModel(deps.models, input);
      const info = modelInfo(deps.models, input);
      await checkDailyCap(deps.tenantSpend, input.tenant, heartbeats);
      const output = await withHeartbeat((abortSignal) =>
        compactConversation(input, { conversations: deps.conversations, blobs: deps.blobs, model, route: input.route, contextWindow: info.contextWindow, abortSignal }),
      heartbeats).catch((error: unknown) => classifyAndThrow(error));
      // A summary made by this attempt is a priced call of the tenant (one reused from an earlier attempt reports no usage).
      const cost = output.usage.costMicroUsd ?? 0;
      if (deps.tenantSpend && input.tenant !== undefined && output.compacted && cost > 0) await reportSpend(deps.tenantSpend, input.tenant, { key: output.window.summaryKey, costMicroUsd: cost }, heartbeats);
      return output;
    },
  };
  return {
    appendMessages: (input) => classifyStoreErrors(() => activities.appendMessages(input)),
    modelTurn: (input) => inModelSpan(deps.models, input, () => classifyStoreErrors(() => activities.modelTurn(input))),
    runTool: (input) => inToolSpan(() => classifyStoreErrors(() => activities.runTool(input))),
    readMessageText: (input) => classifyStoreErrors(() => activities.readMessageText(input)),
    readMessageTextUpTo: (input) => classifyStoreErrors(() => activities.readMessageTextUpTo(input)),
    sealToolCalls: (input) => classifyStoreErrors(() => activities.sealToolCalls(input)),
    compactConversation: (input) => classifyStoreErrors(() => activities.compactConversation(input)),
  };
}

/**
 * The prompt size (estimated tokens) above which a conversation is compacted before a call: the
 * configured share of the context window, and never so much that the answer's tokens would not fit.
 */
export function compactionThreshold(contextWindow: number, maxOutputTokens: number, compactAt: number): number {
  return Math.floor(Math.min(compactAt * contextWindow, contextWindow - Math.min(maxOutputTokens, contextWindow / 2)));
}

/** What the model and tool activities share within one set of activities. */
interface LoopParts {
  deps: AgentLoopActivityDependencies;
  heartbeats: HeartbeatSettings;
  finalOutput: FinalOutputTools;
  appendMessages(input: AppendMessagesInput): Promise<void>;
}

/**
 * One model call of a turn: the pending messages stored first, the answer stored at `length` (a retry finds
 * it and never calls the model again), the tenant's daily cap checked and its spend reported, and a call
 * that must compact first reported instead of made.
 */
async function modelTurn({ deps, heartbeats, finalOutput, appendMessages }: LoopParts, input: ModelTurnInput): Promise<ModelTurnOutput> {
  if (input.pending) await appendMessages({ conversationId: input.conversationId, startSeq: input.pending.startSeq, messages: input.pending.messages });
  const info = modelInfo(deps.models, input);
  checkReasoningEffort(info, input.route.reasoningEffort);
  const maxOutputTokens = input.maxOutputTokens ?? info.maxOutputTokens ?? defaultOutputTokensFor(info.contextWindow, deps.defaultMaxOutputTokens);
  // The answer stored at `length` is this call's outcome: a retry finds it and never calls the model again.
  const stored = mayHaveRun() ? await deps.conversations.readStored(input.conversationId, input.length) : undefined;
  let response: ModelResponse;
  let lostCall: TokenUsage | undefined;
  if (stored !== undefined) {
    response = storedAnswer(stored, input.conversationId, input.length);
  } else {
    const model = resolveModel(deps.models, input);
    const messages = withNote(await windowedMessages(deps.conversations, deps.blobs, input.conversationId, input.length, input.window, input.prefix), input.note);
    // Orchestration tools fall under the same policy; `approve` only where the operator lets the parent decide.
    const orchestration = applyOrchestrationPolicy(deps.toolPolicy, input.toolPolicy ?? [], input.orchestrationTools ?? []).offered.map((name) => orchestrationToolSpecs[name]);
    // Listing tools may start an MCP server: it runs under the heartbeat like the model call.
    let written = '';
    // The attempt goes with the text: Temporal keeps an attempt's heartbeat details for the next one.
    const attempt = Context.current().info.attempt;
    const live = (): LiveText | undefined => (written.length > 0 ? liveText(written, input.totalTurn ?? input.turn, attempt) : undefined);
    // The tenant's daily cap, checked where money is spent: a refused call ends the run `budget`.
    await checkDailyCap(deps.tenantSpend, input.tenant, heartbeats);
    const outcome = await withHeartbeat(async (abortSignal): Promise<{ response: ModelResponse } | { needsCompaction: NonNullable<ModelTurnOutput['needsCompaction']> }> => {
      await deps.toolsets.ensureRecipeServers(input.recipeServers ?? []);
      // An agent with memory gets its memory tools whatever its `tools` list says (as in Claude Code); the policy still applies.
      // They take precedence over a same-named tool of an operator's toolset called `memory` (runTool routes them so too).
      const memory = input.memory ? memoryToolSpecs : [];
      const toolsetSpecs = (await deps.toolsets.specsFor(input.toolsets, input.toolFilter, input.workingDir)).filter((spec) => !input.memory || !isMemoryTool(spec.name));
      const policed = applyToolPolicy([...orchestration, ...toolsetSpecs, ...memory], deps.toolPolicy, input.toolPolicy ?? []).offered;
      // final_output is how a structured-output run delivers its result, not a capability: no policy takes it away.
      const offered = input.finalOutput ? [...policed, await finalOutput.spec(input.finalOutput.schemaKey)] : policed;
      if (input.checkContext) {
        const estimatedTokens = estimateTokens(messages, offered);
        const thresholdTokens = compactionThreshold(info.contextWindow, maxOutputTokens, deps.compactAt);
        if (estimatedTokens > thresholdTokens) return { needsCompaction: { estimatedTokens, thresholdTokens, contextWindow: info.contextWindow, toolTokens: estimateTokens([], offered) } };
      }
      const reasoningEffort = input.route.reasoningEffort;
      return {
        response: await model.generate(
          { route: input.route, messages, tools: offered, maxOutputTokens, ...(reasoningEffort !== undefined ? { reasoningEffort } : {}) },
          { abortSignal, onText: (text) => { written = text; }, ...(input.deadlineAt !== undefined ? { answerDeadline: { at: input.deadlineAt, setting: 'time_budget' } } : {}) },
        ),
      };
    }, heartbeats, live).catch((error: unknown) => classifyAndThrow(error));
    if ('needsCompaction' in outcome) {
      return { text: '', textTruncated: false, toolCalls: [], finishReason: 'other', usage: zeroUsage, maxOutputTokens, needsCompaction: outcome.needsCompaction };
    }
    const answer = outcome.response;
    const winner = await storeFirstWins(deps.conversations, input.conversationId, input.length, {
      role: 'assistant',
      content: answer.text,
      ...(answer.toolCalls.length > 0 ? { toolCalls: answer.toolCalls } : {}),
      ...(answer.reasoning && answer.reasoning.length > 0 ? { reasoning: answer.reasoning } : {}),
    }, { usage: { ...answer.usage }, finishReason: answer.finishReason, ...(answer.answerCap ? { answerCap: { ...answer.answerCap } } : {}) });
    response = storedAnswer(winner, input.conversationId, input.length);
    // Another attempt stored its answer first: this one's call was made and billed all the same.
    if (!winner.won) lostCall = answer.usage;
  }
  recordModelAnswer(trace.getActiveSpan(), response, stored !== undefined);
  // Also for a stored answer reused by a retry: the report of the first attempt may have been lost.
  const cost = response.usage.costMicroUsd ?? 0;
  if (deps.tenantSpend && input.tenant !== undefined && cost > 0) await reportSpend(deps.tenantSpend, input.tenant, { key: `${input.conversationId}#${input.length}`, costMicroUsd: cost }, heartbeats);
  if (!lostCall) return toModelTurnOutput(response, input, deps.toolPolicy, maxOutputTokens);
  // The losing call counts too: in the tenant's day under a key of its own (the winner's key is taken), and in
  // what this attempt returns, so the run's token and cost caps see both calls when this attempt is the one
  // Temporal records. An attempt that loses and is itself superseded is counted in the day only.
  const lostCost = lostCall.costMicroUsd ?? 0;
  if (deps.tenantSpend && input.tenant !== undefined && lostCost > 0) {
    await reportSpend(deps.tenantSpend, input.tenant, { key: `${input.conversationId}#${input.length}#lost-${randomUUID()}`, costMicroUsd: lostCost }, heartbeats);
  }
  return toModelTurnOutput({ ...response, usage: addUsage(response.usage, lostCall) }, input, deps.toolPolicy, maxOutputTokens);
}

/**
 * One tool call of a turn: the result stored at `resultSeq` is its outcome (a retry finds it and never runs
 * the tool again); the policy is checked again, and the agent's tool hooks run around it.
 */
async function runTool({ deps, heartbeats, finalOutput }: LoopParts, input: RunToolInput): Promise<RunToolOutput> {
  const [assistant] = await deps.conversations.readRange(input.conversationId, input.assistantSeq, 1);
  const call = assistant?.role === 'assistant' ? assistant.toolCalls?.[input.callIndex] : undefined;
  if (!call) {
    throw ApplicationFailure.create({
      type: FailureType.blobMissing,
      message: `message ${input.assistantSeq} of conversation ${input.conversationId} has no tool call #${input.callIndex}`,
      nonRetryable: true,
    });
  }
  nameToolSpan(trace.getActiveSpan(), { name: call.name, callId: call.id });
  // The result stored at `resultSeq` is this call's outcome: a retry finds it and never runs the tool again.
  const stored = mayHaveRun() ? await deps.conversations.readStored(input.conversationId, input.resultSeq) : undefined;
  let result: ToolResultOutcome;
  if (stored !== undefined) {
    result = storedToolResult(stored, input.conversationId, input.resultSeq);
  } else {
    if (call.invalidArguments !== undefined) {
      result = toolError(invalidArgumentsText(call.name, call.invalidArguments));
    } else if (input.finalOutput && call.name === finalOutputToolName) {
      // Validated here (ajv stays out of the workflow bundle); the verdict is stored with the result like any outcome.
      result = await finalOutput.check(input.finalOutput.schemaKey, call.arguments);
    } else {
      // The policy is checked again at run time: the model may call a tool it was not offered.
      const verdict = checkToolCall(deps.toolPolicy, input.toolPolicy ?? [], call.name, input.approval?.decision === 'approve');
      if (!verdict.run) {
        result = toolError(input.approval?.decision === 'deny' ? formatDenial(call.name, input.approval) : verdict.message);
      } else {
        const memory = input.memory;
        const hooks = input.hooks;
        const toolNames = hookToolNames(call.name, hooks?.serverNames);
        const hookInput = { tool_name: toolNames[0] ?? call.name, tool_input: call.arguments, tool_use_id: call.id, errand_tool_name: call.name };
        // What this call's hooks and tool came to is stored as each finishes: a retried attempt resumes
        // after them, so a hook or the tool runs once per call (the result at resultSeq is stored last).
        const callKey = `outcomes/tool-hooks/${conversationSegment(input.conversationId)}/${input.resultSeq}`;
        const runToolHooks = async (event: 'PreToolUse' | 'PostToolUse', extra: JsonObject): Promise<HookRunOutcome | undefined> => {
          const matched = hooks ? matchingHooks(event === 'PreToolUse' ? hooks.preToolUse : hooks.postToolUse, toolNames) : [];
          if (!hooks || matched.length === 0) return undefined;
          const progress = await hookProgress(deps.blobs, `${callKey}/${event === 'PreToolUse' ? 'pre' : 'post'}`, matched.length, mayHaveRun());
          return withHeartbeat((abortSignal) => runToolHookGroup(matched, event, { ...hookInput, ...extra }, hooks, input, abortSignal, progress), heartbeats);
        };
        const runToolHookGroup = (matched: ReturnType<typeof matchingHooks>, event: string, hookStdin: JsonObject, wire: AgentHooksWire, run: RunToolInput, abortSignal: AbortSignal, progress: HookProgress) => {
          if (!deps.commands || !deps.paths) return Promise.resolve<HookRunOutcome>({ blocked: event === 'PreToolUse', feedback: ['this worker has no command settings, so the agent\'s hooks cannot run'], context: [], notes: [] });
          return runHooks(matched, event, hookStdin, { hooks: wire, workflowId: run.workflowId, workingDir: run.workingDir, ...(run.toolPolicy ? { toolPolicy: run.toolPolicy } : {}), abortSignal }, { commands: deps.commands, paths: deps.paths, ...(deps.toolPolicy ? { toolPolicy: deps.toolPolicy } : {}) }, progress);
        };
        const pre = await runToolHooks('PreToolUse', {});
        if (pre?.blocked) {
          result = toolError(toolHookBlocked(call.name, hooks?.agentName ?? '', pre.feedback));
        } else {
          const runCall = async (): Promise<ToolResultOutcome> => {
            if (memory && isMemoryTool(call.name)) return withHeartbeat((abortSignal) => runMemoryTool(deps.blobs, memory, call.name, call.arguments, abortSignal, deps.memory), heartbeats);
            await deps.toolsets.ensureRecipeServers(input.recipeServers ?? []);
            return withHeartbeat((abortSignal) =>
              deps.toolsets.call(call.name, call.arguments, { workingDir: input.workingDir, abortSignal }, {
                toolsetNames: input.toolsets,
                ...(input.toolFilter ? { filter: input.toolFilter } : {}),
              }), heartbeats,
            );
          };
          // With PostToolUse hooks after it, the tool's own result is kept before they run: a retry reuses it.
          const ranBefore = hooks?.postToolUse && mayHaveRun() ? await storedOutcome<ToolResultOutcome>(deps.blobs, `${callKey}/tool.json`) : undefined;
          result = ranBefore ?? (await runCall());
          if (hooks?.postToolUse && !ranBefore) result = await storeOutcome(deps.blobs, `${callKey}/tool.json`, result);
          // PostToolUse in Claude Code follows a call that succeeded.
          const post = result.isError ? undefined : await runToolHooks('PostToolUse', { tool_response: result.content });
          const added = toolHookAdditions(pre, post);
          if (added.length > 0) result = { ...result, content: [result.content, ...added].join('\n\n') };
        }
      }
    }
    const winner = await storeFirstWins(deps.conversations, input.conversationId, input.resultSeq, {
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      content: result.content,
      ...(result.isError ? { isError: true } : {}),
    }, result.finalOutput ? { finalOutput: { ...result.finalOutput } } : undefined);
    result = storedToolResult(winner, input.conversationId, input.resultSeq);
  }
  recordToolOutcome(trace.getActiveSpan(), { isError: result.isError, stored: stored !== undefined });
  return { isError: result.isError, preview: preview(result.content, previewLength), ...(result.finalOutput ? { finalOutput: result.finalOutput } : {}) };
}

import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type {
  AgentLoopActivities,
  AppendMessagesInput,
  FinalOutputVerdict,
  CompactConversationInput,
  CompactConversationOutput,
  MessageInput,
  ModelTurnInput,
  ModelTurnOutput,
  ReadMessageTextInput,
  RunToolInput,
  RunToolOutput,
  SealToolCallsInput,
  TextPart,
} from '../contracts/activities';
import { FailureType } from '../contracts/failures';
import { inlineTextLimit, previewLength } from '../contracts/limits';
import { zeroUsage, type ChatMessage, type FinishReason, type ModelResponse, type TokenUsage } from '../contracts/model';
import type { JsonObject } from '../contracts/json';
import { formatDenial } from '../domain/delegation-texts';
import { finalOutputToolName } from '../domain/final-output';
import { orchestrationToolSpecs } from '../domain/orchestration-tools';
import { preview } from '../domain/subagent-prompt';
import { estimateTokens } from '../domain/token-estimate';
import { classifyModelError } from '../llm/classify-model-error';
import type { ModelInfo, ModelRegistry } from '../llm/model-port';
import { toolError } from '../tools/tool';
import { developerToolsetName } from '../tools/developer-toolset';
import { qualifyToolName } from '../tools/tool-name';
import { applyOrchestrationPolicy, applyToolPolicy, checkToolCall, resolvePolicy, type ToolPolicyConfig } from '../tools/tool-policy';
import type { WorkerToolsetRegistry } from '../tools/toolset-registry-factory';
import { isToolsetRegistryError } from '../tools/toolset-registry';
import { isBlobConflictError, type BlobStore } from './blob-store';
import { compactConversation, windowedMessages } from './compaction';
import { liveText, type LiveText } from '../contracts/live-text';
import { FinalOutputTools } from './final-output';
import { withHeartbeat } from './stored-outcomes';
import {
  isConversationMessageConflictError,
  isConversationMessageMissingError,
  type ConversationStore,
} from './conversation-store';

/** What the agent-loop activities need; injected so tests and the worker choose the real parts. */
export interface AgentLoopActivityDependencies {
  models: ModelRegistry;
  toolsets: WorkerToolsetRegistry;
  conversations: ConversationStore;
  /** Holds model answers and tool results by turn, so a retried activity never repeats finished work. */
  blobs: BlobStore;
  /** The operator's tool policy (allow / ask / deny per toolset or tool); absent = allow all. */
  toolPolicy?: ToolPolicyConfig;
  /** Output-token limit when neither the call nor the model entry sets one (`ERRAND_MAX_OUTPUT_TOKENS`). */
  defaultMaxOutputTokens: number;
  /** Share of the context window at which a conversation is compacted before a call (`ERRAND_COMPACT_AT`). */
  compactAt: number;
}

/** A tool call's result as it is stored and returned (the final_output verdict only for final_output calls). */
interface ToolResultOutcome {
  content: string;
  isError: boolean;
  finalOutput?: FinalOutputVerdict;
}

/**
 * Stores a message that is an activity's outcome, with what the message itself does not hold (`outcome`),
 * in one blob: the first writer wins. An attempt that timed out may still be running and store a
 * different answer than its retry; whichever stored first is the outcome, and the other continues with it.
 */
async function storeFirstWins(conversations: ConversationStore, conversationId: string, seq: number, message: ChatMessage, outcome?: JsonObject): Promise<{ message: ChatMessage; outcome?: JsonObject }> {
  try {
    await conversations.append(conversationId, seq, message, outcome);
    return { message, ...(outcome ? { outcome } : {}) };
  } catch (error) {
    if (!isConversationMessageConflictError(error)) throw error;
    const stored = await conversations.readStored(conversationId, seq);
    if (!stored) throw error;
    return stored;
  }
}

/** Appends a message unless one is stored at that seq already (the first writer wins). */
async function appendFirstWins(conversations: ConversationStore, conversationId: string, seq: number, message: ChatMessage): Promise<void> {
  try {
    await conversations.append(conversationId, seq, message);
  } catch (error) {
    if (!isConversationMessageConflictError(error)) throw error;
  }
}

function storedOutcomeFailure(conversationId: string, seq: number, what: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FailureType.blobMissing, message: `message ${seq} of conversation ${conversationId} is not ${what}`, nonRetryable: true });
}

/** The model's answer as stored at `seq` (the assistant message and, in `outcome`, usage and finish reason). */
function storedAnswer(stored: { message: ChatMessage; outcome?: JsonObject }, conversationId: string, seq: number): ModelResponse {
  const { message, outcome } = stored;
  if (message.role !== 'assistant') throw storedOutcomeFailure(conversationId, seq, 'a model answer');
  const usage = outcome?.usage;
  const finishReason = outcome?.finishReason;
  return {
    text: message.content,
    toolCalls: message.toolCalls ?? [],
    finishReason: typeof finishReason === 'string' && isFinishReason(finishReason) ? finishReason : 'stop',
    usage: isUsage(usage) ? { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens } : zeroUsage,
    ...(message.reasoning && message.reasoning.length > 0 ? { reasoning: message.reasoning } : {}),
  };
}

/** A tool call's result as stored at `seq` (the tool message and, for final_output, the verdict). */
function storedToolResult(stored: { message: ChatMessage; outcome?: JsonObject }, conversationId: string, seq: number): ToolResultOutcome {
  const { message, outcome } = stored;
  if (message.role !== 'tool') throw storedOutcomeFailure(conversationId, seq, 'a tool result');
  const verdict = outcome?.finalOutput;
  return {
    content: message.content,
    isError: message.isError === true,
    // Written by this module from a FinalOutputVerdict (JSON), read back unchanged.
    ...(typeof verdict === 'object' && verdict !== null && !Array.isArray(verdict) ? { finalOutput: verdict as unknown as FinalOutputVerdict } : {}),
  };
}

const finishReasons: readonly string[] = ['stop', 'tool-calls', 'length', 'content-filter', 'error', 'other'] satisfies FinishReason[];
function isFinishReason(value: string): value is FinishReason {
  return finishReasons.includes(value);
}

function isUsage(value: unknown): value is TokenUsage {
  return typeof value === 'object' && value !== null && 'inputTokens' in value && 'outputTokens' in value && typeof value.inputTokens === 'number' && typeof value.outputTokens === 'number';
}

/**
 * Built-in tools that only touch the working directory's files and finish quickly: the workflow runs them
 * as local activities (inside the workflow task that received the model's answer, one workflow task less
 * per turn). run_command (long, needs heartbeats and cancellation) and MCP tools stay normal activities.
 */
const fastBuiltInTools: ReadonlySet<string> = new Set(['read_file', 'write_file', 'list_directory', 'search_text'].map((name) => qualifyToolName(developerToolsetName, name)));

/**
 * Whether an earlier attempt of this activity may have run: any retry, and every run of a local activity
 * (a local activity starts again at attempt 1 when its workflow task is retried). A first attempt of a
 * normal activity skips the look-up (a read, or an S3 request, per call); if an outcome was stored anyway,
 * the first write still wins (see storeFirstWins).
 */
function mayHaveRun(): boolean {
  const info = Context.current().info;
  return info.isLocal || info.attempt > 1;
}

/** The transient note (turn budget) for this call only: added to the last user or tool message, never stored. */
function withNote(messages: ChatMessage[], note: string | undefined): ChatMessage[] {
  if (!note) return messages;
  const last = messages[messages.length - 1];
  const marked = `[errand] ${note}`;
  if (last && (last.role === 'user' || last.role === 'tool')) return [...messages.slice(0, -1), { ...last, content: `${last.content}\n\n${marked}` }];
  return [...messages, { role: 'user', content: marked }];
}

function classifyAndThrow(error: unknown): never {
  if (error instanceof CancelledFailure) throw error;
  // A toolset this run needs is not configured here (an MCP server removed from config, a recipe server the
  // operator does not allow): a configuration problem, not the model's, and no retry fixes it (review m18).
  if (isToolsetRegistryError(error)) throw ApplicationFailure.create({ type: FailureType.toolsetUnavailable, message: error.message, nonRetryable: true });
  const failure = classifyModelError(error);
  throw ApplicationFailure.create({
    type: failure.type,
    message: failure.message,
    nonRetryable: !failure.retryable,
    ...(failure.retryAfterMs !== undefined ? { nextRetryDelay: failure.retryAfterMs } : {}),
  });
}

/**
 * Builds the agent-loop activities (sessions and subagents alike). Each one is idempotent: a retry after
 * a lost worker finds the stored outcome of a model or tool call that already finished and returns it,
 * so no finished turn is ever paid for or run twice.
 */
export function createAgentLoopActivities(deps: AgentLoopActivityDependencies): AgentLoopActivities {
  const finalOutput = new FinalOutputTools(deps.blobs);
  /** Resolves text parts: inline text, a stored message's text, or a stored blob. */
  const resolveParts = async (parts: TextPart[]): Promise<string> => {
    const texts = await Promise.all(parts.map(async (part) => {
      if (typeof part === 'string') return part;
      if ('ref' in part) {
        const [message] = await deps.conversations.readRange(part.ref.conversationId, part.ref.seq, 1);
        if (!message) throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `message ${part.ref.seq} of conversation ${part.ref.conversationId} is missing`, nonRetryable: true });
        return message.content;
      }
      const body = await deps.blobs.get(part.blobKey);
      if (body === undefined) throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `stored message ${part.blobKey} is missing from the blob store`, nonRetryable: true });
      return body;
    }));
    return texts.join('');
  };
  const toChatMessage = async (message: MessageInput): Promise<ChatMessage> => {
    if (!('parts' in message)) return message;
    const content = await resolveParts(message.parts);
    if (message.role === 'user') return { role: 'user', content };
    return { role: 'tool', toolCallId: message.toolCallId, toolName: message.toolName, content, ...(message.isError ? { isError: true } : {}) };
  };

  const activities: AgentLoopActivities = {
    async appendMessages(input: AppendMessagesInput): Promise<void> {
      for (const [index, message] of input.messages.entries()) {
        await deps.conversations.append(input.conversationId, input.startSeq + index, await toChatMessage(message));
      }
    },

    async modelTurn(input: ModelTurnInput): Promise<ModelTurnOutput> {
      if (input.pending) await activities.appendMessages({ conversationId: input.conversationId, startSeq: input.pending.startSeq, messages: input.pending.messages });
      const info = modelInfo(deps.models, input);
      checkReasoningEffort(info, input.route.reasoningEffort);
      const maxOutputTokens = input.maxOutputTokens ?? info.maxOutputTokens ?? deps.defaultMaxOutputTokens;
      // The answer stored at `length` is this call's outcome: a retry finds it and never calls the model again.
      const stored = mayHaveRun() ? await deps.conversations.readStored(input.conversationId, input.length) : undefined;
      let response: ModelResponse;
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
        const outcome = await withHeartbeat(async (abortSignal): Promise<{ response: ModelResponse } | { needsCompaction: NonNullable<ModelTurnOutput['needsCompaction']> }> => {
          deps.toolsets.ensureRecipeServers(input.recipeServers?.map((server) => server.config) ?? []);
          const policed = applyToolPolicy([...orchestration, ...(await deps.toolsets.specsFor(input.toolsets, input.toolFilter))], deps.toolPolicy, input.toolPolicy ?? []).offered;
          // final_output is how a structured-output run delivers its result, not a capability: no policy takes it away.
          const offered = input.finalOutput ? [...policed, await finalOutput.spec(input.finalOutput.schemaKey)] : policed;
          if (input.checkContext) {
            const estimatedTokens = estimateTokens(messages, offered);
            const thresholdTokens = compactionThreshold(info.contextWindow, maxOutputTokens, deps.compactAt);
            if (estimatedTokens > thresholdTokens) return { needsCompaction: { estimatedTokens, thresholdTokens, contextWindow: info.contextWindow } };
          }
          const reasoningEffort = input.route.reasoningEffort;
          return {
            response: await model.generate(
              { route: input.route, messages, tools: offered, maxOutputTokens, ...(reasoningEffort !== undefined ? { reasoningEffort } : {}) },
              { abortSignal, onText: (text) => { written = text; } },
            ),
          };
        }, live).catch((error: unknown) => classifyAndThrow(error));
        if ('needsCompaction' in outcome) {
          return { text: '', textTruncated: false, toolCalls: [], finishReason: 'other', usage: zeroUsage, maxOutputTokens, needsCompaction: outcome.needsCompaction };
        }
        const answer = outcome.response;
        const winner = await storeFirstWins(deps.conversations, input.conversationId, input.length, {
          role: 'assistant',
          content: answer.text,
          ...(answer.toolCalls.length > 0 ? { toolCalls: answer.toolCalls } : {}),
          ...(answer.reasoning && answer.reasoning.length > 0 ? { reasoning: answer.reasoning } : {}),
        }, { usage: { ...answer.usage }, finishReason: answer.finishReason });
        response = storedAnswer(winner, input.conversationId, input.length);
      }
      return toModelTurnOutput(response, input, deps.toolPolicy, maxOutputTokens);
    },

    async runTool(input: RunToolInput): Promise<RunToolOutput> {
      const [assistant] = await deps.conversations.readRange(input.conversationId, input.assistantSeq, 1);
      const call = assistant?.role === 'assistant' ? assistant.toolCalls?.[input.callIndex] : undefined;
      if (!call) {
        throw ApplicationFailure.create({
          type: FailureType.blobMissing,
          message: `message ${input.assistantSeq} of conversation ${input.conversationId} has no tool call #${input.callIndex}`,
          nonRetryable: true,
        });
      }
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
            deps.toolsets.ensureRecipeServers(input.recipeServers?.map((server) => server.config) ?? []);
            result = await withHeartbeat((abortSignal) =>
              deps.toolsets.call(call.name, call.arguments, { workingDir: input.workingDir, abortSignal }, {
                toolsetNames: input.toolsets,
                ...(input.toolFilter ? { filter: input.toolFilter } : {}),
              }),
            );
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
      return { isError: result.isError, preview: preview(result.content, previewLength), ...(result.finalOutput ? { finalOutput: result.finalOutput } : {}) };
    },

    async readMessageText(input: ReadMessageTextInput): Promise<string> {
      const [message] = await deps.conversations.readRange(input.conversationId, input.seq, 1);
      if (!message) {
        throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `message ${input.seq} of conversation ${input.conversationId} is missing`, nonRetryable: true });
      }
      return message.content;
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
      return withHeartbeat((abortSignal) =>
        compactConversation(input, { conversations: deps.conversations, blobs: deps.blobs, model, route: input.route, contextWindow: info.contextWindow, abortSignal }),
      ).catch((error: unknown) => classifyAndThrow(error));
    },
  };
  return {
    appendMessages: (input) => classifyStoreErrors(() => activities.appendMessages(input)),
    modelTurn: (input) => classifyStoreErrors(() => activities.modelTurn(input)),
    runTool: (input) => classifyStoreErrors(() => activities.runTool(input)),
    readMessageText: (input) => classifyStoreErrors(() => activities.readMessageText(input)),
    sealToolCalls: (input) => classifyStoreErrors(() => activities.sealToolCalls(input)),
    compactConversation: (input) => classifyStoreErrors(() => activities.compactConversation(input)),
  };
}

/** What the workflow sees of an answer: previews, plus full arguments for the tools it runs itself. */
function toModelTurnOutput(response: ModelResponse, input: ModelTurnInput, operator: ToolPolicyConfig | undefined, maxOutputTokens: number): ModelTurnOutput {
  const orchestration = input.orchestrationTools ?? [];
  const narrowings = input.toolPolicy ?? [];
  const truncated = response.text.length > inlineTextLimit;
  return {
    text: truncated ? preview(response.text, inlineTextLimit) : response.text,
    textTruncated: truncated,
    toolCalls: response.toolCalls.map((call) => {
      // The final_output tool is never under a policy (see modelTurn): no approval, no denial.
      const decision = input.finalOutput && call.name === finalOutputToolName ? 'allow' : resolvePolicy(operator, narrowings, call.name);
      const handledByWorkflow = orchestration.includes(call.name);
      return {
        id: call.id,
        name: call.name,
        argumentsPreview: preview(JSON.stringify(call.arguments), previewLength),
        // The workflow handles orchestration tools itself, so it needs their full arguments.
        ...(handledByWorkflow ? { arguments: call.arguments } : {}),
        ...(decision === 'ask' ? { needsApproval: true as const } : {}),
        ...(handledByWorkflow && decision === 'deny' ? { denied: `The tool ${call.name} is not allowed by policy.` } : {}),
        ...(handledByWorkflow && decision !== 'deny' && call.invalidArguments !== undefined ? { denied: invalidArgumentsText(call.name, call.invalidArguments) } : {}),
        ...(!handledByWorkflow && fastBuiltInTools.has(call.name) ? { local: true as const } : {}),
      };
    }),
    finishReason: response.finishReason,
    usage: response.usage,
    maxOutputTokens,
  };
}

/**
 * A missing or conflicting conversation entry is a broken invariant, not a passing fault: it is made a
 * non-retryable failure with a clear message instead of being retried until the activity times out.
 */
async function classifyStoreErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isConversationMessageMissingError(error) || isConversationMessageConflictError(error) || isBlobConflictError(error)) {
      throw ApplicationFailure.create({ type: FailureType.blobMissing, message: error.message, nonRetryable: true });
    }
    throw error;
  }
}

function resolveModel(models: ModelRegistry, input: { route: ModelTurnInput['route'] }) {
  try {
    return models.resolve(input.route);
  } catch (error) {
    throw ApplicationFailure.create({ type: FailureType.modelNotConfigured, message: error instanceof Error ? error.message : String(error), nonRetryable: true });
  }
}

function modelInfo(models: ModelRegistry, input: { route: ModelTurnInput['route'] }) {
  try {
    return models.modelInfo(input.route);
  } catch (error) {
    throw ApplicationFailure.create({ type: FailureType.modelNotConfigured, message: error instanceof Error ? error.message : String(error), nonRetryable: true });
  }
}

/**
 * A route's effort must be one its model's entry lists. Planning only makes such routes; a route given
 * directly (a session or subagent input started by hand) is checked here, so it fails once with a clear
 * message instead of as a provider's 400 after retries.
 */
function checkReasoningEffort(info: ModelInfo, effort: string | undefined): void {
  if (effort === undefined || info.reasoningEfforts.includes(effort)) return;
  throw ApplicationFailure.create({
    type: FailureType.modelNotConfigured,
    message:
      info.reasoningEfforts.length === 0
        ? `reasoning effort "${effort}" cannot be sent: model ${info.provider}/${info.model} takes none (its provider entry lists no reasoningEfforts)`
        : `reasoning effort "${effort}" is not one model ${info.provider}/${info.model} takes; valid: ${info.reasoningEfforts.join(', ')}`,
    nonRetryable: true,
  });
}

/**
 * The prompt size (estimated tokens) above which a conversation is compacted before a call: the
 * configured share of the context window, and never so much that the answer's tokens would not fit.
 */
export function compactionThreshold(contextWindow: number, maxOutputTokens: number, compactAt: number): number {
  return Math.floor(Math.min(compactAt * contextWindow, contextWindow - Math.min(maxOutputTokens, contextWindow / 2)));
}

/** The tool result of a call whose arguments were not a JSON object: what was wrong, so the model can call again. */
function invalidArgumentsText(tool: string, raw: string): string {
  return `The call of ${tool} was not run: its arguments are not a JSON object (${raw.length === 0 ? 'empty' : `got ${raw}`}). Call ${tool} again with a JSON object that matches its input schema.`;
}

import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type {
  AppendMessagesInput,
  ModelTurnInput,
  ModelTurnOutput,
  ReadMessageTextInput,
  RunToolInput,
  RunToolOutput,
  AgentLoopActivities,
} from '../contracts/activities';
import { FailureType } from '../contracts/failures';
import { inlineTextLimit, modelHeartbeatIntervalMs, previewLength } from '../contracts/limits';
import type { ChatMessage, ModelResponse } from '../contracts/model';
import { isOrchestrationTool, orchestrationToolSpecs } from '../domain/orchestration-tools';
import { preview } from '../domain/subagent-prompt';
import { classifyModelError } from '../llm/classify-model-error';
import type { ModelRegistry } from '../llm/model-port';
import { toolError } from '../tools/tool';
import { applyToolPolicy, checkToolCall, needsApproval, type ToolPolicyConfig } from '../tools/tool-policy';
import type { WorkerToolsetRegistry } from '../tools/toolset-registry-factory';
import { isBlobConflictError, type BlobStore } from './blob-store';
import { conversationSegment, isConversationMessageConflictError, isConversationMessageMissingError, type ConversationStore } from './conversation-store';

/** What the subagent activities need; injected so tests and the worker choose the real parts. */
export interface SubagentActivityDependencies {
  models: ModelRegistry;
  toolsets: WorkerToolsetRegistry;
  conversations: ConversationStore;
  /** Holds model answers and tool results by turn, so a retried activity never repeats finished work. */
  blobs: BlobStore;
  /** The operator's tool policy (allow / ask / deny per toolset or tool); absent = allow all. */
  toolPolicy?: ToolPolicyConfig;
}

/** Blob key of the stored outcome of one model call or tool call. */
function outcomeKey(kind: 'answers' | 'tool-results', conversationId: string, seq: number): string {
  return `outcomes/${kind}/${conversationSegment(conversationId)}/${seq}.json`;
}

/** Runs `work` while heartbeating, so a lost worker is noticed and a cancellation is delivered. */
async function withHeartbeat<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const context = Context.current();
  const timer = setInterval(() => context.heartbeat(), modelHeartbeatIntervalMs);
  try {
    return await work(context.cancellationSignal);
  } catch (error) {
    if (context.cancellationSignal.aborted) throw new CancelledFailure('cancelled while running');
    throw error;
  } finally {
    clearInterval(timer);
  }
}

function toModelTurnOutput(response: ModelResponse, orchestrationTools: readonly string[], askTools: readonly string[]): ModelTurnOutput {
  const truncated = response.text.length > inlineTextLimit;
  return {
    text: truncated ? preview(response.text, inlineTextLimit) : response.text,
    textTruncated: truncated,
    toolCalls: response.toolCalls.map((call) => ({
      id: call.id,
      name: call.name,
      argumentsPreview: preview(JSON.stringify(call.arguments), previewLength),
      // The workflow handles orchestration tools itself, so it needs their full arguments.
      ...(orchestrationTools.includes(call.name) ? { arguments: call.arguments } : {}),
      ...(askTools.includes(call.name) ? { needsApproval: true as const } : {}),
    })),
    finishReason: response.finishReason,
    usage: response.usage,
  };
}

/** Parses a stored JSON outcome written by this module. */
function parseStored<T>(text: string, key: string): T {
  try {
    return JSON.parse(text) as T; // written by this module with JSON.stringify of the same type
  } catch (error) {
    throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `stored outcome ${key} is not valid JSON: ${String(error)}`, nonRetryable: true });
  }
}

/**
 * Builds the activities of the subagent workflow. Each one is idempotent: a retry after a lost worker
 * finds the stored outcome of a model or tool call that already finished and returns it, so no finished
 * turn is ever paid for or run twice.
 */
export function createAgentLoopActivities(deps: SubagentActivityDependencies): AgentLoopActivities {
  const activities: AgentLoopActivities = {
    async appendMessages(input: AppendMessagesInput): Promise<void> {
      for (const [index, message] of input.messages.entries()) {
        await deps.conversations.append(input.conversationId, input.startSeq + index, message);
      }
    },

    async modelTurn(input: ModelTurnInput): Promise<ModelTurnOutput> {
      const key = outcomeKey('answers', input.conversationId, input.length);
      const stored = await deps.blobs.get(key);
      let response: ModelResponse;
      if (stored !== undefined) {
        response = parseStored<ModelResponse>(stored, key);
      } else {
        const model = resolveModel(deps.models, input);
        const history = await deps.conversations.read(input.conversationId, input.length);
        const messages: ChatMessage[] = input.note ? [...history, { role: 'system', content: input.note }] : history;
        const offered = (input.orchestrationTools ?? []).filter(isOrchestrationTool).map((name) => orchestrationToolSpecs[name]);
        try {
          // Listing tools may start an MCP server: it runs under the heartbeat like the model call.
          response = await withHeartbeat(async (abortSignal) => {
            deps.toolsets.ensureRecipeServers(input.recipeServers?.map((server) => server.config) ?? []);
            const policed = applyToolPolicy(await deps.toolsets.specsFor(input.toolsets, input.toolFilter), deps.toolPolicy, input.toolPolicy ?? []);
            return model.generate({ route: input.route, messages, tools: [...offered, ...policed.offered] }, { abortSignal });
          });
        } catch (error) {
          if (error instanceof CancelledFailure) throw error;
          const failure = classifyModelError(error);
          throw ApplicationFailure.create({
            type: failure.type,
            message: failure.message,
            nonRetryable: !failure.retryable,
            ...(failure.retryAfterMs !== undefined ? { nextRetryDelay: failure.retryAfterMs } : {}),
          });
        }
        await deps.blobs.put(key, JSON.stringify(response));
      }
      await deps.conversations.append(input.conversationId, input.length, {
        role: 'assistant',
        content: response.text,
        ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}),
      });
      const askTools = response.toolCalls.map((call) => call.name).filter((name) => needsApproval(deps.toolPolicy, input.toolPolicy ?? [], name));
      return toModelTurnOutput(response, input.orchestrationTools ?? [], askTools);
    },

    async runTool(input: RunToolInput): Promise<RunToolOutput> {
      const key = outcomeKey('tool-results', input.conversationId, input.resultSeq);
      const [assistant] = await deps.conversations.readRange(input.conversationId, input.assistantSeq, 1);
      const call = assistant?.role === 'assistant' ? assistant.toolCalls?.[input.callIndex] : undefined;
      if (!call) {
        throw ApplicationFailure.create({
          type: FailureType.blobMissing,
          message: `message ${input.assistantSeq} of conversation ${input.conversationId} has no tool call #${input.callIndex}`,
          nonRetryable: true,
        });
      }
      const stored = await deps.blobs.get(key);
      let result: { content: string; isError: boolean };
      if (stored !== undefined) {
        result = parseStored<{ content: string; isError: boolean }>(stored, key);
      } else {
        // The policy is checked again at run time: the model may call a tool it was not offered.
        const verdict = checkToolCall(deps.toolPolicy, input.toolPolicy ?? [], call.name, input.approval?.decision === 'approve');
        if (!verdict.run) {
          const denial = input.approval?.decision === 'deny'
            ? `The call of ${call.name} was denied by ${input.approval.by}${input.approval.reason ? `: ${input.approval.reason}` : '.'} Do not retry it; continue without it or finish with what you have.`
            : verdict.message;
          result = toolError(denial);
        } else {
          deps.toolsets.ensureRecipeServers(input.recipeServers?.map((server) => server.config) ?? []);
          result = await withHeartbeat((abortSignal) =>
            deps.toolsets.call(call.name, call.arguments, { workingDir: input.workingDir, abortSignal }, {
              toolsetNames: input.toolsets,
              ...(input.toolFilter ? { filter: input.toolFilter } : {}),
            }),
          );
        }
        await deps.blobs.put(key, JSON.stringify(result));
      }
      await deps.conversations.append(input.conversationId, input.resultSeq, {
        role: 'tool',
        toolCallId: call.id,
        toolName: call.name,
        content: result.content,
        ...(result.isError ? { isError: true } : {}),
      });
      return { isError: result.isError, preview: preview(result.content, previewLength) };
    },

    async readMessageText(input: ReadMessageTextInput): Promise<string> {
      const [message] = await deps.conversations.readRange(input.conversationId, input.seq, 1);
      if (!message) {
        throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `message ${input.seq} of conversation ${input.conversationId} is missing`, nonRetryable: true });
      }
      return message.content;
    },
  };
  return {
    appendMessages: (input) => classifyStoreErrors(() => activities.appendMessages(input)),
    modelTurn: (input) => classifyStoreErrors(() => activities.modelTurn(input)),
    runTool: (input) => classifyStoreErrors(() => activities.runTool(input)),
    readMessageText: (input) => classifyStoreErrors(() => activities.readMessageText(input)),
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

function resolveModel(models: ModelRegistry, input: ModelTurnInput) {
  try {
    return models.resolve(input.route);
  } catch (error) {
    throw ApplicationFailure.create({ type: FailureType.modelNotConfigured, message: error instanceof Error ? error.message : String(error), nonRetryable: true });
  }
}

import { createAnthropic } from '@ai-sdk/anthropic';
import { anthropicThinkingBudgets } from '../contracts/limits/llm';
import type { ModelRequest } from '../contracts/model';
import { invalidModelRequestFailure } from './model-failures';
import type { ChatModel } from './model-port';
import { createSdkChatModel, type AnswerLimits } from './sdk-chat-model';

/** Connection settings of an Anthropic Messages API provider. */
export interface AnthropicSettings {
  name: string;
  /** Base URL including `/v1`; the SDK's default (Anthropic's API) when omitted. */
  baseUrl?: string;
  /** API key, sent as `x-api-key`. Always given explicitly, so the SDK never reads the environment itself. */
  apiKey: string;
  headers?: Record<string, string>;
  requestTimeoutMs: number;
  /** errand's caps on one answer (bytes, time). */
  answerLimits?: AnswerLimits;
}

/** A reasoning effort Anthropic models take (one with a thinking budget). */
export type AnthropicEffort = keyof typeof anthropicThinkingBudgets;

/** True when `effort` has a thinking budget (`anthropicThinkingBudgets`). */
export function isAnthropicEffort(effort: string): effort is AnthropicEffort {
  return Object.hasOwn(anthropicThinkingBudgets, effort);
}

/**
 * A request's reasoning effort as Anthropic extended thinking: `thinking: {type: enabled, budget_tokens}`
 * with the budget of `anthropicThinkingBudgets`. The SDK adds the budget to `max_tokens`, so the answer
 * keeps its whole `maxOutputTokens`. No effort: no thinking.
 *
 * With thinking on, Anthropic requires the assistant turn whose tool calls the request answers to start
 * with its thinking blocks (400 "a final `assistant` message must start with a thinking block"). When
 * that turn was stored without them (it was made without thinking, or its thinking was not kept), this
 * request goes without thinking instead: one turn thinks less, rather than the run failing.
 */
function thinkingOptions(request: ModelRequest): { anthropic: { thinking: { type: 'enabled'; budgetTokens: number } } } | undefined {
  const effort = request.reasoningEffort;
  if (effort === undefined) return undefined;
  if (!isAnthropicEffort(effort)) {
    throw invalidModelRequestFailure(
      `reasoning effort "${effort}" is not one Anthropic models take; use ${Object.keys(anthropicThinkingBudgets).join(', ')} (model ${request.route.provider}/${request.route.model})`,
    );
  }
  if (answersToolCallsWithoutThinking(request)) return undefined;
  return { anthropic: { thinking: { type: 'enabled', budgetTokens: anthropicThinkingBudgets[effort] } } };
}

/** True when the last assistant message has tool calls but no signed thinking to send back with them. */
function answersToolCallsWithoutThinking(request: ModelRequest): boolean {
  for (let index = request.messages.length - 1; index >= 0; index -= 1) {
    const message = request.messages[index];
    if (message?.role !== 'assistant') continue;
    if ((message.toolCalls ?? []).length === 0) return false;
    return !(message.reasoning ?? []).some((block) => block.signature !== undefined || block.redactedData !== undefined);
  }
  return false;
}

/** Chat models of the Anthropic Messages API, through `@ai-sdk/anthropic`. */
export function createAnthropicModels(settings: AnthropicSettings): (modelId: string) => ChatModel {
  const provider = createAnthropic({
    name: settings.name,
    apiKey: settings.apiKey,
    ...(settings.baseUrl === undefined ? {} : { baseURL: settings.baseUrl }),
    ...(settings.headers === undefined ? {} : { headers: settings.headers }),
  });
  // Anthropic takes system text only before the conversation: later system notices go as user text.
  return (modelId) =>
    createSdkChatModel(provider.messages(modelId), {
      requestTimeoutMs: settings.requestTimeoutMs,
      ...(settings.answerLimits === undefined ? {} : { answerLimits: settings.answerLimits }),
      lateSystemMessages: 'as-user',
      sendReasoning: true,
      providerOptions: thinkingOptions,
    });
}

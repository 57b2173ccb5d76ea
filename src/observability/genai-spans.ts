import { SpanStatusCode, type Span } from '@opentelemetry/api';
import type { FinishReason, ModelRoute, TokenUsage } from '../contracts/model';
import type { ProviderKindName } from '../llm/model-port';
import { inSpan } from './trace-context';

/**
 * Spans of model calls and tool calls, with OpenTelemetry's GenAI semantic-convention attributes
 * (`gen_ai.*`), so a tracing backend's LLM views show errand's calls like any other agent's. They are
 * children of the activity's span (the interceptors' `RunActivity:modelTurn` / `RunActivity:runTool`),
 * which is a child of the workflow's span. With tracing off they are no-op spans.
 */

/** The `gen_ai.system` / `gen_ai.provider.name` value of a provider kind: the API it speaks. */
export function genAiSystem(kind: ProviderKindName): string {
  return kind === 'openai-compatible' ? 'openai' : kind;
}

/** What a model span says before the call: the operation, the model and its provider. */
export function modelSpanAttributes(route: ModelRoute, kind: ProviderKindName, maxOutputTokens: number): Record<string, string | number> {
  return {
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': genAiSystem(kind),
    'gen_ai.provider.name': genAiSystem(kind),
    'gen_ai.request.model': route.model,
    'gen_ai.request.max_tokens': maxOutputTokens,
    ...(route.temperature !== undefined ? { 'gen_ai.request.temperature': route.temperature } : {}),
    // errand's own: the configured provider's name (two OpenAI-compatible providers differ only here).
    'errand.provider': route.provider,
  };
}

/**
 * What a model span says after the call: tokens, the finish reason and the cost. Cost has no semantic
 * convention yet: `errand.cost_usd` (and the exact `errand.cost_micro_usd`), absent when the model entry has
 * no prices. `errand.stored_answer` marks a retried call answered from the stored outcome (not billed again).
 */
export function recordModelAnswer(span: Span, answer: { usage: TokenUsage; finishReason: FinishReason; model?: string }, stored: boolean): void {
  span.setAttributes({
    'gen_ai.usage.input_tokens': answer.usage.inputTokens,
    'gen_ai.usage.output_tokens': answer.usage.outputTokens,
    'gen_ai.response.finish_reasons': [answer.finishReason],
    ...(answer.usage.cachedInputTokens !== undefined ? { 'gen_ai.usage.cache_read.input_tokens': answer.usage.cachedInputTokens } : {}),
    ...(answer.usage.cacheWriteInputTokens !== undefined ? { 'gen_ai.usage.cache_creation.input_tokens': answer.usage.cacheWriteInputTokens } : {}),
    ...(answer.usage.costMicroUsd !== undefined ? { 'errand.cost_micro_usd': answer.usage.costMicroUsd, 'errand.cost_usd': answer.usage.costMicroUsd / 1_000_000 } : {}),
    ...(stored ? { 'errand.stored_answer': true } : {}),
  });
}

/** Runs a model call in a `chat <model>` span (the GenAI conventions' span name). */
export function inModelSpan<T>(route: ModelRoute, kind: ProviderKindName, maxOutputTokens: number, fn: (span: Span) => Promise<T>): Promise<T> {
  return inSpan(`chat ${route.model}`, modelSpanAttributes(route, kind, maxOutputTokens), fn);
}

/** Runs a tool call in an `execute_tool <name>` span with the tool's name and call id. */
export function inToolSpan<T>(tool: { name: string; callId: string }, fn: (span: Span) => Promise<T>): Promise<T> {
  return inSpan(`execute_tool ${tool.name}`, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool.name, 'gen_ai.tool.call.id': tool.callId }, fn);
}

/** Marks a tool span with the call's outcome: an error result is the span's error status. */
export function recordToolOutcome(span: Span, outcome: { isError: boolean; stored: boolean }): void {
  span.setAttribute('errand.tool.is_error', outcome.isError);
  if (outcome.stored) span.setAttribute('errand.stored_result', true);
  if (outcome.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: 'the tool answered with an error' });
}

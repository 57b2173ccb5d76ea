import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import type { ModelTurnInput, ModelTurnOutput } from '../contracts/activities';
import type { FinishReason, ModelRoute, TokenUsage } from '../contracts/model';
import type { ModelRegistry, ProviderKindName } from '../llm/model-port';
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

/** What a model span says before the call: the operation, the model and, when it is configured, its provider's API. */
export function modelSpanAttributes(route: ModelRoute, kind: ProviderKindName | undefined): Record<string, string | number> {
  return {
    'gen_ai.operation.name': 'chat',
    ...(kind !== undefined ? { 'gen_ai.system': genAiSystem(kind), 'gen_ai.provider.name': genAiSystem(kind) } : {}),
    'gen_ai.request.model': route.model,
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
export function recordModelAnswer(span: Span | undefined, answer: { usage: TokenUsage; finishReason: FinishReason }, stored: boolean): void {
  span?.setAttributes({
    'gen_ai.usage.input_tokens': answer.usage.inputTokens,
    'gen_ai.usage.output_tokens': answer.usage.outputTokens,
    'gen_ai.response.finish_reasons': [answer.finishReason],
    ...(answer.usage.cachedInputTokens !== undefined ? { 'gen_ai.usage.cache_read.input_tokens': answer.usage.cachedInputTokens } : {}),
    ...(answer.usage.cacheWriteInputTokens !== undefined ? { 'gen_ai.usage.cache_creation.input_tokens': answer.usage.cacheWriteInputTokens } : {}),
    ...(answer.usage.costMicroUsd !== undefined ? { 'errand.cost_micro_usd': answer.usage.costMicroUsd, 'errand.cost_usd': answer.usage.costMicroUsd / 1_000_000 } : {}),
    ...(stored ? { 'errand.stored_answer': true } : {}),
  });
}

/**
 * Runs a model turn (the `modelTurn` activity) in a `chat <model>` span, the GenAI conventions' span name;
 * the activity records the answer on it ({@link recordModelAnswer}).
 */
export function inModelSpan(models: ModelRegistry, input: Pick<ModelTurnInput, 'route'>, fn: () => Promise<ModelTurnOutput>): Promise<ModelTurnOutput> {
  let kind: ProviderKindName | undefined;
  try {
    kind = models.modelInfo(input.route).kind;
  } catch {
    // A model that is not configured: the activity fails with its own classified error, inside the span.
    kind = undefined;
  }
  // A client span, as the GenAI conventions ask of an inference call to a provider.
  return inSpan(
    `chat ${input.route.model}`,
    modelSpanAttributes(input.route, kind),
    async (span) => {
      const output = await fn();
      span.setAttribute('gen_ai.request.max_tokens', output.maxOutputTokens);
      if (output.needsCompaction) span.setAttribute('errand.needs_compaction', true);
      return output;
    },
    { kind: SpanKind.CLIENT },
  );
}

/** Runs a tool call (the `runTool` activity) in an `execute_tool` span; the activity names it ({@link nameToolSpan}). */
export function inToolSpan<T>(fn: () => Promise<T>): Promise<T> {
  return inSpan('execute_tool', { 'gen_ai.operation.name': 'execute_tool' }, () => fn());
}

/** Names a tool span after the call it runs: `execute_tool <name>`, with the tool's name and call id. */
export function nameToolSpan(span: Span | undefined, tool: { name: string; callId: string }): void {
  span?.updateName(`execute_tool ${tool.name}`);
  span?.setAttributes({ 'gen_ai.tool.name': tool.name, 'gen_ai.tool.call.id': tool.callId });
}

/** Marks a tool span with the call's outcome: an error result is the span's error status. */
export function recordToolOutcome(span: Span | undefined, outcome: { isError: boolean; stored: boolean }): void {
  span?.setAttribute('errand.tool.is_error', outcome.isError);
  if (outcome.stored) span?.setAttribute('errand.stored_result', true);
  if (outcome.isError) span?.setStatus({ code: SpanStatusCode.ERROR, message: 'the tool answered with an error' });
}

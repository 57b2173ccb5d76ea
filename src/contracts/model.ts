import type { JsonObject } from './json';

/**
 * Wire types of the model port. Everything here is plain JSON so it can travel through
 * activity inputs/outputs and the blob store. Provider SDK types never appear here.
 */

/** Which model answers: a provider name from configuration plus the model id at that provider. */
export interface ModelRoute {
  provider: string;
  model: string;
  temperature?: number;
  /**
   * The reasoning effort every call on this route sends (`ModelRequest.reasoningEffort`), one of the
   * efforts the model's entry lists. Resolved once, when the route is chosen (src/domain/model-precedence.ts);
   * absent: none is sent.
   */
  reasoningEffort?: string;
}

/** One tool call the model asked for. `arguments` is the parsed JSON object the model produced. */
export interface ToolCall {
  id: string;
  name: string;
  /** The arguments; `{}` when the model's were not a JSON object (see `invalidArguments`). */
  arguments: JsonObject;
  /**
   * The model's raw arguments (cut to a preview) when they were not a JSON object: the call is answered
   * with a tool error that says so, and the run continues (SEMANTICS §5).
   */
  invalidArguments?: string;
}

/**
 * One block of a model's extended thinking, kept as the provider gave it so it can be sent back: Anthropic
 * requires the thinking blocks of the assistant turn whose tool calls are being answered, signature and all
 * (otherwise thinking must be off for that request). `signature` and `redactedData` are opaque provider data.
 */
export interface ReasoningBlock {
  /** The thinking text (empty for a redacted block). */
  text: string;
  /** Anthropic's signature of the block. */
  signature?: string;
  /** Anthropic's encrypted content of a redacted thinking block. */
  redactedData?: string;
}

/** A message of a conversation, in our own provider-neutral shape. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[]; reasoning?: ReasoningBlock[] }
  | { role: 'tool'; toolCallId: string; toolName: string; content: string; isError?: boolean };

/** A tool offered to the model: name, description and a JSON Schema (object) for its input. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: JsonObject;
}

/**
 * Token usage of one or more model calls, with their cost. The optional fields are left out when zero, so
 * a usage without caching or prices stays `{inputTokens, outputTokens}`.
 */
export interface TokenUsage {
  /** All prompt tokens, cached ones included. */
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those read from the provider's prompt cache (OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`). */
  cachedInputTokens?: number;
  /** Of `inputTokens`, those written to the prompt cache (Anthropic `cache_creation_input_tokens`). */
  cacheWriteInputTokens?: number;
  /**
   * Cost in micro-dollars (1 = 0.000001 USD), from the model entry's prices. Integers, so sums up the tree
   * do not drift as float dollars would.
   */
  costMicroUsd?: number;
  /** Model calls whose model entry has no prices: their cost is not in `costMicroUsd`. */
  unpricedCalls?: number;
}

/** A usage as peek, results and the API show it: every counter, and the cost in micro-dollars and in USD. */
export interface UsageView extends TokenUsage {
  costMicroUsd: number;
  /** `costMicroUsd` in US dollars. */
  costUsd: number;
}

/** Why the model stopped producing output. */
export type FinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other';

/** A request to a chat model. */
export interface ModelRequest {
  route: ModelRoute;
  messages: ChatMessage[];
  tools: ToolSpec[];
  /**
   * Most tokens the answer may have; always sent to the provider (`max_tokens`). An answer that reaches it
   * ends with finish reason `length`. The caller resolves it (delegation > recipe > agent > model entry >
   * `ERRAND_MAX_OUTPUT_TOKENS`); a request without it is sent with `defaultMaxOutputTokens`.
   */
  maxOutputTokens?: number;
  /**
   * How hard a reasoning model should think: sent as `reasoning_effort` to OpenAI-compatible providers,
   * and as a thinking budget (`anthropicThinkingBudgets`: low, medium, high) to Anthropic. Omitted: the
   * provider's default (no extended thinking for Anthropic).
   */
  reasoningEffort?: string;
}

/** A chat model's answer. */
export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: TokenUsage;
  /**
   * The model's extended thinking, when it thought (a reasoning effort was sent). Store it with the
   * assistant message (`reasoning`): the Anthropic adapter sends it back, and keeps thinking on for the
   * requests that answer this message's tool calls only when it can.
   */
  reasoning?: ReasoningBlock[];
  /**
   * Set when errand itself cut the answer off (finish reason `length`): it went past errand's cap on the
   * bytes or the time of one answer, not the provider's output-token limit.
   */
  answerCap?: AnswerCap;
}

/**
 * What cut one model answer off besides its output-token limit: one of errand's caps (`bytes`, `time`) with its
 * value and the setting that sets it, or (`context`) the model server running out of context space while it
 * wrote (llama.cpp's "Context size has been exceeded." after the answer began), with the answer's tokens so far.
 */
export interface AnswerCap {
  cap: 'bytes' | 'time' | 'context';
  /** Bytes, milliseconds, or (context) the answer's tokens written before the server ran out, estimated. */
  limit: number;
  /** The operator's answer caps, the run's `time_budget` whose end came while the answer was written, or the model server. */
  setting: 'ERRAND_MODEL_ANSWER_MAX_BYTES' | 'ERRAND_MODEL_ANSWER_MAX_MS' | 'time_budget' | 'model server';
}

/** Adds two usages. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum = (field: OptionalUsageField): Partial<TokenUsage> => {
    const value = (a[field] ?? 0) + (b[field] ?? 0);
    return value === 0 ? {} : { [field]: value };
  };
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    ...sum('cachedInputTokens'),
    ...sum('cacheWriteInputTokens'),
    ...sum('costMicroUsd'),
    ...sum('unpricedCalls'),
  };
}

/** The counters of a usage that are left out when zero. */
export const optionalUsageFields = ['cachedInputTokens', 'cacheWriteInputTokens', 'costMicroUsd', 'unpricedCalls'] as const;
/** One of `optionalUsageFields`. */
export type OptionalUsageField = (typeof optionalUsageFields)[number];

/** Zero usage. */
export const zeroUsage: TokenUsage = { inputTokens: 0, outputTokens: 0 };

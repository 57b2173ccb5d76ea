/**
 * The limits of model calls (owned by src/llm). Part of errand's defaults and limits: src/contracts/limits.ts
 * re-exports every file of this folder.
 */

// ---- model calls (owned by src/llm) ---------------------------------------------------------------
// (llm section)
/** Default time limit of one HTTP request to a model provider (provider setting `requestTimeoutMs`). */
export const defaultModelRequestTimeoutMs = 300_000;
/** Longest retry-after we honour from a provider; longer hints are capped so a retry still happens. */
export const maxModelRetryAfterMs = 600_000;
/** Largest request body the scripted OpenAI-compatible test server accepts. */
export const scriptedServerMaxBodyBytes = 16 * 1024 * 1024;
/**
 * Default context window of a model, in tokens (model entry `contextWindow` in the provider config): what
 * errand assumes a model accepts as prompt plus answer when its entry does not say.
 */
export const defaultContextWindow = 128_000;
/**
 * Default output-token limit of one model call (`ERRAND_MAX_OUTPUT_TOKENS`; model entry `maxOutputTokens`
 * and the delegation's `max_output_tokens` win). Always sent to the provider.
 */
export const defaultMaxOutputTokens = 8_192;
/**
 * Thinking budget, in tokens, sent to Anthropic for each reasoning effort (the model entry's
 * `reasoningEfforts`). Anthropic's minimum budget is 1024. The budget comes on top of `maxOutputTokens`:
 * the AI SDK sends `max_tokens = maxOutputTokens + budget`, so the answer itself keeps its full limit.
 * OpenAI-compatible providers get the effort itself as `reasoning_effort`.
 */
export const anthropicThinkingBudgets = { low: 1_024, medium: 4_096, high: 16_384 } as const;
/**
 * Most bytes (UTF-8) of one model answer errand reads: its text, thinking and tool-call arguments together
 * (`ERRAND_MODEL_ANSWER_MAX_BYTES`). A provider stream that goes past it is closed and the answer ends
 * `truncated`, like one cut at the output-token limit: a stream that never ends cannot fill the worker's memory.
 */
export const defaultModelAnswerMaxBytes = 4 * 1024 * 1024;
/**
 * Longest time errand reads one model answer, from the first byte of its stream, in milliseconds
 * (`ERRAND_MODEL_ANSWER_MAX_MS`); past it the stream is closed and the answer ends `truncated`. Below the
 * provider's `requestTimeoutMs` (default 300 s), which would end the call as a failure instead.
 */
export const defaultModelAnswerMaxMs = 240_000;

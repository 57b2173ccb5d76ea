import {
  APICallError,
  EmptyResponseBodyError,
  InvalidArgumentError,
  InvalidPromptError,
  InvalidResponseDataError,
  JSONParseError,
  LoadAPIKeyError,
  LoadSettingError,
  NoContentGeneratedError,
  NoSuchModelError,
  TypeValidationError,
  UnsupportedFunctionalityError,
} from '@ai-sdk/provider';
import { z } from 'zod';
import { FailureType, nonRetryableFailureTypes, type FailureTypeName } from '../contracts/failures';
import { abortErrorName } from './abort-error';
import { parseRetryAfterMs } from './retry-after';
import { scriptExhaustedErrorCode } from './scripted-step';

/**
 * Classification of a failed model call (DESIGN.md convention 4): done once, where the model activity
 * ends, and turned into an ApplicationFailure of `type` there.
 */

/**
 * Type of a call that was aborted through its abort signal (cancellation). Not a failure type: an
 * aborted call is not retried and must not be reported as a model failure; the activity reports the
 * cancellation instead.
 */
export const modelCallAborted = 'ModelCallAborted';

/** How a model call failed. */
export interface ModelErrorClassification {
  /** A stable failure type name, or `modelCallAborted`. */
  type: FailureTypeName | typeof modelCallAborted;
  /** What went wrong; for a rejected request, the provider's own message. */
  message: string;
  /** Whether Temporal should retry the call. */
  retryable: boolean;
  /** The provider's retry hint, when it gave one. */
  retryAfterMs?: number;
  /** HTTP status of the provider's answer, when there was one. */
  status?: number;
}

// Tolerant: providers shape error bodies differently. OpenAI, DeepSeek, OpenRouter and Anthropic use
// {error: {message}}, Ollama {error: "..."}, vLLM {message}, FastAPI-based servers {detail}.
const providerErrorBodySchema = z.object({
  error: z
    .union([
      z.object({ message: z.string().optional(), type: z.string().nullish(), code: z.unknown().optional() }).loose(),
      z.string(),
    ])
    .optional(),
  message: z.string().optional(),
  detail: z.string().optional(),
}).loose();

const maxBodyInMessage = 500;

/** What a provider's error body says: its message, error type and error code. */
interface ProviderError {
  message?: string;
  errorType?: string;
  errorCode?: string;
}

/** Reads the provider's error message (and error type and code) from a response body. */
function readProviderError(body: string | undefined): ProviderError {
  if (body === undefined || body.trim() === '') return {};
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(body);
  } catch {
    return { message: body.length > maxBodyInMessage ? `${body.slice(0, maxBodyInMessage)}…` : body };
  }
  const parsed = providerErrorBodySchema.safeParse(parsedBody);
  if (!parsed.success) return {};
  const { error, message, detail } = parsed.data;
  if (typeof error === 'string') return { message: error };
  const errorCode = typeof error?.code === 'string' ? error.code : undefined;
  const errorType = error?.type ?? errorCode;
  return {
    message: error?.message ?? message ?? detail,
    ...(errorType === undefined || errorType === null ? {} : { errorType }),
    ...(errorCode === undefined ? {} : { errorCode }),
  };
}

/** Error types and codes that mean "the prompt does not fit the context window". */
const contextOverflowCodes = new Set([
  // OpenAI (`code`), and servers that copy it (vLLM, DeepSeek, OpenRouter, LiteLLM).
  'context_length_exceeded',
  // llama.cpp's server (`type`): "request (809 tokens) exceeds the available context size (512 tokens)".
  'exceed_context_size_error',
]);

/**
 * Messages of context-overflow errors from providers that give no distinct code: Anthropic ("prompt is too
 * long: 208310 tokens > 200000 maximum"; "input length and `max_tokens` exceed context limit: …"), and
 * OpenAI-compatible servers that phrase OpenAI's message without its code ("This model's maximum context
 * length is 8192 tokens").
 */
const contextOverflowMessage = /prompt is too long|exceed context limit|maximum context length|exceeds the available context size|context length exceeded/i;

/** Whether a provider's message says a request did not fit the context window (for errors without a code). */
export function isContextOverflowMessage(message: string): boolean {
  return contextOverflowMessage.test(message);
}

/** True when a rejected request failed because it does not fit the model's context window. */
function isContextOverflow(provider: ProviderError): boolean {
  if (provider.errorCode !== undefined && contextOverflowCodes.has(provider.errorCode)) return true;
  if (provider.errorType !== undefined && contextOverflowCodes.has(provider.errorType)) return true;
  return provider.message !== undefined && contextOverflowMessage.test(provider.message);
}

const applicationFailureShape = z.object({
  name: z.literal('ApplicationFailure'),
  type: z.string().nullish(),
  message: z.string(),
  nonRetryable: z.boolean().nullish(),
});

const failureTypeNames: readonly string[] = Object.values(FailureType);
function isFailureTypeName(value: string): value is FailureTypeName {
  return failureTypeNames.includes(value);
}

const errorWithName = z.object({ name: z.string(), message: z.string() });
const errorWithCode = z.object({ code: z.string() });
// Node/undici error codes of connections that failed or dropped: worth a retry.
const networkErrorCodes = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CLOSED',
]);

/** The first network error code in an error's cause chain (undici nests them: TypeError "terminated" → SocketError). */
function networkCodeIn(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth += 1) {
    const coded = errorWithCode.safeParse(current);
    if (coded.success && networkErrorCodes.has(coded.data.code)) return coded.data.code;
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}

function classifyApiCallError(error: APICallError): ModelErrorClassification {
  const status = error.statusCode;
  if (status === undefined) {
    // No HTTP answer at all: connection refused, reset, DNS. The SDK marks these retryable.
    return { type: FailureType.modelUnavailable, message: error.message, retryable: true };
  }
  const provider = readProviderError(error.responseBody);
  const message = provider.message ?? error.message;
  const retryAfterMs = parseRetryAfterMs(error.responseHeaders);
  const withRetryAfter = retryAfterMs === undefined ? {} : { retryAfterMs };

  if (provider.errorType === scriptExhaustedErrorCode) {
    return { type: FailureType.scriptExhausted, message, retryable: false, status };
  }
  if (status === 429) {
    return { type: FailureType.modelRateLimited, message, retryable: true, status, ...withRetryAfter };
  }
  if (status === 408 || status >= 500) {
    return { type: FailureType.modelUnavailable, message, retryable: true, status, ...withRetryAfter };
  }
  if ((status === 400 || status === 413) && isContextOverflow(provider)) {
    // The same request fails again, but a shorter one may not: the workflow compacts and retries once.
    return { type: FailureType.modelContextOverflow, message, retryable: false, status };
  }
  if (status >= 400) {
    // Bad request, authentication, unknown model: the same request fails again.
    return { type: FailureType.modelRequestRejected, message, retryable: false, status };
  }
  const dropped = networkCodeIn(error.cause);
  if (dropped !== undefined) {
    // The answer had begun (200) when the connection broke off: transport trouble, worth a retry.
    return { type: FailureType.modelUnavailable, message: `the connection to the model provider broke off during the answer (${dropped}): ${error.message}`, retryable: true, status };
  }
  // A 2xx (or odd) status whose body the SDK could not read: "Invalid JSON response" and the like.
  return { type: FailureType.modelBadResponse, message: `${error.message} (HTTP ${status})`, retryable: false, status };
}

/**
 * Classifies any error a ChatModel call rejected with.
 *
 * - 429 → ModelRateLimited (retryable, with the provider's retry-after);
 * - 5xx, 408, timeouts and network errors → ModelUnavailable (retryable);
 * - a 400 saying the prompt does not fit the context window (OpenAI `context_length_exceeded`, Anthropic
 *   `prompt is too long`, llama.cpp `exceed_context_size_error`) → ModelContextOverflow (not retryable as is);
 * - other 4xx → ModelRequestRejected (not retryable; message = the provider's message);
 * - an abort → `modelCallAborted` (not retryable);
 * - responses that cannot be read → ModelBadResponse (not retryable);
 * - ApplicationFailures with a known failure type (ModelNotConfigured, ScriptExhausted, …) keep their type.
 *
 * Unknown errors count as ModelUnavailable: they are most often transport trouble, and the activity's
 * retry policy bounds the attempts.
 */
export function classifyModelError(error: unknown): ModelErrorClassification {
  if (APICallError.isInstance(error)) return classifyApiCallError(error);

  const application = applicationFailureShape.safeParse(error);
  if (application.success && application.data.type && isFailureTypeName(application.data.type)) {
    const type = application.data.type;
    const retryable = application.data.nonRetryable !== true && !nonRetryableFailureTypes.includes(type);
    return { type, message: application.data.message, retryable };
  }

  const named = errorWithName.safeParse(error);
  const name = named.success ? named.data.name : undefined;
  const message = named.success ? named.data.message : String(error);
  if (name === abortErrorName || name === 'ResponseAborted' || name === 'CancelledFailure') {
    return { type: modelCallAborted, message, retryable: false };
  }
  if (name === 'TimeoutError') {
    return { type: FailureType.modelUnavailable, message: `model request timed out: ${message}`, retryable: true };
  }
  if (
    JSONParseError.isInstance(error) ||
    TypeValidationError.isInstance(error) ||
    InvalidResponseDataError.isInstance(error) ||
    EmptyResponseBodyError.isInstance(error) ||
    NoContentGeneratedError.isInstance(error)
  ) {
    return { type: FailureType.modelBadResponse, message, retryable: false };
  }
  if (LoadAPIKeyError.isInstance(error) || LoadSettingError.isInstance(error) || NoSuchModelError.isInstance(error)) {
    return { type: FailureType.modelNotConfigured, message, retryable: false };
  }
  if (
    InvalidPromptError.isInstance(error) ||
    UnsupportedFunctionalityError.isInstance(error) ||
    InvalidArgumentError.isInstance(error)
  ) {
    return { type: FailureType.modelRequestRejected, message, retryable: false };
  }
  const coded = errorWithCode.safeParse(error);
  const causeCoded = errorWithCode.safeParse(error instanceof Error ? error.cause : undefined);
  const code = coded.success ? coded.data.code : causeCoded.success ? causeCoded.data.code : undefined;
  if (code !== undefined && networkErrorCodes.has(code)) {
    return { type: FailureType.modelUnavailable, message: `cannot reach the model provider (${code}): ${message}`, retryable: true };
  }
  return { type: FailureType.modelUnavailable, message: `model call failed: ${message}`, retryable: true };
}

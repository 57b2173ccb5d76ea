import { APICallError, InvalidResponseDataError, type LanguageModelV3, type LanguageModelV3StreamPart, type SharedV3ProviderOptions } from '@ai-sdk/provider';
import type { AnswerCap, ModelRequest, ModelResponse, ReasoningBlock } from '../contracts/model';
import { defaultMaxOutputTokens, defaultModelAnswerMaxBytes, defaultModelAnswerMaxMs } from '../contracts/limits/llm';
import { estimateTextTokens, estimateTokens } from '../domain/token-estimate';
import { abortErrorFor } from './abort-error';
import { isContextOverflowMessage } from './classify-model-error';
import { isJsonObject } from './json-value';
import type { ChatModel, GenerateOptions } from './model-port';
import { toModelResponse, toSdkPrompt, toSdkTools, type LateSystemMessages, type SdkAnswer } from './sdk-mapping';

/** Settings of a ChatModel built on an AI SDK provider model. */
export interface SdkChatModelOptions {
  /** Time limit of one HTTP request; it then fails as a timeout (ModelUnavailable, retryable). */
  requestTimeoutMs: number;
  /** How this provider takes system messages after the start of the conversation. */
  lateSystemMessages?: LateSystemMessages;
  /** Send stored thinking back to the provider (see `SdkPromptOptions.sendReasoning`). */
  sendReasoning?: boolean;
  /**
   * The provider options of a request (reasoning effort, for example, is spelled differently by each
   * provider). May throw an ApplicationFailure for a request the provider cannot take.
   */
  providerOptions?: (request: ModelRequest) => SharedV3ProviderOptions | undefined;
  /**
   * errand's own caps on one answer (`ERRAND_MODEL_ANSWER_MAX_BYTES`, `ERRAND_MODEL_ANSWER_MAX_MS`): past
   * either, the stream is closed and the answer ends with finish reason `length` and `answerCap` set.
   */
  answerLimits?: AnswerLimits;
}

/** errand's caps on one model answer: bytes of text, thinking and tool-call arguments, and time from its first byte. */
export interface AnswerLimits {
  maxBytes: number;
  maxMs: number;
  /** The setting that set `maxMs` (default `ERRAND_MODEL_ANSWER_MAX_MS`): what a cut answer names. */
  timeSetting?: AnswerCap['setting'];
}

/**
 * A ChatModel on top of an AI SDK provider model (`LanguageModelV3`), streaming.
 *
 * Why the provider model's `doStream` and not `streamText` from `ai`: `streamText` adds what errand must
 * not have or does itself — its own retry loop (Temporal retries), tool execution and multi-step loops
 * (the workflow runs the loop), and tool-call repair / "invalid tool call" parts (we want a malformed
 * tool call classified as ModelBadResponse). `doStream` is exactly one HTTP request with the provider's
 * own request/response mapping and error handling (APICallError).
 *
 * Why stream at all: the text arrives while it is written (`onText`, for live progress), a long answer
 * keeps the connection busy instead of idle (proxies cut idle connections), and an abort stops the
 * generation at the provider at once (the connection closes; llama.cpp, for one, frees its slot).
 */
export function createSdkChatModel(model: LanguageModelV3, options: SdkChatModelOptions): ChatModel {
  return {
    async generate(request: ModelRequest, generateOptions: GenerateOptions): Promise<ModelResponse> {
      const callerSignal = generateOptions.abortSignal;
      if (callerSignal?.aborted) throw abortErrorFor(callerSignal);
      const startedAt = Date.now();
      const providerOptions = options.providerOptions?.(request);
      const timeoutSignal = AbortSignal.timeout(options.requestTimeoutMs);
      // A run's time budget that ends before the provider sends its first byte (a long prompt being read)
      // ends the call there too: an empty answer cut at the deadline, not an error to retry.
      const deadline = generateOptions.answerDeadline;
      // Armed only until the stream starts: from then on the answer's own time cap cuts at the deadline and keeps the text.
      const beforeFirstByte = new AbortController();
      const deadlineTimer = deadline === undefined ? undefined : setTimeout(() => beforeFirstByte.abort(new Error('the time budget ended before the answer began')), Math.max(0, deadline.at - startedAt));
      const signals = [timeoutSignal, beforeFirstByte.signal, ...(callerSignal ? [callerSignal] : [])];
      const abortSignal = AbortSignal.any(signals);
      try {
        const { stream, response } = await model.doStream({
          prompt: toSdkPrompt(request.messages, {
            ...(options.lateSystemMessages === undefined ? {} : { lateSystemMessages: options.lateSystemMessages }),
            ...(options.sendReasoning === undefined ? {} : { sendReasoning: options.sendReasoning }),
          }),
          ...(request.tools.length > 0 ? { tools: toSdkTools(request.tools), toolChoice: { type: 'auto' } } : {}),
          ...(request.route.temperature === undefined ? {} : { temperature: request.route.temperature }),
          maxOutputTokens: request.maxOutputTokens ?? defaultMaxOutputTokens,
          ...(providerOptions === undefined ? {} : { providerOptions }),
          abortSignal,
        });
        clearTimeout(deadlineTimer);
        // A 200 that is not an event stream (an HTML page from a proxy, say) holds no answer at all.
        const contentType = headerValue(response?.headers, 'content-type');
        if (contentType !== undefined && !contentType.includes('text/event-stream')) {
          await stream.cancel().catch(() => undefined);
          throw new APICallError({
            message: `the model provider answered 200 with content-type "${contentType}", not an event stream`,
            url: '(stream)',
            requestBodyValues: {},
            statusCode: 200,
            isRetryable: false,
          });
        }
        const configured = options.answerLimits ?? { maxBytes: defaultModelAnswerMaxBytes, maxMs: defaultModelAnswerMaxMs };
        // A run's time budget that ends sooner than the answer time cap cuts the answer at its end.
        const untilDeadline = generateOptions.answerDeadline === undefined ? undefined : Math.max(0, generateOptions.answerDeadline.at - Date.now());
        const limits: AnswerLimits = untilDeadline !== undefined && untilDeadline < configured.maxMs && generateOptions.answerDeadline
          ? { ...configured, maxMs: untilDeadline, timeSetting: generateOptions.answerDeadline.setting }
          : configured;
        const read = await readAnswer(stream, abortSignal, generateOptions.onText, limits);
        // An answer errand cut never got the provider's usage, but the provider read the whole prompt:
        // estimated, it is counted (and priced) like an answer that ended by itself.
        if (read.cap !== undefined && read.answer.usage.inputTokens === undefined) read.answer.usage.inputTokens = estimateTokens(request.messages, request.tools);
        const collected = toModelResponse(read.answer);
        return read.cap === undefined ? collected : { ...collected, answerCap: read.cap };
      } catch (error) {
        clearTimeout(deadlineTimer);
        // The caller's abort wins over everything (it is why the request broke off); a fired timeout
        // becomes a TimeoutError, which classifies as ModelUnavailable (retryable).
        if (callerSignal?.aborted) throw abortErrorFor(callerSignal);
        if (deadline !== undefined && beforeFirstByte.signal.aborted && !timeoutSignal.aborted) {
          return {
            text: '',
            toolCalls: [],
            finishReason: 'length',
            usage: { inputTokens: estimateTokens(request.messages, request.tools), outputTokens: 0 },
            answerCap: { cap: 'time', limit: Math.max(0, deadline.at - startedAt), setting: deadline.setting },
          };
        }
        if (timeoutSignal.aborted) {
          const timeout = new Error(`the model provider did not answer within ${options.requestTimeoutMs} ms (requestTimeoutMs)`, { cause: error });
          timeout.name = 'TimeoutError';
          throw timeout;
        }
        throw error;
      }
    },
  };
}

/**
 * Reads a provider stream to its end, collecting the answer and reporting the text as it grows. An abort
 * cancels the read at once (the provider's own abort handling is not relied on to end a pending read).
 */
async function readAnswer(
  stream: ReadableStream<LanguageModelV3StreamPart>,
  abortSignal: AbortSignal,
  onText: ((textSoFar: string) => void) | undefined,
  limits: AnswerLimits,
): Promise<{ answer: SdkAnswer; cap?: AnswerCap }> {
  const reader = stream.getReader();
  const onAbort = (): void => {
    reader.cancel(abortSignal.reason).catch(() => undefined);
  };
  abortSignal.addEventListener('abort', onAbort, { once: true });
  const answer: SdkAnswer = { text: '', toolCalls: [], finishReason: 'other', usage: { inputTokens: undefined, outputTokens: undefined, cachedInputTokens: undefined, cacheWriteInputTokens: undefined }, reasoning: [] };
  const thinking = new Map<string, ReasoningBlock>();
  let finished = false;
  // errand's own caps: a provider stream that never ends (or ends only after gigabytes) is cut here, and
  // the cancel closes the connection, so nothing more is read or buffered.
  let cap: AnswerCap | undefined;
  let bytes = 0;
  const stop = (reached: AnswerCap): void => {
    cap ??= reached;
    reader.cancel(new Error(`the answer reached errand's ${reached.cap} cap`)).catch(() => undefined);
  };
  const timer = setTimeout(() => stop({ cap: 'time', limit: limits.maxMs, setting: limits.timeSetting ?? 'ERRAND_MODEL_ANSWER_MAX_MS' }), limits.maxMs);
  const count = (delta: string): void => {
    bytes += Buffer.byteLength(delta, 'utf8');
    if (bytes > limits.maxBytes) stop({ cap: 'bytes', limit: limits.maxBytes, setting: 'ERRAND_MODEL_ANSWER_MAX_BYTES' });
  };
  try {
    while (cap === undefined) {
      const { done, value: part } = await reader.read();
      if (done || cap !== undefined) break;
      switch (part.type) {
        case 'text-delta':
          if (part.delta === '') break;
          answer.text += part.delta;
          onText?.(answer.text);
          count(part.delta);
          break;
        case 'tool-input-delta':
          // The provider collects a call's arguments until the call is complete: they count as they arrive.
          count(part.delta);
          break;
        case 'tool-call':
          // Provider-executed tools (web search and the like) are not part of our wire model.
          if (part.providerExecuted !== true) answer.toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
          break;
        case 'reasoning-start': {
          const block: ReasoningBlock = { text: '' };
          const redacted = anthropicMetadata(part.providerMetadata, 'redactedData');
          if (redacted !== undefined) block.redactedData = redacted;
          thinking.set(part.id, block);
          answer.reasoning.push(block);
          break;
        }
        case 'reasoning-delta': {
          const block = thinking.get(part.id);
          if (block === undefined) break;
          block.text += part.delta;
          count(part.delta);
          const signature = anthropicMetadata(part.providerMetadata, 'signature');
          if (signature !== undefined) block.signature = signature;
          break;
        }
        case 'finish':
          finished = true;
          answer.finishReason = part.finishReason.unified;
          // The SDK's total counts cached prompt tokens too; cacheRead / cacheWrite are the parts of it the
          // provider reported (OpenAI's cached_tokens, Anthropic's cache_read / cache_creation_input_tokens).
          answer.usage = {
            inputTokens: part.usage.inputTokens.total,
            outputTokens: part.usage.outputTokens.total,
            cachedInputTokens: part.usage.inputTokens.cacheRead,
            cacheWriteInputTokens: part.usage.inputTokens.cacheWrite,
          };
          break;
        case 'error':
          // The server ran out of context space (llama.cpp: "Context size has been exceeded."): once the answer
          // has begun, it is cut there, as at an output-token limit, and what was written is kept; before any of
          // it, the prompt did not fit (a context overflow: compact and try once more).
          if (ranOutOfContext(part.error)) {
            if (answer.text !== '' || answer.toolCalls.length > 0 || answer.reasoning.length > 0) {
              stop({ cap: 'context', limit: estimateTextTokens(answer.text), setting: 'model server' });
              break;
            }
            throw streamError({ ...streamErrorPayload(part.error), type: 'exceed_context_size_error' });
          }
          // A stream that just stopped (a proxy closing it cleanly) is transport trouble, not a bad answer.
          if (InvalidResponseDataError.isInstance(part.error) && /without a finish reason/.test(part.error.message)) {
            throw streamError({ message: part.error.message, type: 'incomplete_stream' });
          }
          throw streamError(part.error);
        default:
          // Reasoning, sources, files and metadata are not part of our wire model.
          break;
      }
    }
  } finally {
    clearTimeout(timer);
    abortSignal.removeEventListener('abort', onAbort);
  }
  // A cancelled read ends like a finished stream; it must not pass for an answer.
  if (abortSignal.aborted) throw abortErrorFor(abortSignal);
  if (cap !== undefined) {
    // Cut like an answer at the output-token limit: the provider's usage never came, so it is estimated.
    answer.finishReason = 'length';
    answer.usage = { ...answer.usage, outputTokens: estimateTextTokens(answer.text) };
    return { answer, cap };
  }
  if (!finished) throw streamError({ message: 'the model stream ended without a finish event', type: 'incomplete_stream' });
  return { answer };
}

/**
 * An error the provider reported inside the stream (an `error` event after the 200 answer began), as the
 * APICallError the same error would have been before the stream started, so classification treats both
 * alike: Anthropic's `overloaded_error` mid-stream is as retryable as a 529.
 */
function streamError(error: unknown): unknown {
  if (error instanceof Error) return error;
  const payload = streamErrorPayload(error);
  const type = typeof payload.type === 'string' ? payload.type : typeof payload.code === 'string' ? payload.code : '';
  const message = typeof payload.message === 'string' ? payload.message : JSON.stringify(payload);
  return new APICallError({
    message: `the model stream reported an error: ${message}`,
    url: '(stream)',
    requestBodyValues: {},
    statusCode: statusOfStreamError(type),
    responseBody: JSON.stringify({ error: { ...payload, message } }),
  });
}

function streamErrorPayload(error: unknown): Record<string, unknown> {
  return isJsonObject(error) ? error : { message: String(error) };
}

/** Whether a stream's error event says the server ran out of context space (llama.cpp's words, or an overflow's). */
function ranOutOfContext(error: unknown): boolean {
  const message = error instanceof Error ? error.message : streamErrorPayload(error).message;
  return typeof message === 'string' && (/context size has been exceeded/i.test(message) || isContextOverflowMessage(message));
}

function statusOfStreamError(type: string): number {
  if (/overloaded/.test(type)) return 529;
  if (/rate_limit/.test(type)) return 429;
  if (/invalid_request|context/.test(type)) return 400;
  // api_error, server_error, an unknown type, or an incomplete stream: the provider's trouble, worth a retry.
  return 500;
}

function headerValue(headers: Record<string, string | undefined> | undefined, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === name) return value;
  return undefined;
}

/** A string the Anthropic provider put in a stream part's metadata (a thinking block's signature or redacted data). */
function anthropicMetadata(metadata: unknown, key: 'signature' | 'redactedData'): string | undefined {
  if (!isJsonObject(metadata)) return undefined;
  const anthropic = metadata.anthropic;
  if (!isJsonObject(anthropic)) return undefined;
  const value = anthropic[key];
  return typeof value === 'string' ? value : undefined;
}

import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { ModelRequest, ModelResponse } from '../contracts/model';
import { abortErrorFor } from './abort-error';
import type { ChatModel, GenerateOptions } from './model-port';
import { fromSdkResult, toSdkPrompt, toSdkTools, type LateSystemMessages } from './sdk-mapping';

/** Settings of a ChatModel built on an AI SDK provider model. */
export interface SdkChatModelOptions {
  /** Time limit of one HTTP request; it then fails as a timeout (ModelUnavailable, retryable). */
  requestTimeoutMs: number;
  /** How this provider takes system messages after the start of the conversation. */
  lateSystemMessages?: LateSystemMessages;
}

/**
 * A ChatModel on top of an AI SDK provider model (`LanguageModelV3`).
 *
 * Why `doGenerate` and not `generateText` from `ai`: `generateText` adds what errand must not have or
 * does itself — its own retry loop (Temporal retries), tool execution and multi-step loops (the
 * workflow runs the loop), and tool-call repair / "invalid tool call" parts (we want a malformed
 * tool call classified as ModelBadResponse). The provider model's `doGenerate` is exactly one HTTP
 * request with the provider's own request/response mapping and error handling (APICallError), which
 * is the part we want from the SDK. No retries happen at this level, so `maxRetries: 0` is implied.
 */
export function createSdkChatModel(model: LanguageModelV3, options: SdkChatModelOptions): ChatModel {
  return {
    async generate(request: ModelRequest, generateOptions: GenerateOptions): Promise<ModelResponse> {
      const callerSignal = generateOptions.abortSignal;
      if (callerSignal?.aborted) throw abortErrorFor(callerSignal);
      const timeoutSignal = AbortSignal.timeout(options.requestTimeoutMs);
      const abortSignal = callerSignal === undefined ? timeoutSignal : AbortSignal.any([callerSignal, timeoutSignal]);
      try {
        const result = await model.doGenerate({
          prompt: toSdkPrompt(request.messages, options.lateSystemMessages),
          ...(request.tools.length > 0 ? { tools: toSdkTools(request.tools), toolChoice: { type: 'auto' } } : {}),
          ...(request.route.temperature === undefined ? {} : { temperature: request.route.temperature }),
          abortSignal,
        });
        return fromSdkResult(result);
      } catch (error) {
        // The caller's abort wins over everything (it is why the request broke off); a fired timeout
        // becomes a TimeoutError, which classifies as ModelUnavailable (retryable).
        if (callerSignal?.aborted) throw abortErrorFor(callerSignal);
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

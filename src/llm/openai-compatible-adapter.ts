import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ChatModel } from './model-port';
import { createSdkChatModel, type AnswerLimits } from './sdk-chat-model';

/** Connection settings of an OpenAI-compatible provider. */
export interface OpenAICompatibleSettings {
  /** Provider name (used by the SDK in metadata and error text). */
  name: string;
  /** Base URL including the API version, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  /** API key, sent as `Authorization: Bearer …`; local servers (Ollama, llama.cpp) need none. */
  apiKey?: string;
  headers?: Record<string, string>;
  requestTimeoutMs: number;
  /** errand's caps on one answer (bytes, time). */
  answerLimits?: AnswerLimits;
}

/**
 * Chat models of an OpenAI Chat Completions compatible API (OpenAI, DeepSeek, Ollama, vLLM, llama.cpp,
 * OpenRouter), through `@ai-sdk/openai-compatible`. Returns a factory: one SDK provider instance is shared
 * by all models of the provider.
 */
export function createOpenAICompatibleModels(settings: OpenAICompatibleSettings): (modelId: string) => ChatModel {
  const provider = createOpenAICompatible({
    name: settings.name,
    baseURL: settings.baseUrl,
    // Ask for usage in the stream (`stream_options.include_usage`); without it OpenAI streams none.
    includeUsage: true,
    ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
    ...(settings.headers === undefined ? {} : { headers: settings.headers }),
  });
  return (modelId) =>
    createSdkChatModel(provider.chatModel(modelId), {
      requestTimeoutMs: settings.requestTimeoutMs,
      ...(settings.answerLimits === undefined ? {} : { answerLimits: settings.answerLimits }),
      // `openaiCompatible` is the options key the SDK reads whatever the provider is called.
      providerOptions: (request) => (request.reasoningEffort === undefined ? undefined : { openaiCompatible: { reasoningEffort: request.reasoningEffort } }),
    });
}

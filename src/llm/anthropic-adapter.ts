import { createAnthropic } from '@ai-sdk/anthropic';
import type { ChatModel } from './model-port';
import { createSdkChatModel } from './sdk-chat-model';

/** Connection settings of an Anthropic Messages API provider. */
export interface AnthropicSettings {
  name: string;
  /** Base URL including `/v1`; the SDK's default (Anthropic's API) when omitted. */
  baseUrl?: string;
  /** API key, sent as `x-api-key`. Always given explicitly, so the SDK never reads the environment itself. */
  apiKey: string;
  headers?: Record<string, string>;
  requestTimeoutMs: number;
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
    createSdkChatModel(provider.messages(modelId), { requestTimeoutMs: settings.requestTimeoutMs, lateSystemMessages: 'as-user' });
}

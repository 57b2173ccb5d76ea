import type { ModelRequest, ModelResponse, ModelRoute } from '../contracts/model';

/**
 * The model port (DESIGN.md convention 3): the only way errand code talks to a language model.
 * Provider SDK types stay behind it; callers see only the JSON wire types of `contracts/model`.
 */

/** Options of one model call. */
export interface GenerateOptions {
  /**
   * Aborts the call (and its HTTP request). An activity passes its cancellation signal here so a
   * cancelled delegation stops paying for tokens at once.
   */
  abortSignal?: AbortSignal;
}

/** A chat model: one request in, one complete (non-streamed) response out. */
export interface ChatModel {
  /**
   * Sends the conversation and returns the model's answer. Rejects with an error that
   * `classifyModelError` understands; never retries by itself (Temporal owns retries).
   */
  generate(request: ModelRequest, options: GenerateOptions): Promise<ModelResponse>;
}

/** Kinds of provider errand can talk to. */
export const ProviderKind = {
  /** Any OpenAI Chat Completions compatible API: OpenAI, DeepSeek, Ollama, vLLM, llama.cpp, OpenRouter. */
  openaiCompatible: 'openai-compatible',
  /** Anthropic's Messages API. */
  anthropic: 'anthropic',
  /** An in-process scripted model supplied by the host (tests, the demo). */
  scripted: 'scripted',
} as const;

/** One of the provider kinds. */
export type ProviderKindName = (typeof ProviderKind)[keyof typeof ProviderKind];

/** What a provider offers: for listings such as the `list_subagent_models` tool. */
export interface ProviderInfo {
  name: string;
  kind: ProviderKindName;
  /** The allow-list of model ids, in configured order. */
  models: string[];
  /** The model used when a route names this provider but no model. */
  defaultModel?: string;
}

/** What errand must know of a model to keep its prompts and answers within bounds. */
export interface ModelInfo {
  /** Context window in tokens (model entry `contextWindow`, default 128000). */
  contextWindow: number;
  /** Output-token limit of the model entry, if it sets one. */
  maxOutputTokens?: number;
}

/** Resolves model routes to chat models, and lists what is configured. */
export interface ModelRegistry {
  /** Limits of the model a route names (throws like `resolve` when it is not configured). */
  modelInfo(route: ModelRoute): ModelInfo;
  /**
   * The chat model for a route. Throws a `ModelNotConfigured` failure when the provider is not configured
   * or the model is not on its allow-list.
   */
  resolve(route: ModelRoute): ChatModel;
  /** The configured providers, in configured order. */
  providers(): ProviderInfo[];
}

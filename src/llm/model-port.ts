import type { ModelRequest, ModelResponse, ModelRoute } from '../contracts/model';
import type { ModelPrices } from '../domain/model-cost';

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
  /**
   * Called as the answer's text arrives (the call streams), with all the text so far. Called often — once
   * per streamed piece; throttling (e.g. how often to heartbeat or update a progress line) is the caller's
   * job. Not called for tool-call arguments. The final `ModelResponse` is the same with or without it.
   */
  onText?: (textSoFar: string) => void;
  /**
   * When the run's time budget ends (epoch ms): an answer still streaming then is cut, as at errand's answer
   * time cap, and named by `setting` (`time_budget`). Models that do not stream may ignore it.
   */
  answerDeadline?: { at: number; setting: 'time_budget' };
}

/** A chat model: one request in, one complete response out (streamed underneath, see `onText`). */
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

/** What errand knows about one configured model (its entry in the provider config, with defaults applied). */
export interface ModelInfo {
  provider: string;
  /** The model id at the provider. */
  model: string;
  kind: ProviderKindName;
  /** Tokens of prompt plus answer the model accepts (entry `contextWindow`, else `defaultContextWindow`). */
  contextWindow: number;
  /**
   * The entry's own output-token limit, when it sets one. It ranks below the delegation, recipe and agent
   * and above `ERRAND_MAX_OUTPUT_TOKENS` (SEMANTICS §5), so the caller resolves the final value.
   */
  maxOutputTokens?: number;
  /** Reasoning efforts the model takes (empty: none; send no `reasoningEffort`). */
  reasoningEfforts: string[];
  /** The effort to send when a delegation names none. */
  defaultReasoningEffort?: string;
  /** The entry's prices, US dollars per million tokens (absent: its calls count as unpriced). */
  prices?: ModelPrices;
}

/** Resolves model routes to chat models, and lists what is configured. */
export interface ModelRegistry {
  /**
   * The chat model for a route. Throws a `ModelNotConfigured` failure when the provider is not configured
   * or the model is not on its allow-list.
   */
  resolve(route: ModelRoute): ChatModel;
  /** What is configured about a route's model; throws like `resolve` for a route that is not allowed. */
  modelInfo(route: ModelRoute): ModelInfo;
  /** The configured providers, in configured order. */
  providers(): ProviderInfo[];
}

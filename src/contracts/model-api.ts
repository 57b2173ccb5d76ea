import { z } from 'zod';

/**
 * Wire schemas of the model catalog (`GET /v1/models`). Shared pieces are in api.ts.
 */

// ---- catalog ---------------------------------------------------------------------------------------

/** One allowed model with its settings (defaults applied), as `list_subagent_models(provider)` shows it. */
export const modelEntryViewSchema = z.object({
  id: z.string(),
  /** Tokens of prompt plus answer the model accepts. */
  contextWindow: z.number(),
  /** The entry's own output-token limit; null: `ERRAND_MAX_OUTPUT_TOKENS` applies. */
  maxOutputTokens: z.number().nullable(),
  /** Reasoning efforts it takes (empty: none). */
  reasoningEfforts: z.array(z.string()),
  /** The effort a delegation to it gets when nothing names one; null: none is sent. */
  defaultReasoningEffort: z.string().nullable(),
  /** US dollars per million tokens (input, output, and cached or cache-write input when they differ); null: calls count as unpriced. */
  prices: z.object({ input: z.number(), output: z.number(), cachedInput: z.number().optional(), cacheWriteInput: z.number().optional() }).nullable(),
});

/** One allowed model provider. */
export const modelProviderSchema = z.object({
  provider: z.string(),
  kind: z.string(),
  /** The model ids of its allow-list. */
  models: z.array(z.string()),
  defaultModel: z.string().nullable(),
  /** The same models with their settings. */
  entries: z.array(modelEntryViewSchema),
});

/** Query of `GET /v1/models`. */
export const listModelsQuerySchema = z.strictObject({
  provider: z.string().min(1).optional().describe('Only this provider (404 with suggestions when none has that name).'),
});
/** Answer of `GET /v1/models`. */
export const modelsResponseSchema = z.object({
  providers: z.array(modelProviderSchema),
  /** The model a delegation uses when nothing else chooses one. */
  default: z.object({ provider: z.string(), model: z.string() }).nullable(),
});
/** Answer of `GET /v1/models`. */
export type ModelsResponse = z.infer<typeof modelsResponseSchema>;

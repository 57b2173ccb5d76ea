import { z } from 'zod';

/** Tokens and cost of model calls, as the API shows them (SEMANTICS §6 "Spend"): `usage` and `totalUsage` of peeks, results and sessions. */
export const tokenUsageSchema = z.object({
  /** All prompt tokens, cached ones included. */
  inputTokens: z.number(),
  outputTokens: z.number(),
  /** Of inputTokens, those read from the provider's prompt cache. */
  cachedInputTokens: z.number().optional(),
  /** Of inputTokens, those written to the prompt cache (Anthropic). */
  cacheWriteInputTokens: z.number().optional(),
  /** Cost in micro-dollars (integer; 1 = 0.000001 USD) from the model entries' prices. Absent in runs recorded before costs were kept. */
  costMicroUsd: z.number().int().optional(),
  /** The cost in US dollars (costMicroUsd / 1,000,000). Absent in runs recorded before costs were kept. */
  costUsd: z.number().optional(),
  /** Model calls whose model entry has no prices: their cost is not counted. */
  unpricedCalls: z.number().int().optional(),
});

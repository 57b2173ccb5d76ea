import { z } from 'zod';
import { pricedUsage, type ModelPrices } from '../domain/model-cost';
import type { ChatModel } from './model-port';

/*
 * Prices of a model entry (SEMANTICS §6 "Spend"): their schema in the provider configuration, and the
 * wrapper that gives every answer of a resolved model its cost.
 */

// A price is USD per million tokens: a finite number, zero for a free kind of token (a local model). Checked
// in one refinement of an unknown value: a failed type check would abort the entry, and the model list's
// union of a string and an entry (provider-config.ts) would then report its generic message instead of
// naming the price.
const usdPerMillion = (field: string, example: number) =>
  z
    .unknown()
    .superRefine((value, context) => {
      const unit = `US dollars per million tokens, e.g. ${example}`;
      if (typeof value !== 'number') context.addIssue({ code: 'custom', message: `prices.${field} must be a number of ${unit}` });
      else if (!Number.isFinite(value)) context.addIssue({ code: 'custom', message: `prices.${field} must be a finite number of ${unit}` });
      else if (value < 0) context.addIssue({ code: 'custom', message: `prices.${field} must not be negative (${unit})` });
    })
    .transform((value) => value as number);

/** Schema of a model entry's prices: US dollars per million input, output, cached-input and cache-write tokens. */
export const modelPricesSchema = z
  .object({
    input: usdPerMillion('input', 2.5),
    output: usdPerMillion('output', 10),
    cachedInput: usdPerMillion('cachedInput', 1.25).optional(),
    cacheWriteInput: usdPerMillion('cacheWriteInput', 3.75).optional(),
  })
  .strict();

/** A model whose answers carry their cost (or count as unpriced): every caller, compaction too, gets it. */
export function pricedModel(model: ChatModel, prices: ModelPrices | undefined): ChatModel {
  return {
    async generate(request, options) {
      const response = await model.generate(request, options);
      return { ...response, usage: pricedUsage(response.usage, prices) };
    },
  };
}

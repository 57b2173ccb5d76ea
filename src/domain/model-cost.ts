import type { TokenUsage, UsageView } from '../contracts/model';

/*
 * What a model call costs (SEMANTICS §6 "Spend"): the usage the provider reported, priced with the model
 * entry's prices. Pure, so the registry prices each answer as it arrives and tests check exact sums.
 */

/** Prices of a model, in USD per million tokens (a model entry's `prices`). */
export interface ModelPrices {
  /** Prompt tokens neither read from nor written to a cache. */
  input: number;
  /** Answer tokens (reasoning included, as providers bill them). */
  output: number;
  /** Prompt tokens read from the provider's cache; `input` when not set. */
  cachedInput?: number;
  /** Prompt tokens written to the cache (Anthropic bills them above `input`); `input` when not set. */
  cacheWriteInput?: number;
}

/**
 * The cost of one call in micro-dollars: tokens × USD per million tokens is micro-dollars, so each kind of
 * token times its price, summed and rounded once to a whole micro-dollar.
 */
export function callCostMicroUsd(usage: TokenUsage, prices: ModelPrices): number {
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteInputTokens ?? 0;
  const plain = Math.max(0, usage.inputTokens - cached - written);
  const micro = plain * prices.input + cached * (prices.cachedInput ?? prices.input) + written * (prices.cacheWriteInput ?? prices.input) + usage.outputTokens * prices.output;
  return Math.round(micro);
}

/**
 * One call's usage with its cost: `costMicroUsd` when the model has prices, otherwise counted in
 * `unpricedCalls` so a total never passes an unknown cost off as zero.
 */
export function pricedUsage(usage: TokenUsage, prices: ModelPrices | undefined): TokenUsage {
  const { costMicroUsd: _cost, unpricedCalls: _unpriced, ...tokens } = usage;
  if (prices === undefined) return { ...tokens, unpricedCalls: 1 };
  const cost = callCostMicroUsd(tokens, prices);
  return cost === 0 ? tokens : { ...tokens, costMicroUsd: cost };
}

/** The view of a usage (the cost fields always present). */
export function usageView(usage: TokenUsage): UsageView {
  const costMicroUsd = usage.costMicroUsd ?? 0;
  return { ...usage, costMicroUsd, costUsd: costMicroUsd / 1_000_000 };
}

/** A cost for people: `$0.001234` (micro-dollar precision, trailing zeros kept to two places). */
export function formatUsd(costMicroUsd: number): string {
  const dollars = (costMicroUsd / 1_000_000).toFixed(6).replace(/0{1,4}$/, '');
  return `$${dollars}`;
}

/** Tokens and cost on one line, for people: `1200 in (800 cached), 300 out · $0.0042 (+2 unpriced calls)`. */
export function usageText(usage: TokenUsage): string {
  const cache = [
    ...(usage.cachedInputTokens ? [`${usage.cachedInputTokens} cached`] : []),
    ...(usage.cacheWriteInputTokens ? [`${usage.cacheWriteInputTokens} written to cache`] : []),
  ];
  const calls = (count: number) => `${count} unpriced call${count === 1 ? '' : 's'}`;
  const tokens = `${usage.inputTokens} in${cache.length > 0 ? ` (${cache.join(', ')})` : ''}, ${usage.outputTokens} out`;
  // Nothing priced at all: a cost of $0 would read as free, so say it is unknown.
  if (usage.unpricedCalls && !usage.costMicroUsd) return `${tokens} · cost unknown (${calls(usage.unpricedCalls)})`;
  const unpriced = usage.unpricedCalls ? ` (+${calls(usage.unpricedCalls)})` : '';
  return `${tokens} · ${formatUsd(usage.costMicroUsd ?? 0)}${unpriced}`;
}

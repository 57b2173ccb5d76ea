import { describe, expect, it } from 'vitest';
import { addUsage, zeroUsage } from '../../src/contracts/model';
import { callCostMicroUsd, formatUsd, pricedUsage, usageText, usageView } from '../../src/domain/model-cost';

describe('what a model call costs', () => {
  it('prices each kind of token: tokens × USD per million tokens is micro-dollars', () => {
    // 1,000 plain input at 2.5, 400 cached at 1.25, 200 written at 3.75, 100 output at 10.
    const usage = { inputTokens: 1_600, outputTokens: 100, cachedInputTokens: 400, cacheWriteInputTokens: 200 };
    expect(callCostMicroUsd(usage, { input: 2.5, output: 10, cachedInput: 1.25, cacheWriteInput: 3.75 })).toBe(2_500 + 500 + 750 + 1_000);
  });

  it('charges cached and cache-write tokens at the input price when the entry names no price for them', () => {
    const usage = { inputTokens: 1_600, outputTokens: 100, cachedInputTokens: 400, cacheWriteInputTokens: 200 };
    expect(callCostMicroUsd(usage, { input: 2.5, output: 10 })).toBe(1_600 * 2.5 + 1_000);
  });

  it('rounds once per call to a whole micro-dollar', () => {
    // 7 × 0.15 + 3 × 0.6 = 1.05 + 1.8 = 2.85 micro-dollars.
    expect(callCostMicroUsd({ inputTokens: 7, outputTokens: 3 }, { input: 0.15, output: 0.6 })).toBe(3);
    expect(callCostMicroUsd({ inputTokens: 0, outputTokens: 0 }, { input: 0.15, output: 0.6 })).toBe(0);
  });

  it('a call to a model without prices counts as unpriced, never as free', () => {
    expect(pricedUsage({ inputTokens: 10, outputTokens: 5 }, undefined)).toEqual({ inputTokens: 10, outputTokens: 5, unpricedCalls: 1 });
    expect(pricedUsage({ inputTokens: 10, outputTokens: 5, costMicroUsd: 99 }, { input: 1, output: 2 })).toEqual({ inputTokens: 10, outputTokens: 5, costMicroUsd: 20 });
    // A free model (prices of zero) is priced: no cost and not unpriced.
    expect(pricedUsage({ inputTokens: 10, outputTokens: 5 }, { input: 0, output: 0 })).toEqual({ inputTokens: 10, outputTokens: 5 });
  });
});

describe('usage sums and views', () => {
  it('adds every counter in whole micro-dollars and leaves zero counters out', () => {
    const a = { inputTokens: 100, outputTokens: 10, cachedInputTokens: 40, costMicroUsd: 1_234 };
    const b = { inputTokens: 50, outputTokens: 5, cacheWriteInputTokens: 20, costMicroUsd: 766, unpricedCalls: 1 };
    expect(addUsage(a, b)).toEqual({ inputTokens: 150, outputTokens: 15, cachedInputTokens: 40, cacheWriteInputTokens: 20, costMicroUsd: 2_000, unpricedCalls: 1 });
    expect(addUsage(zeroUsage, zeroUsage)).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it('sums 0.1-dollar costs without float drift', () => {
    let total = zeroUsage;
    for (let call = 0; call < 10; call += 1) total = addUsage(total, { inputTokens: 0, outputTokens: 0, costMicroUsd: 100_000 });
    expect(total.costMicroUsd).toBe(1_000_000);
    expect(usageView(total).costUsd).toBe(1);
  });

  it('a view always carries the cost in micro-dollars and in USD', () => {
    expect(usageView({ inputTokens: 3, outputTokens: 4 })).toEqual({ inputTokens: 3, outputTokens: 4, costMicroUsd: 0, costUsd: 0 });
    expect(usageView({ inputTokens: 3, outputTokens: 4, costMicroUsd: 4_250 })).toEqual({ inputTokens: 3, outputTokens: 4, costMicroUsd: 4_250, costUsd: 0.00425 });
  });

  it('shows tokens and cost to people', () => {
    expect(formatUsd(4_250)).toBe('$0.00425');
    expect(formatUsd(1_500_000)).toBe('$1.50');
    expect(formatUsd(0)).toBe('$0.00');
    expect(usageText({ inputTokens: 1_200, outputTokens: 300, cachedInputTokens: 800, costMicroUsd: 4_200, unpricedCalls: 2 })).toBe('1200 in (800 cached), 300 out · $0.0042 (+2 unpriced calls)');
    // No call priced: the cost is unknown, not $0.
    expect(usageText({ inputTokens: 1_200, outputTokens: 300, costMicroUsd: 0, unpricedCalls: 1 })).toBe('1200 in, 300 out · cost unknown (1 unpriced call)');
    expect(usageText({ inputTokens: 5, outputTokens: 1 })).toBe('5 in, 1 out · $0.00');
  });
});

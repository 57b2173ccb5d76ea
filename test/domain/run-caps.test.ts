import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/settings/config';
import { capCrossing, chooseCaps, dailyCapRefusal, firstPromptRefusal, remainingCaps } from '../../src/domain/run-caps';
import { delegateRequestSchema } from '../../src/contracts/delegation';

/** The caps of a run (decision 0027): which is reached, what a child gets, estimates, and the operator's settings. */

const usage = (inputTokens: number, outputTokens: number, costMicroUsd?: number) => ({ inputTokens, outputTokens, ...(costMicroUsd !== undefined ? { costMicroUsd } : {}) });
const prices = { input: 2, output: 8 };

describe('capCrossing', () => {
  it('names the cap that is reached with its own status and the figures; tokens first, then money, then time', () => {
    const used = { total: usage(900, 200, 5_000), startedAt: 1_000, now: 91_000 };
    expect(capCrossing({ tokenBudget: 1_000, costBudgetMicroUsd: 4_000, timeBudgetMs: 60_000 }, used)).toEqual({ status: 'budget', cap: 'tokens', diagnostic: 'used 1100 tokens (with its subagents); the token budget is 1000' });
    expect(capCrossing({ costBudgetMicroUsd: 4_000, timeBudgetMs: 60_000 }, used)).toEqual({ status: 'budget', cap: 'cost', diagnostic: 'spent $0.005 (with its subagents); the cost budget is $0.004' });
    expect(capCrossing({ timeBudgetMs: 60_000 }, used)).toEqual({ status: 'budget', cap: 'time', diagnostic: 'ran for 90 s since it started; the time budget is 60 s' });
    expect(capCrossing({ tokenBudget: 2_000, costBudgetMicroUsd: 6_000, timeBudgetMs: 120_000 }, used)).toBeUndefined();
  });

  it('an unpriced run has spent nothing against a cost cap (planning refuses that pairing)', () => {
    expect(capCrossing({ costBudgetMicroUsd: 1 }, { total: usage(10, 10), startedAt: 0, now: 0 })).toBeUndefined();
  });

  it('what remains of each cap, never below 0', () => {
    expect(remainingCaps({ tokenBudget: 1_000, costBudgetMicroUsd: 4_000, timeBudgetMs: 60_000 }, { total: usage(900, 200, 3_000), startedAt: 0, now: 20_000 })).toEqual({ tokens: 0, costMicroUsd: 1_000, timeMs: 40_000 });
    expect(remainingCaps({}, { total: usage(1, 1), startedAt: 0, now: 0 })).toEqual({});
  });
});

describe('chooseCaps', () => {
  const base = { request: {}, definition: {}, parent: {}, operator: {}, model: 'p/m', prices };

  it('request > recipe > operator, and never more than the parent has left', () => {
    expect(chooseCaps({ ...base, request: { timeBudgetSecs: 600, costBudgetUsd: 0.5 }, definition: { timeBudgetSecs: 60, costBudgetUsd: 0.1 } })).toEqual({ ok: true, timeBudgetMs: 600_000, costBudgetMicroUsd: 500_000, warnings: [] });
    expect(chooseCaps({ ...base, definition: { timeBudgetSecs: 60, costBudgetUsd: 0.1 }, operator: { timeBudgetMs: 3_600_000, costBudgetMicroUsd: 2_000_000 } })).toEqual({ ok: true, timeBudgetMs: 60_000, costBudgetMicroUsd: 100_000, warnings: [] });
    expect(chooseCaps({ ...base, operator: { timeBudgetMs: 3_600_000, costBudgetMicroUsd: 2_000_000 } })).toEqual({ ok: true, timeBudgetMs: 3_600_000, costBudgetMicroUsd: 2_000_000, warnings: [] });
    expect(chooseCaps({ ...base, request: { timeBudgetSecs: 600, costBudgetUsd: 0.5 }, parent: { timeMs: 30_000, costMicroUsd: 1_234 } })).toEqual({ ok: true, timeBudgetMs: 30_000, costBudgetMicroUsd: 1_234, warnings: [] });
    expect(chooseCaps(base)).toEqual({ ok: true, warnings: [] });
  });

  it("a request over the operator's ceiling is refused naming the setting; a recipe's is capped with a warning", () => {
    expect(chooseCaps({ ...base, request: { timeBudgetSecs: 7_200 }, operator: { timeBudgetMs: 3_600_000 } })).toEqual({ ok: false, failure: { field: 'time_budget', code: 'time-budget-over-limit', message: "time_budget 7200 is above this server's limit of 3600 seconds per delegation (ERRAND_MAX_TIME_BUDGET_SECS); ask for at most 3600, or leave time_budget out." } });
    expect(chooseCaps({ ...base, request: { costBudgetUsd: 3 }, operator: { costBudgetMicroUsd: 2_000_000 } })).toEqual({ ok: false, failure: { field: 'cost_budget_usd', code: 'cost-budget-over-limit', message: "cost_budget_usd 3 is above this server's limit of $2.00 per delegation (ERRAND_MAX_COST_BUDGET_USD); ask for at most $2.00, or leave cost_budget_usd out." } });
    const capped = chooseCaps({ ...base, definition: { timeBudgetSecs: 7_200, file: 'dir:/r: slow.yaml' }, operator: { timeBudgetMs: 3_600_000 } });
    expect(capped).toEqual({
      ok: true,
      timeBudgetMs: 3_600_000,
      warnings: ["dir:/r: slow.yaml: settings.time_budget asks for 7200 seconds, above this server's limit of 3600 (ERRAND_MAX_TIME_BUDGET_SECS); it runs with 3600. A recipe or agent file can lower the operator's limits, never raise them."],
    });
  });

  it('a cost cap on a model without prices is refused, saying where the cap comes from', () => {
    expect(chooseCaps({ ...base, prices: undefined, parent: { costMicroUsd: 10 } })).toEqual({
      ok: false,
      failure: {
        field: 'cost_budget_usd',
        code: 'cost-cap-needs-prices',
        message: 'a cost cap (the cost budget it inherits from you) needs a model with prices, and p/m has none in the provider configuration, so the cost of its calls is unknown; choose a model with prices (list_subagent_models shows them), or leave the cost cap out.',
      },
    });
    expect(chooseCaps({ ...base, prices: undefined, request: { timeBudgetSecs: 10 } })).toEqual({ ok: true, timeBudgetMs: 10_000, warnings: [] });
  });
});

describe('estimates before a start', () => {
  it('a fork is refused when its repeated conversation does not fit the tokens or the money left', () => {
    expect(firstPromptRefusal({ ownTokens: 20, forkTokens: 1_000, fork: true }, { tokens: 500 }, { name: 'p/m', prices })).toBe(
      "the fork's first prompt (your conversation so far, 1000 tokens, and its task) is estimated at 1020 tokens, more than its token budget of 500 (what is left of yours, or what it asked for); delegate without fork and give the subagent only what it needs in instructions.",
    );
    expect(firstPromptRefusal({ ownTokens: 20, forkTokens: 1_000, fork: true }, { costMicroUsd: 2_000 }, { name: 'p/m', prices })).toBe(
      "the fork's first prompt (your conversation so far, 1000 tokens, and its task) is estimated at 1020 tokens, $0.00204 at p/m's input price, more than its cost budget of $0.002 (what is left of yours, or what it asked for); delegate without fork and give the subagent only what it needs in instructions.",
    );
    expect(firstPromptRefusal({ ownTokens: 20, forkTokens: 1_000, fork: true }, { tokens: 2_000, costMicroUsd: 2_040 }, { name: 'p/m', prices })).toBeUndefined();
  });
});

describe('daily cap', () => {
  it('refuses once the day has reached the cap, naming it and the figures', () => {
    expect(dailyCapRefusal('acme', '2026-12-02', 4_999, 5_000)).toBeUndefined();
    expect(dailyCapRefusal('acme', '2026-12-02', 5_000, undefined)).toBeUndefined();
    expect(dailyCapRefusal('acme', '2026-12-02', 5_000, 5_000)).toBe('tenant acme has spent $0.005 on model calls today (2026-12-02, UTC), and the daily cost cap per tenant is $0.005 (ERRAND_TENANT_DAILY_COST_USD); nothing new starts until 00:00 UTC');
  });
});

describe('the operator\'s cap settings', () => {
  const priced = JSON.stringify([{ name: 'p', kind: 'scripted', models: [{ id: 'm', prices }] }]);
  const unpriced = JSON.stringify([{ name: 'p', kind: 'scripted', models: [{ id: 'm', prices }, 'cheap'] }]);

  it('are read in seconds and US dollars', () => {
    const config = loadConfig({ HOME: '/home/someone', ERRAND_PROVIDERS: priced, ERRAND_MAX_TIME_BUDGET_SECS: '900', ERRAND_MAX_COST_BUDGET_USD: '2.5', ERRAND_TENANT_DAILY_COST_USD: '100' });
    expect(config.caps).toEqual({ timeBudgetMs: 900_000, costBudgetMicroUsd: 2_500_000, tenantDailyCostMicroUsd: 100_000_000 });
    expect(loadConfig({ HOME: '/home/someone' }).caps).toEqual({});
  });

  it('a bad value names the setting and what is valid', () => {
    expect(() => loadConfig({ HOME: '/home/someone', ERRAND_PROVIDERS: priced, ERRAND_MAX_COST_BUDGET_USD: 'lots' })).toThrow('ERRAND_MAX_COST_BUDGET_USD="lots" is not valid: use an amount of US dollars above 0 and at most 1000000, e.g. 5 or 0.25');
    expect(() => loadConfig({ HOME: '/home/someone', ERRAND_MAX_TIME_BUDGET_SECS: '1.5' })).toThrow('ERRAND_MAX_TIME_BUDGET_SECS="1.5" is not valid: use a whole number from 1 to 31536000');
  });

  it('a cost cap with a model that has no prices refuses to load, naming the model', () => {
    expect(() => loadConfig({ HOME: '/home/someone', ERRAND_PROVIDERS: unpriced, ERRAND_TENANT_DAILY_COST_USD: '10' })).toThrow(
      'ERRAND_TENANT_DAILY_COST_USD is set, but model p/cheap has no prices: a cost cap needs the cost of every call; give each model entry prices ({"id": "...", "prices": {"input": 2, "output": 8}}, US dollars per million tokens), or leave ERRAND_TENANT_DAILY_COST_USD unset',
    );
  });
});

describe('the caps of a delegate request, as a caller gets them wrong', () => {
  it('names the unit when time_budget or cost_budget_usd is not a number', () => {
    const issues = (body: unknown) => (delegateRequestSchema.safeParse(body).error?.issues ?? []).map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    expect(issues({ instructions: 'x', time_budget: '2m' })).toEqual(['time_budget: time_budget must be a whole number of seconds (e.g. 120 for two minutes)']);
    expect(issues({ instructions: 'x', cost_budget_usd: '$1' })).toEqual(['cost_budget_usd: cost_budget_usd must be a number of US dollars (e.g. 0.5)']);
    expect(issues({ instructions: 'x', time_budget: 1.5 })).toEqual(['time_budget: time_budget must be a whole number of seconds']);
    expect(issues({ instructions: 'x', time_budget: 120, cost_budget_usd: 0.5 })).toEqual([]);
  });
});

import { z } from 'zod';
import { ConfigError, intFromEnv } from './client-config';
import { costBudgetUsdCeiling, tenantDailyCostUsdCeiling, timeBudgetSecsCeiling } from '../contracts/limits/workflow';
import { usdToMicro } from '../domain/run-caps';
import { modelEntryId, type ProviderConfig } from '../llm/provider-config';

/**
 * The operator's caps of time and money (SEMANTICS §6 "Spend", decision 0027): the most a delegation or a
 * session may run and spend, and what one tenant may spend in a UTC day. Part of errand's configuration
 * (config.ts); none is set by default.
 */

/** The operator's caps. */
export interface CapSettings {
  /** Most wall-clock time a delegation or session may run (`ERRAND_MAX_TIME_BUDGET_SECS`), ms; also what one that asks for none gets. */
  timeBudgetMs?: number;
  /** Most a delegation or session may spend (`ERRAND_MAX_COST_BUDGET_USD`), micro-dollars; also what one that asks for none gets. */
  costBudgetMicroUsd?: number;
  /** Most one tenant's model calls may cost in a UTC day (`ERRAND_TENANT_DAILY_COST_USD`), micro-dollars. */
  tenantDailyCostMicroUsd?: number;
}

/** The `caps` section of the configuration file. */
export const capsFileSchema = z.strictObject({
  maxTimeBudgetSecs: z.number().int().min(1).max(timeBudgetSecsCeiling).optional(),
  maxCostBudgetUsd: z.number().positive().max(costBudgetUsdCeiling).optional(),
  tenantDailyCostUsd: z.number().positive().max(tenantDailyCostUsdCeiling).optional(),
});

function usdFromEnv(env: NodeJS.ProcessEnv, name: string, max: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > max || usdToMicro(value) < 1) {
    throw new ConfigError(`${name}="${raw}" is not valid: use an amount of US dollars above 0 and at most ${max}, e.g. 5 or 0.25`);
  }
  return value;
}

/**
 * Reads the caps from the environment and the file. A cost cap needs prices: with one set, every configured
 * model must carry `prices`, or a call's cost would be unknown and the cap could not hold.
 */
export function capSettings(env: NodeJS.ProcessEnv, file: z.infer<typeof capsFileSchema> | undefined, providers: readonly ProviderConfig[]): CapSettings {
  const timeSecs = intFromEnv(env, 'ERRAND_MAX_TIME_BUDGET_SECS', 1, timeBudgetSecsCeiling) ?? file?.maxTimeBudgetSecs;
  const costUsd = usdFromEnv(env, 'ERRAND_MAX_COST_BUDGET_USD', costBudgetUsdCeiling) ?? file?.maxCostBudgetUsd;
  const dailyUsd = usdFromEnv(env, 'ERRAND_TENANT_DAILY_COST_USD', tenantDailyCostUsdCeiling) ?? file?.tenantDailyCostUsd;
  for (const [setting, value] of [['ERRAND_MAX_COST_BUDGET_USD', costUsd], ['ERRAND_TENANT_DAILY_COST_USD', dailyUsd]] as const) {
    if (value === undefined) continue;
    const unpriced = providers.flatMap((provider) => provider.models.filter((entry) => typeof entry === 'string' || entry.prices === undefined).map((entry) => `${provider.name}/${modelEntryId(entry)}`));
    if (unpriced.length > 0) {
      throw new ConfigError(`${setting} is set, but ${unpriced.length === 1 ? 'model' : 'models'} ${unpriced.join(', ')} ${unpriced.length === 1 ? 'has' : 'have'} no prices: a cost cap needs the cost of every call; give each model entry prices ({"id": "...", "prices": {"input": 2, "output": 8}}, US dollars per million tokens), or leave ${setting} unset`);
    }
  }
  return {
    ...(timeSecs !== undefined ? { timeBudgetMs: timeSecs * 1_000 } : {}),
    ...(costUsd !== undefined ? { costBudgetMicroUsd: usdToMicro(costUsd) } : {}),
    ...(dailyUsd !== undefined ? { tenantDailyCostMicroUsd: usdToMicro(dailyUsd) } : {}),
  };
}

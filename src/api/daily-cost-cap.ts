import type { ErrandConfig } from '../config';
import { utcDay, utcDayEnd } from '../contracts/tenant-spend';
import { dailyCapRefusal } from '../domain/run-caps';
import { ApiProblem, ProblemKind } from './problem';

/** Reads what a tenant's model calls cost today (UTC), in micro-dollars. */
export type TenantSpendReader = (tenant: string, now: number) => Promise<number>;

/**
 * Refuses a start with 429 when the tenant's spend today has reached the operator's daily cost cap
 * (`ERRAND_TENANT_DAILY_COST_USD`, decision 0027), naming the cap and the figures; `Retry-After` is the
 * time until 00:00 UTC, when the next day's spend starts at zero. Without the setting nothing is read.
 */
export async function assertTenantDailyCap(config: ErrandConfig, readSpend: TenantSpendReader | undefined, tenant: string): Promise<void> {
  const cap = config.caps.tenantDailyCostMicroUsd;
  if (cap === undefined || readSpend === undefined) return;
  const now = Date.now();
  const day = utcDay(now);
  const refused = dailyCapRefusal(tenant, day, await readSpend(tenant, now), cap);
  if (refused === undefined) return;
  throw new ApiProblem(429, ProblemKind.dailyCostCap, "The tenant's daily cost cap is reached", {
    detail: refused,
    headers: { 'retry-after': String(Math.max(1, Math.ceil((utcDayEnd(day) - now) / 1_000))) },
  });
}

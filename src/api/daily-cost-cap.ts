import type { ErrandConfig } from '../settings/config';
import { tenantSpendStartWaitMs, tenantStartHoldShare } from '../contracts/limits/workflow';
import { utcDay, utcDayEnd } from '../contracts/tenant-spend';
import { dailyCapRefusal } from '../domain/run-caps';
import { GrpcCode, isGrpcStatus } from '../temporal/grpc-status';
import { createLogger } from '../observability/json-logger';
import { ApiProblem, ProblemKind } from './problem';
import type { TenantSpendDesk } from './tenant-spend-reader';

/**
 * The operator's daily cost cap per tenant (`ERRAND_TENANT_DAILY_COST_USD`, decision 0027) at the API: a
 * start holds part of the cap on the tenant's day before it starts (so starts sent together cannot pass it
 * together), and a message to a running conversation is refused once the day's spend reached it. Refusals
 * are 429s naming the cap and the figures, with `Retry-After` until 00:00 UTC, when the next day starts at
 * zero. Without the setting nothing is read.
 *
 * A read that fails is an error (fail closed: a 503 or 500, never $0). A read that is only slow (no worker
 * answers the day's workflow within {@link tenantSpendStartWaitMs}) lets the request go ahead: the workers
 * check the cap before each model call (tenant-spend-guard.ts), which holds it whatever the API saw.
 */

const log = createLogger('api');

/** The daily cap as the API's services use it (absent without `ERRAND_TENANT_DAILY_COST_USD`). */
export interface DailyCostCap {
  /** Before a start of `workflowId`: holds part of the cap, or refuses with 429. */
  hold(tenant: string, workflowId: string, costBudgetMicroUsd: number | undefined): Promise<void>;
  /** Before a message or a start that spends nothing itself (an MCP session): refuses with 429 at the cap. */
  check(tenant: string): Promise<void>;
}

/** The daily cap over a desk, or undefined when the operator set none. */
export function dailyCostCap(config: ErrandConfig, desk: TenantSpendDesk): DailyCostCap | undefined {
  if (config.caps.tenantDailyCostMicroUsd === undefined) return undefined;
  return {
    hold: (tenant, workflowId, costBudgetMicroUsd) => holdTenantDailyCap(config, desk, tenant, workflowId, costBudgetMicroUsd),
    check: (tenant) => assertTenantDailyCap(config, desk, tenant),
  };
}

/** Refuses a message to a running session or continuable when the tenant's spend today has reached the cap. */
export async function assertTenantDailyCap(config: ErrandConfig, desk: TenantSpendDesk | undefined, tenant: string): Promise<void> {
  const cap = config.caps.tenantDailyCostMicroUsd;
  if (cap === undefined || desk === undefined) return;
  const now = Date.now();
  const spent = await unlessSlow(desk.read(tenant, now), tenant);
  if (spent === undefined) return;
  refuseOver(tenant, now, spent, cap, 0);
}

/**
 * Holds part of the tenant's daily cap for a start of `workflowId` (its cost budget, at most a tenth of the
 * cap), or refuses it with 429 when the day's spend and the holds of other starts reach the cap.
 */
export async function holdTenantDailyCap(config: ErrandConfig, desk: TenantSpendDesk | undefined, tenant: string, workflowId: string, costBudgetMicroUsd: number | undefined): Promise<void> {
  const cap = config.caps.tenantDailyCostMicroUsd;
  if (cap === undefined || desk === undefined) return;
  const now = Date.now();
  const microUsd = Math.round(Math.min(costBudgetMicroUsd ?? Number.POSITIVE_INFINITY, cap * tenantStartHoldShare));
  let answer;
  try {
    answer = await unlessSlow(desk.hold(tenant, now, { key: workflowId, capMicroUsd: cap, microUsd }), tenant);
  } catch (error) {
    // The day's workflow runs on a worker build without holds (an upgrade under way): the spend alone decides.
    if (!isGrpcStatus(error, GrpcCode.failedPrecondition)) throw error;
    log.warn("the tenant's day took no hold; the start is checked against its spend only", { tenant, error });
    return assertTenantDailyCap(config, desk, tenant);
  }
  if (answer === undefined || answer.granted) return;
  refuseOver(tenant, now, answer.spentMicroUsd, cap, answer.heldMicroUsd);
}

function refuseOver(tenant: string, now: number, spentMicroUsd: number, cap: number, heldMicroUsd: number): void {
  const day = utcDay(now);
  const refused = dailyCapRefusal(tenant, day, spentMicroUsd, cap, heldMicroUsd);
  if (refused === undefined) return;
  throw new ApiProblem(429, ProblemKind.dailyCostCap, "The tenant's daily cost cap is reached", {
    detail: refused,
    headers: { 'retry-after': String(Math.max(1, Math.ceil((utcDayEnd(day) - now) / 1_000))) },
  });
}

/** The answer, or undefined when it did not come within {@link tenantSpendStartWaitMs} (then the request goes ahead). */
async function unlessSlow<T>(answer: Promise<T>, tenant: string): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<{ slow: true }>((resolve) => {
    timer = setTimeout(() => resolve({ slow: true }), tenantSpendStartWaitMs);
  });
  // Settled either way, so an answer that comes after the wait is dropped without an unhandled rejection.
  const settled = answer.then((value) => ({ value }), (error: unknown) => ({ error }));
  try {
    const outcome = await Promise.race([settled, slow]);
    if ('error' in outcome && !isGrpcStatus(outcome.error, GrpcCode.deadlineExceeded)) throw outcome.error;
    if ('value' in outcome) return outcome.value;
    log.warn("the tenant's spend today was not read in time; the request goes ahead and the workers hold the cap", { tenant, waitMs: tenantSpendStartWaitMs });
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

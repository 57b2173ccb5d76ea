/**
 * A tenant's spend in one UTC day (SEMANTICS §6 "Spend", decision 0027): kept by one workflow per tenant and
 * day, so every API process and every worker sees the same figure. Model-call activities report each
 * priced call to it; starts read it before they start anything.
 */

/** Workflow type of a tenant's day of spend. */
export const tenantSpendWorkflowType = 'tenantSpendWorkflow';

/** The UTC calendar day of an instant, `YYYY-MM-DD`. */
export function utcDay(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** Epoch ms of the end of a UTC day (the next day's midnight). */
export function utcDayEnd(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`) + 86_400_000;
}


/** Input of a tenant's day of spend (and its state carried across continue-as-new). */
export interface TenantSpendInput {
  tenant: string;
  day: string;
  /** Micro-dollars spent so far this day. */
  spentMicroUsd?: number;
  /** Priced calls counted so far. */
  calls?: number;
  /** Keys of the latest calls counted, so a repeated report of one call counts once. */
  recent?: string[];
}

/** One priced model call of the tenant. */
export interface SpendRecord {
  /** The call's identity (`<conversation>#<seq>`): a report repeated by a retried activity counts once. */
  key: string;
  costMicroUsd: number;
}

/** What a tenant's day of spend shows. */
export interface TenantSpendView {
  tenant: string;
  day: string;
  spentMicroUsd: number;
  calls: number;
}

/** Names of the day's messages, for code that sends them without the SDK (the API's gateway). */
export const tenantSpendMessageNames = { recordSpend: 'recordSpend', spendQuery: 'tenantSpend' } as const;

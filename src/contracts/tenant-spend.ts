/**
 * A tenant's spend in one UTC day (SEMANTICS §6 "Spend", decision 0027): kept by one workflow per tenant and
 * day, so every API process and every worker sees the same figure. Model-call activities report each
 * priced call to it; starts hold part of the cap there before they start anything, so concurrent starts
 * cannot pass the cap together.
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
  /** What starts that have not spent yet hold back of the cap. */
  holds?: SpendHold[];
}

/** A start's hold on the day's cap: kept until its run's first priced call is counted, or until `until`. */
export interface SpendHold {
  /** The started workflow's id (its calls' reports name it as `owner`). */
  key: string;
  microUsd: number;
  /** Epoch ms (workflow time) when the hold lapses. */
  until: number;
}

/** A start's request to hold part of the day's cap (the `holdStart` update). */
export interface HoldRequest {
  /** The workflow id the start will use: a retried start holds once. */
  key: string;
  /** The operator's daily cap, micro-dollars: the hold is refused when spend and holds reach it. */
  capMicroUsd: number;
  /** What to hold, micro-dollars. */
  microUsd: number;
}

/** What a hold came to. */
export interface HoldAnswer {
  granted: boolean;
  spentMicroUsd: number;
  /** What other starts hold (the refused or granted hold not included). */
  heldMicroUsd: number;
}

/** One priced model call of the tenant. */
export interface SpendRecord {
  /** The call's identity (`<conversation>#<seq>`): a report repeated by a retried activity counts once. */
  key: string;
  costMicroUsd: number;
  /** The workflow whose call it was: its start's hold, if any, ends (its spend counts instead). */
  owner?: string;
}

/** What a tenant's day of spend shows. */
export interface TenantSpendView {
  tenant: string;
  day: string;
  spentMicroUsd: number;
  calls: number;
  /** What starts that have not spent yet hold back of the cap. */
  heldMicroUsd?: number;
}

/** Names of the day's messages, for code that sends them without the SDK (the API's gateway). */
export const tenantSpendMessageNames = { recordSpend: 'recordSpend', spendQuery: 'tenantSpend', holdStart: 'holdStart' } as const;

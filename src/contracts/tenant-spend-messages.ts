import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { tenantSpendMessageNames, type HoldAnswer, type HoldRequest, type SpendRecord, type TenantSpendView } from './tenant-spend';

/**
 * The signal and query of a tenant's day of spend (tenant-spend.ts), as the SDK's message definitions. Apart
 * from tenant-spend.ts so that the API, which reads the day by name through its gateway, loads no SDK.
 */

/** Adds one priced call to the day's spend. */
export const recordSpendSignal = defineSignal<[SpendRecord]>(tenantSpendMessageNames.recordSpend);
/** The day's spend so far. */
export const tenantSpendQuery = defineQuery<TenantSpendView>(tenantSpendMessageNames.spendQuery);
/** Holds part of the day's cap for a start, or refuses when spend and holds reach the cap. */
export const holdStartUpdate = defineUpdate<HoldAnswer, [HoldRequest]>(tenantSpendMessageNames.holdStart);

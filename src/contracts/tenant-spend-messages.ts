import { defineQuery, defineSignal } from '@temporalio/workflow';
import { tenantSpendMessageNames, type SpendRecord, type TenantSpendView } from './tenant-spend';

/**
 * The signal and query of a tenant's day of spend (tenant-spend.ts), as the SDK's message definitions. Apart
 * from tenant-spend.ts so that the API, which reads the day by name through its gateway, loads no SDK.
 */

/** Adds one priced call to the day's spend. */
export const recordSpendSignal = defineSignal<[SpendRecord]>(tenantSpendMessageNames.recordSpend);
/** The day's spend so far. */
export const tenantSpendQuery = defineQuery<TenantSpendView>(tenantSpendMessageNames.spendQuery);

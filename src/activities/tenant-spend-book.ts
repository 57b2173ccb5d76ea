import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { tenantSpendQueryTimeoutMs, tenantSpendReportTimeoutMs } from '../contracts/limits/workflow';
import { recordSpendSignal, tenantSpendQuery } from '../contracts/tenant-spend-messages';
import { tenantSpendWorkflowType, utcDay, type SpendRecord, type TenantSpendInput } from '../contracts/tenant-spend';
import { tenantSpendWorkflowId } from '../contracts/workflow-ids';

/**
 * Where a tenant's spend of the day is kept and read (decision 0027): the tenant's day workflow
 * (`errand-spend~<tenant>~<day>`, tenant-spend-workflow.ts). Every worker reports to it and every API
 * process reads it, so the daily cap holds across processes without a store of our own.
 */

/**
 * Reports one priced model call to the tenant's day, starting the day's workflow when it is the first:
 * one signal-with-start, which is safe to repeat (the day counts a call's key once).
 */
export async function recordTenantSpend(client: Client, taskQueue: string, tenant: string, record: SpendRecord, now: number): Promise<void> {
  const day = utcDay(now);
  const input: TenantSpendInput = { tenant, day };
  await client.withDeadline(Date.now() + tenantSpendReportTimeoutMs, () => client.workflow.signalWithStart(tenantSpendWorkflowType, {
    taskQueue,
    workflowId: tenantSpendWorkflowId(tenant, day),
    args: [input],
    signal: recordSpendSignal,
    signalArgs: [record],
    staticSummary: `spend of tenant ${tenant} on ${day} (UTC)`,
  }));
}

/** Micro-dollars the tenant's model calls cost today (UTC), through a worker's client; 0 when nothing was reported yet (the API reads it through its gateway: tenant-spend-reader.ts). */
export async function readTenantSpend(client: Client, tenant: string, now: number): Promise<number> {
  const handle = client.workflow.getHandle(tenantSpendWorkflowId(tenant, utcDay(now)));
  try {
    const view = await client.withDeadline(Date.now() + tenantSpendQueryTimeoutMs, () => handle.query(tenantSpendQuery));
    return view.spentMicroUsd;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return 0;
    throw error;
  }
}

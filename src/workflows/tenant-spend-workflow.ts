import { condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import { tenantSpendGraceMs, tenantSpendRecentCalls } from '../contracts/limits';
import { recordSpendSignal, tenantSpendQuery, utcDayEnd, type TenantSpendInput, type TenantSpendView } from '../contracts/tenant-spend';

/**
 * One tenant's spend in one UTC day (decision 0027): sums the priced model calls its workers report, answers
 * the starts that ask before they start, and ends an hour after its day (late reports of a call made before
 * midnight still count there). It waits without history while nothing is reported, and continues as new
 * when the server suggests it, carrying its sum and the keys of its latest calls.
 */
export async function tenantSpendWorkflow(input: TenantSpendInput): Promise<TenantSpendView> {
  let spentMicroUsd = input.spentMicroUsd ?? 0;
  let calls = input.calls ?? 0;
  const recent = [...(input.recent ?? [])];
  const seen = new Set(recent);
  setHandler(recordSpendSignal, (record) => {
    if (seen.has(record.key) || !Number.isFinite(record.costMicroUsd) || record.costMicroUsd <= 0) return;
    seen.add(record.key);
    recent.push(record.key);
    if (recent.length > tenantSpendRecentCalls) seen.delete(recent.shift() ?? '');
    spentMicroUsd += Math.round(record.costMicroUsd);
    calls += 1;
  });
  const view = (): TenantSpendView => ({ tenant: input.tenant, day: input.day, spentMicroUsd, calls });
  setHandler(tenantSpendQuery, view);
  const endsAt = utcDayEnd(input.day) + tenantSpendGraceMs;
  const left = endsAt - Date.now();
  if (left > 0) await condition(() => workflowInfo().continueAsNewSuggested, left);
  if (Date.now() < endsAt) {
    // Signals that arrived in this task are in the sums: carried into the next run.
    await continueAsNew<typeof tenantSpendWorkflow>({ tenant: input.tenant, day: input.day, spentMicroUsd, calls, recent });
  }
  return view();
}

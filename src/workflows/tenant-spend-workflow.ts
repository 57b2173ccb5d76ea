import { condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import { tenantSpendGraceMs, tenantSpendRecentCalls, tenantStartHoldMs, tenantStartHoldsMax } from '../contracts/limits/workflow';
import { holdStartUpdate, recordSpendSignal, tenantSpendQuery } from '../contracts/tenant-spend-messages';
import { utcDayEnd, type SpendHold, type TenantSpendInput, type TenantSpendView } from '../contracts/tenant-spend';

/**
 * One tenant's spend in one UTC day (decision 0027): sums the priced model calls its workers report, answers
 * the starts that ask before they start (each holds part of the cap until its run's first priced call is
 * counted, so starts sent together cannot all pass the cap; holds change no command), and ends an hour after its day (late reports of a call made before
 * midnight still count there). It waits without history while nothing is reported, and continues as new
 * when the server suggests it, carrying its sum and the keys of its latest calls.
 */
export async function tenantSpendWorkflow(input: TenantSpendInput): Promise<TenantSpendView> {
  let spentMicroUsd = input.spentMicroUsd ?? 0;
  let calls = input.calls ?? 0;
  const recent = [...(input.recent ?? [])];
  const seen = new Set(recent);
  let holds: SpendHold[] = [...(input.holds ?? [])];
  // Holds lapse by the workflow clock; the query only reads (a query must not change state).
  const heldMicroUsd = (): number => holds.reduce((sum, hold) => sum + (hold.until > Date.now() ? hold.microUsd : 0), 0);
  setHandler(recordSpendSignal, (record) => {
    if (record.owner !== undefined) holds = holds.filter((hold) => hold.key !== record.owner);
    if (seen.has(record.key) || !Number.isFinite(record.costMicroUsd) || record.costMicroUsd <= 0) return;
    seen.add(record.key);
    recent.push(record.key);
    if (recent.length > tenantSpendRecentCalls) seen.delete(recent.shift() ?? '');
    spentMicroUsd += Math.round(record.costMicroUsd);
    calls += 1;
  });
  const view = (): TenantSpendView => ({ tenant: input.tenant, day: input.day, spentMicroUsd, calls, heldMicroUsd: heldMicroUsd() });
  setHandler(tenantSpendQuery, view);
  // Synchronous, so two holds never interleave: each sees the spend and the holds before it.
  setHandler(holdStartUpdate, (request) => {
    holds = holds.filter((hold) => hold.until > Date.now());
    const held = heldMicroUsd();
    // A retried start (same workflow id) holds once.
    const existing = holds.find((hold) => hold.key === request.key);
    if (existing) return { granted: true, spentMicroUsd, heldMicroUsd: held - existing.microUsd };
    if (spentMicroUsd + held >= request.capMicroUsd) return { granted: false, spentMicroUsd, heldMicroUsd: held };
    holds.push({ key: request.key, microUsd: Math.max(0, Math.round(request.microUsd)), until: Date.now() + tenantStartHoldMs });
    if (holds.length > tenantStartHoldsMax) holds.shift();
    return { granted: true, spentMicroUsd, heldMicroUsd: held };
  });
  const endsAt = utcDayEnd(input.day) + tenantSpendGraceMs;
  const left = endsAt - Date.now();
  if (left > 0) await condition(() => workflowInfo().continueAsNewSuggested, left);
  if (Date.now() < endsAt) {
    // Signals and holds that arrived in this task are in the sums: carried into the next run.
    await continueAsNew<typeof tenantSpendWorkflow>({ tenant: input.tenant, day: input.day, spentMicroUsd, calls, recent, holds: holds.filter((hold) => hold.until > Date.now()) });
  }
  return view();
}

import { delegationStates, type DelegationSummary } from '../contracts/delegation-api';

/**
 * The delegation summary the API shows, from the facts of one execution — pure, with no Temporal SDK, so
 * the API (facts from the gRPC client) and the CLI's light peek over Temporal's HTTP API (facts from JSON)
 * derive the same answer from the same facts.
 */

/** errand's search attribute values of one execution (absent when not set). */
export interface ErrandAttributeValues {
  kind?: string | undefined;
  source?: string | undefined;
  parent?: string | undefined;
  status?: string | undefined;
  tenant?: string | undefined;
  model?: string | undefined;
  turns?: number | undefined;
}

/** The facts of one execution besides its search attributes; `statusName` as the TypeScript SDK names it (`RUNNING`, `CANCELLED`, ...). */
export interface ExecutionBasics {
  workflowId: string;
  runId: string;
  statusName: string;
  startTime: Date | undefined;
  closeTime: Date | undefined;
}

const delegationStateSet: ReadonlySet<string> = new Set(delegationStates);
const isDelegationState = (value: unknown): value is DelegationSummary['state'] => typeof value === 'string' && delegationStateSet.has(value);

/**
 * The delegation state: the workflow's own ErrandStatus while it runs or after it returned, but Temporal's
 * status when the run ended without returning (terminated, timed out, cancelled from outside, failed).
 */
export function deriveState(temporalStatus: string, errandStatus: unknown): DelegationSummary['state'] {
  switch (temporalStatus) {
    case 'RUNNING':
    case 'CONTINUED_AS_NEW':
      return errandStatus === 'waiting' || errandStatus === 'waiting_approval' ? errandStatus : 'running';
    case 'COMPLETED':
      return isDelegationState(errandStatus) && errandStatus !== 'running' && errandStatus !== 'waiting' && errandStatus !== 'waiting_approval' ? errandStatus : 'completed';
    case 'CANCELLED':
      return 'cancelled';
    default:
      return 'failed';
  }
}

/** A delegation as the API lists and shows it. */
export function summarizeExecution(facts: ExecutionBasics, values: ErrandAttributeValues): DelegationSummary {
  return {
    id: facts.workflowId,
    runId: facts.runId,
    kind: values.kind ?? 'subagent',
    state: deriveState(facts.statusName, values.status),
    temporalStatus: facts.statusName,
    source: values.source ?? null,
    parent: values.parent ?? null,
    model: values.model ?? null,
    turns: values.turns ?? 0,
    startedAt: (facts.startTime ?? new Date(0)).toISOString(),
    closedAt: facts.closeTime ? facts.closeTime.toISOString() : null,
  };
}

/** Whether an execution is a subagent of `tenant` (anything else is reported as not found). */
export function isOwnedSubagent(values: ErrandAttributeValues, tenant: string): boolean {
  return values.tenant === tenant && values.kind === 'subagent';
}

/**
 * A peek's durations, computed by whoever answers (a query's own clock stands still between workflow
 * tasks): up to now while it runs, up to its close once it has ended — an ended delegation's elapsed
 * time does not keep growing.
 */
export function peekDurations(peek: { startedAt: number; lastActivityAt: number }, closedAt: number | undefined, now: number): { elapsedMs: number; idleMs: number } {
  const until = closedAt ?? now;
  return { elapsedMs: Math.max(0, until - peek.startedAt), idleMs: Math.max(0, until - peek.lastActivityAt) };
}

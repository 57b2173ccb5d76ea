import type { WorkflowRunCaps } from '../contracts/workflow-run';

/** Which run-level cap was crossed. */
export type RunCap = 'tokens' | 'time' | 'cost';

/** Why the run ends before its script does. */
export type Stop = { status: 'cancelled'; reason: string } | { status: 'budget'; cap: RunCap; message: string };

/**
 * The first of a run's caps its agents' spend has reached (SEMANTICS §7 "Limits"): they cover every agent
 * of the run, those finished in earlier runs of the workflow (before continue-as-new) included. The
 * message names the cap and its value, as a delegation's `budget` diagnostic does.
 */
export function runCapCrossed(caps: WorkflowRunCaps, spent: { tokens: number; costMicroUsd: number; now: number; deadline: number | undefined }): { cap: RunCap; message: string } | undefined {
  if (caps.tokenBudget !== undefined && spent.tokens >= caps.tokenBudget) {
    return { cap: 'tokens', message: `the run's token budget (${caps.tokenBudget} tokens) is spent: its agents used ${spent.tokens} tokens` };
  }
  if (caps.costBudgetMicroUsd !== undefined && spent.costMicroUsd >= caps.costBudgetMicroUsd) {
    return { cap: 'cost', message: `the run's cost budget (${usd(caps.costBudgetMicroUsd)}) is spent: its agents cost ${usd(spent.costMicroUsd)}` };
  }
  if (spent.deadline !== undefined && caps.timeBudgetMs !== undefined && spent.now >= spent.deadline) {
    return { cap: 'time', message: `the run's time budget (${Math.round(caps.timeBudgetMs / 1_000)} s) has passed` };
  }
  return undefined;
}

/** What is left of the run's caps, for the next agent's plan (each at least 1: a spent cap stops the run). */
export function remainingFor(caps: WorkflowRunCaps, spent: { tokens: number; costMicroUsd: number; now: number; deadline: number | undefined }): { remainingTokens?: number; remainingTimeMs?: number; remainingCostMicroUsd?: number } {
  return {
    ...(caps.tokenBudget !== undefined ? { remainingTokens: Math.max(1, caps.tokenBudget - spent.tokens) } : {}),
    ...(spent.deadline !== undefined ? { remainingTimeMs: Math.max(1, spent.deadline - spent.now) } : {}),
    ...(caps.costBudgetMicroUsd !== undefined ? { remainingCostMicroUsd: Math.max(1, caps.costBudgetMicroUsd - spent.costMicroUsd) } : {}),
  };
}

function usd(microUsd: number): string {
  return `$${(microUsd / 1_000_000).toFixed(6).replace(/0+$/, '').replace(/\.$/, '')}`;
}

/** The patch under which a run's agents share its token and cost caps (a wait and a marker where code from before started the child). */
export const runSharesCapsPatch = 'workflow-run-shares-caps';

/** What a running agent holds of the run's token and cost caps: its own caps, whole, while it runs (its spend is known when it ends). */
export interface AgentReservation {
  tokens?: number;
  costMicroUsd?: number;
}

/**
 * An agent's token and cost caps as it starts (budgets that add up, decision 0050): what the run has left
 * less what its running agents hold, shared equally among `sharers` (the lanes that may start now, or fewer
 * when fewer agents wait). So the agents running at once can never be given more than the run has left,
 * and an agent that ends gives back what it did not spend. Undefined while the running agents hold all
 * that is left of a cap: the agent waits for one of them to end. `{}` for a run without such caps.
 */
export function agentReservation(left: ReturnType<typeof remainingFor>, held: readonly AgentReservation[], sharers: number): AgentReservation | undefined {
  const share = (remaining: number | undefined, holding: (reservation: AgentReservation) => number | undefined): number | null | undefined => {
    if (remaining === undefined) return undefined;
    const free = remaining - held.reduce((sum, reservation) => sum + (holding(reservation) ?? 0), 0);
    if (free < 1) return held.length > 0 ? null : 1;
    return Math.max(1, Math.floor(free / Math.max(1, sharers)));
  };
  const tokens = share(left.remainingTokens, (reservation) => reservation.tokens);
  const costMicroUsd = share(left.remainingCostMicroUsd, (reservation) => reservation.costMicroUsd);
  if (tokens === null || costMicroUsd === null) return undefined;
  return { ...(tokens !== undefined ? { tokens } : {}), ...(costMicroUsd !== undefined ? { costMicroUsd } : {}) };
}

/** A planned agent's token and cost caps within its reservation (each at most what it holds). */
export function capsWithin<Caps extends { tokenBudget?: number; costBudgetMicroUsd?: number }>(planned: Caps, reserved: AgentReservation): Caps {
  const within = (cap: number | undefined, held: number | undefined) => (held === undefined ? cap : Math.min(cap ?? held, held));
  const tokenBudget = within(planned.tokenBudget, reserved.tokens);
  const costBudgetMicroUsd = within(planned.costBudgetMicroUsd, reserved.costMicroUsd);
  return { ...planned, ...(tokenBudget !== undefined ? { tokenBudget } : {}), ...(costBudgetMicroUsd !== undefined ? { costBudgetMicroUsd } : {}) };
}

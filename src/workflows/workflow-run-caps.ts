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

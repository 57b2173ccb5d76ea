import type { ChildReservation, TaskRecord } from '../contracts/carried-agent-state';
import { formatUsd } from './model-cost';
import { childCap } from './run-caps';
import { isLive } from './task-registry';

/*
 * Budgets that add up (SEMANTICS §6 "Spend", decision 0027): what the children of one parent may spend
 * together never exceeds what the parent has left. A child's token and cost caps are reserved when it
 * starts and held while it is live; what it spent counts in the parent's total as it reports, and what it
 * did not spend goes back when it settles (a settled task holds nothing). Time is wall-clock, shared by
 * children running side by side: a child's time cap is never longer than the parent's time left when it
 * starts. Pure: the workflow calls these with its registry and its own remainder.
 */

/** What a parent has left of each cap (absent where it has no such cap). */
export interface CapsLeft {
  tokens?: number;
  timeMs?: number;
  costMicroUsd?: number;
}

/** A child's caps as its input carries them. */
export interface ChildCaps {
  tokenBudget?: number;
  timeBudgetMs?: number;
  costBudgetMicroUsd?: number;
}

/** A child's first prompt as planning estimated it (a fork or a large `context`): tokens, and their cost when the model has prices. */
export interface FirstPromptEstimate {
  tokens: number;
  costMicroUsd?: number;
  fork: boolean;
}

/** What the live children still hold of their reservations: each one's cap less what it has spent, never below 0. */
export function heldByChildren(tasks: readonly TaskRecord[]): { tokens: number; costMicroUsd: number } {
  let tokens = 0;
  let costMicroUsd = 0;
  for (const task of tasks) {
    if (!task.reserved || !isLive(task)) continue;
    if (task.reserved.tokens !== undefined) tokens += Math.max(0, task.reserved.tokens - task.totalUsage.inputTokens - task.totalUsage.outputTokens);
    if (task.reserved.costMicroUsd !== undefined) costMicroUsd += Math.max(0, task.reserved.costMicroUsd - (task.totalUsage.costMicroUsd ?? 0));
  }
  return { tokens, costMicroUsd };
}

/** What a new child may be given: the parent's remainder less what its live children hold. Time is not held. */
export function leftForChildren(left: CapsLeft, tasks: readonly TaskRecord[]): CapsLeft {
  const held = heldByChildren(tasks);
  return {
    ...(left.tokens !== undefined ? { tokens: Math.max(0, left.tokens - held.tokens) } : {}),
    ...(left.timeMs !== undefined ? { timeMs: left.timeMs } : {}),
    ...(left.costMicroUsd !== undefined ? { costMicroUsd: Math.max(0, left.costMicroUsd - held.costMicroUsd) } : {}),
  };
}

/** Why no child can start now because its running siblings hold all that is left, or undefined. */
export function heldRefusal(left: CapsLeft, tasks: readonly TaskRecord[]): string | undefined {
  const free = leftForChildren(left, tasks);
  const held = heldByChildren(tasks);
  const holders = tasks.filter((task) => task.reserved !== undefined && isLive(task)).map((task) => task.taskId);
  const wait = `wait for one of them to end (load with its task id) or cancel one, then delegate again`;
  if (free.tokens === 0 && left.tokens !== undefined) {
    return held.tokens > 0
      ? `your running tasks (${holders.join(', ')}) hold the ${left.tokens} tokens left of your token budget; ${wait}.`
      : 'nothing is left of your token budget.';
  }
  if (free.costMicroUsd === 0 && left.costMicroUsd !== undefined) {
    return held.costMicroUsd > 0
      ? `your running tasks (${holders.join(', ')}) hold the ${formatUsd(left.costMicroUsd)} left of your cost budget; ${wait}.`
      : 'nothing is left of your cost budget.';
  }
  return undefined;
}

/** A planned child's caps fitted to what is left now, and what it reserves; or why it cannot start. */
export type FittedCaps = { ok: true; caps: ChildCaps; reserved?: ChildReservation } | { ok: false; message: string };

/**
 * Fits a planned child's caps to what is left for children now (planning ran while siblings may have
 * started): each cap is at most what is left, the token and cost caps are reserved, and a first prompt
 * estimated at more than the fitted caps refuses the start, as planning refuses one over the child's caps.
 */
export function fitChildCaps(planned: ChildCaps, left: CapsLeft, tasks: readonly TaskRecord[], firstPrompt?: FirstPromptEstimate): FittedCaps {
  const refused = heldRefusal(left, tasks);
  if (refused) return { ok: false, message: refused };
  const free = leftForChildren(left, tasks);
  const tokenBudget = childCap(planned.tokenBudget, free.tokens);
  const timeBudgetMs = childCap(planned.timeBudgetMs, free.timeMs);
  const costBudgetMicroUsd = childCap(planned.costBudgetMicroUsd, free.costMicroUsd);
  const what = firstPrompt?.fork ? "the fork's first prompt" : "the subagent's first prompt";
  const rest = 'what is left of your budget after what your running tasks hold';
  if (firstPrompt && tokenBudget !== undefined && firstPrompt.tokens > tokenBudget) {
    return { ok: false, message: `${what} is estimated at ${firstPrompt.tokens} tokens, more than the ${tokenBudget} tokens of ${rest}; wait for a task to end or cancel one.` };
  }
  if (firstPrompt?.costMicroUsd !== undefined && costBudgetMicroUsd !== undefined && firstPrompt.costMicroUsd > costBudgetMicroUsd) {
    return { ok: false, message: `${what} is estimated at ${formatUsd(firstPrompt.costMicroUsd)}, more than the ${formatUsd(costBudgetMicroUsd)} of ${rest}; wait for a task to end or cancel one.` };
  }
  const reserved: ChildReservation = {
    ...(free.tokens !== undefined && tokenBudget !== undefined ? { tokens: tokenBudget } : {}),
    ...(free.costMicroUsd !== undefined && costBudgetMicroUsd !== undefined ? { costMicroUsd: costBudgetMicroUsd } : {}),
  };
  return {
    ok: true,
    caps: {
      ...(tokenBudget !== undefined ? { tokenBudget } : {}),
      ...(timeBudgetMs !== undefined ? { timeBudgetMs } : {}),
      ...(costBudgetMicroUsd !== undefined ? { costBudgetMicroUsd } : {}),
    },
    ...(Object.keys(reserved).length > 0 ? { reserved } : {}),
  };
}

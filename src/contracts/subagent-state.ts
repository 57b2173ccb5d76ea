/**
 * The states a subagent and its tasks go through (its end statuses, which cap stopped it) and the approval
 * a run waits for: the leaf types that subagent.ts, carried-agent-state.ts, subagent-result.ts and
 * subagent-messages.ts share, so none of those imports another one back. JSON only.
 */

/** How a subagent run ended. */
export const EndStatus = {
  completed: 'completed',
  /** The model's answer was cut off at its output-token limit. */
  truncated: 'truncated',
  maxTurns: 'max_turns',
  cancelled: 'cancelled',
  failed: 'failed',
  /**
   * A cap was reached (SEMANTICS §5-§6): the token budget (`token_budget`), the time budget (`time_budget`,
   * wall-clock seconds since it started) or the cost budget (`cost_budget_usd`, with its descendants'
   * calls); the diagnostic and the result's `budget` say which.
   */
  budget: 'budget',
  /**
   * Listed by SEMANTICS §5 and kept on the wire; nothing ends with it: failed recipe checks and invalid
   * structured output end `failed`, as SEMANTICS §5 says.
   */
  declined: 'declined',
} as const;
/** One of the end statuses. */
export type EndStatus = (typeof EndStatus)[keyof typeof EndStatus];

/** The end status of a run stopped by one of its caps (tokens, time, money): `budget` for each (SEMANTICS §6). */
export type CapStatus = 'budget';
/** Which cap stopped a run that ended `budget`. */
export type BudgetCap = 'tokens' | 'time' | 'cost';
/** True for `budget`: a run a cap stopped (it ends for good, also when continuable). */
export function isCapStatus(status: string): status is CapStatus {
  return status === 'budget';
}

/** Live state of a subagent: running a turn, waiting for an approval or a message (continuable), or ended. */
export type SubagentState = 'running' | 'waiting_approval' | 'waiting' | EndStatus;

/** The state of a task as its parent tracks it. */
export type TaskState = 'starting' | SubagentState;

/** A tool call that waits for an approval. */
export interface PendingApproval {
  /** `<workflow id>:<assistant message seq>:<call index>`: unique and stable across restarts. */
  id: string;
  workflowId: string;
  tool: string;
  argumentsPreview: string;
  /** Epoch ms (workflow time). */
  requestedAt: number;
  /** Epoch ms after which the call counts as denied. */
  expiresAt: number;
}

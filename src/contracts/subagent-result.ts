import type { JsonObject } from './json';
import type { UsageView } from './model';
import type { MessageRef, WorktreeOutcome } from './agent-wire';
import type { BudgetCap, EndStatus, PendingApproval, SubagentState, TaskState } from './subagent-state';

/**
 * What a subagent shows of itself: its peek view while it runs and its result when a run ends. JSON only
 * (both cross durable boundaries: queries, signals to the parent, the workflow's output).
 */

/** The recipe's checks (goose `retry`) as peek shows them. */
export interface RetryView {
  /** The attempt running or being checked (1 = the first run). */
  attempt: number;
  /** Attempts allowed: 1 + `maxRetries`. */
  attempts: number;
  /** What happens now or happened last, e.g. `working`, `running check 1 of 2`, `check 1 failed`, `running on_failure`, `checks passed`. */
  state: string;
}

/** The last tool call a subagent made, for peek. */
export interface ToolCallSummary {
  name: string;
  /** The arguments as JSON, cut to a preview length. */
  argumentsPreview: string;
  turn: number;
}

/** What `peek` shows without waiting. */
export interface SubagentPeek {
  workflowId: string;
  /** Tasks this subagent delegated, if it may delegate. */
  tasks?: { taskId: string; workflowId: string; kind?: 'workflow'; state: TaskState; description: string; turns: number; usage?: UsageView }[];
  /** Messages queued for a continuable subagent. */
  queuedMessages?: number;
  /** Tool calls waiting for an approval. */
  pendingApprovals?: PendingApproval[];
  label: string;
  state: SubagentState;
  /** Epoch ms when the workflow started (workflow time). Durations are computed by whoever reads the peek. */
  startedAt: number;
  /** Epoch ms when its last model or tool call finished, or its last message arrived. */
  lastActivityAt: number;
  turns: number;
  maxTurns: number;
  toolCalls: number;
  /** Context compactions so far (older turns summarised to stay inside the model's context window). */
  compactions?: number;
  /** The recipe's checks (goose `retry`): attempt and what happens now. */
  retry?: RetryView;
  lastToolCall: ToolCallSummary | null;
  lastAssistantText: string | null;
  /** Its own model calls' tokens and cost. */
  usage: UsageView;
  /** Tokens and cost with every descendant's (absent in peeks from before costs were kept). */
  totalUsage?: UsageView;
  model: string;
}

/** The result of a subagent run. */
export interface SubagentResult {
  workflowId: string;
  status: EndStatus;
  /** The final answer (empty unless completed). Cut to a preview when `outputRef` is set and `outputCut`. */
  output: string;
  /** Whatever the subagent said before it stopped (the last assistant text), when not completed. */
  partialOutput: string;
  /** The stored message that holds the whole output (its last assistant text). */
  outputRef?: MessageRef;
  /** True when `output` / `partialOutput` is a preview and the whole text is at `outputRef`. */
  outputCut?: boolean;
  /** True when the run's `structured` result was left out: its JSON is the whole text at `outputRef` (a parent's copy). */
  structuredCut?: boolean;
  /** Why it did not complete: the provider's message, the cancel reason, the limit reached. */
  diagnostic?: string;
  /** With status `budget`: which cap stopped it (tokens, time or money). */
  budget?: BudgetCap;
  /** The validated arguments of its `final_output` call, when it ran with an output schema and completed. */
  structured?: JsonObject;
  /** Its git worktree (`isolation: worktree`): kept with its branch when it changed something, removed otherwise. */
  worktree?: WorktreeOutcome;
  /** The recipe's checks (goose `retry`): how many attempts ran and the last failure. */
  checks?: CheckSummary;
  turns: number;
  toolCalls: number;
  /** Its own model calls' tokens and cost. */
  usage: UsageView;
  /** Tokens and cost with every descendant's (absent in results from before costs were kept). */
  totalUsage?: UsageView;
  durationMs: number;
}

/** What the recipe's checks (goose `retry`) came to. */
export interface CheckSummary {
  /** Attempts that ran (1 = no retry was needed or allowed). */
  attempts: number;
  /** Whether the last attempt's checks all passed. */
  passed: boolean;
  /** The last check that failed, if any. */
  lastFailure?: CheckFailure;
}

/** One failed check (or `on_failure` command). */
export interface CheckFailure {
  /** 1-based number of the check (0 for the `on_failure` command). */
  check: number;
  command: string;
  /** Its exit code; null when it was killed (time limit) or could not start. */
  exitCode: number | null;
  /** Why it failed, in words: `exited with code 1`, `timed out after 300 s`, `was not run: …`. */
  reason: string;
  /** Its output, cut to its start and end when long. */
  outputPreview: string;
  /** Blob key of its whole output (as far as it was kept), when the preview is cut. */
  outputKey?: string;
}

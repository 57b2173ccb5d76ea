import type { ApprovalDecision, PreparedWorktree, TextPart, ToolPolicyNarrowingWire, WorktreeOutcome } from './agent-wire';
import type { JsonObject } from './json';
import type { AgentHooksWire } from './agent-hooks';

/**
 * Signatures of the activities that shape how a delegation runs besides its model and tool calls
 * (SEMANTICS §5 "Recipes and agents as their own tools run them"): the stored output schema of a
 * structured-output run, a recipe's checks (goose `retry`), and the git worktree of `isolation: worktree`.
 * Each stores its outcome by key, like the agent loop's activities, so a retried activity repeats nothing.
 */

/** Store the output schema of a structured-output run once; model calls and validations name it by key. */
export interface StoreOutputSchemaInput {
  /** The workflow's conversation id (of its first attempt): the key derives from it. */
  conversationId: string;
  schema: JsonObject;
}

/** Run one of a recipe's check commands, or its `on_failure` command, in the subagent's working directory. */
export interface RunCheckInput {
  workflowId: string;
  /** The conversation of the attempt it checks: with `step`, the key of the stored outcome. */
  conversationId: string;
  /** `check-<n>` (1-based) or `on-failure`. */
  step: string;
  command: string;
  workingDir: string;
  /** Its time limit. */
  timeoutSeconds: number;
  /** The delegation's narrowings of the tool policy: a check runs only where `run_command` could. */
  toolPolicy?: ToolPolicyNarrowingWire[];
  /** The decision, when the policy puts `run_command` under `ask` and the workflow asked. */
  approval?: ApprovalDecision;
}

/** What one check came to: it ran (passed or not), it waits for an approval, or the policy refuses it. */
export type RunCheckOutput =
  | {
      ran: true;
      passed: boolean;
      /** Null when it was killed (time limit, cancellation) or could not start. */
      exitCode: number | null;
      /** In words: `exited with code 0`, `timed out after 300 s`, ... */
      reason: string;
      /** Its output, cut to its start and end when long. */
      outputPreview: string;
      /** Blob key of the whole output (as far as it was kept), when the preview is cut. */
      outputKey?: string;
    }
  | { ran: false; needsApproval: true }
  | { ran: false; refused: string };

/** Make (or find again) the git worktree of a subagent with `isolation: worktree`. */
export interface PrepareWorktreeInput {
  workflowId: string;
  /** The workflow's conversation id: the key of the stored outcome. */
  conversationId: string;
  /** The working directory the delegation was given (inside a git work tree). */
  workingDir: string;
  /** The branch wanted, without `errand/`: the task id, or the workflow id of an API-started delegation. */
  name: string;
}

/** Remove a subagent's worktree and branch when nothing changed in it; say what became of it. */
export interface FinishWorktreeInput {
  conversationId: string;
  worktree: PreparedWorktree;
}

/**
 * Run an agent file's `SubagentStart` or `Stop` hooks, or the `PreToolUse` / `PostToolUse` hooks around a
 * call of an orchestration tool that the workflow runs itself (decision 0032); the outcome is stored by `step`.
 */
export interface RunAgentHookInput {
  workflowId: string;
  /** The conversation of the attempt: with `step`, the key of the stored outcome. */
  conversationId: string;
  /**
   * `start`, `stop-<assistant message seq>`, or `pre-tool-<seq>-<call index>` / `post-tool-<seq>-<call index>`:
   * one outcome per point of the run.
   */
  step: string;
  event: 'SubagentStart' | 'SubagentStop' | 'PreToolUse' | 'PostToolUse';
  hooks: AgentHooksWire;
  workingDir: string;
  /** Event fields of the hooks' input besides the common ones (`last_assistant_message`, `stop_hook_active`, `tool_input`, `tool_use_id`). */
  eventInput: JsonObject;
  /** For the tool events: errand's name of the tool called (the activity adds `tool_name` and `errand_tool_name`, and matches by it). */
  toolName?: string;
  /** For `PostToolUse`: the call's result (`tool_response`), long texts by reference. */
  toolResponse?: TextPart[];
  toolPolicy?: ToolPolicyNarrowingWire[];
}

/** What the hooks of one event came to: whether one blocked, what they said to the model, what went wrong. */
export interface RunAgentHookOutput {
  blocked: boolean;
  feedback: string[];
  context: string[];
  notes: string[];
}

/** The activities that shape a run: the stored output schema, recipe checks, worktrees, agent hooks. */
export interface RunActivities {
  storeOutputSchema(input: StoreOutputSchemaInput): Promise<string>;
  runCheck(input: RunCheckInput): Promise<RunCheckOutput>;
  runAgentHook(input: RunAgentHookInput): Promise<RunAgentHookOutput>;
  prepareWorktree(input: PrepareWorktreeInput): Promise<PreparedWorktree>;
  finishWorktree(input: FinishWorktreeInput): Promise<WorktreeOutcome>;
}

import type { TextPart, ToolCallRef } from '../contracts/activities';

/* The agent loop's tool-call types, apart so the loop and its hooks (loop-hooks.ts) both read them without importing each other. */

/** What a tool call returned: text parts (long texts by reference) and whether it is an error. */
export interface ToolOutcome {
  parts: TextPart[];
  isError: boolean;
}

/** Runs the orchestration tools (load, delegate, send_message, approve, list_subagent_models). */
export interface OrchestrationTools {
  /** `position` (assistant message seq, call index) makes ids that stay the same on replay. */
  run(call: ToolCallRef, position: { assistantSeq: number; index: number }): Promise<ToolOutcome>;
}

import type { TextPart } from './agent-wire';
import type { JsonObject } from './json';

/**
 * errand as an MCP server (SEMANTICS §6): each MCP session is a session workflow started with `mcp: true`,
 * which runs no model of its own. Its MCP client calls the session's orchestration tools through the
 * `callTool` update, which runs the tool the way the session's own loop does and returns its text, with
 * the notices of background tasks that settled since the client's previous call.
 */

/** The tools an MCP client may call (the session tools of SEMANTICS §2; `approve` stays with a person). */
export const mcpSessionTools = ['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models'] as const;

/** One of {@link mcpSessionTools}. */
export type McpSessionToolName = (typeof mcpSessionTools)[number];

/** A tool call from the MCP client. */
export interface CallToolInput {
  name: string;
  arguments: JsonObject;
}

/** What the tool returned, and the notices that were waiting for the client (each a list of text parts). */
export interface CallToolResult {
  parts: TextPart[];
  isError: boolean;
  notices: TextPart[][];
  /**
   * The number of the last notice in `notices`: they stay in the session, and come again with the next call,
   * until the caller acknowledges this number (`ackNoticesSignal`) once it has the answer in hand. Absent from
   * a session that takes notices as it hands them over (before this scheme) and when there are none.
   */
  noticesUpTo?: number;
}

/** Acknowledges the notices an MCP client got, up to and including a number ({@link CallToolResult.noticesUpTo}). */
export interface AckNoticesInput {
  upTo: number;
}

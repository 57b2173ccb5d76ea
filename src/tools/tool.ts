import type { JsonObject } from '../contracts/json';
import type { ToolSpec } from '../contracts/model';

/** What a tool call may touch and how it is stopped. */
export interface ToolContext {
  /** The delegation's working directory: every path a tool touches is confined to it. */
  workingDir: string;
  /** Aborted when the tool call is cancelled (activity cancellation): long tools stop promptly. */
  abortSignal: AbortSignal;
}

/**
 * What a tool call returns to the model. Failures the model can act on (bad arguments, a path outside
 * the working directory, a missing file, a non-zero exit) are `isError: true` results, never exceptions,
 * so the agent loop can show them to the model and carry on.
 */
export interface ToolResult {
  content: string;
  isError: boolean;
}

/** One tool. `spec.name` is the tool's own (unqualified) name inside its toolset. */
export interface Tool {
  spec: ToolSpec;
  run(args: JsonObject, context: ToolContext): Promise<ToolResult>;
}

/**
 * A named group of tools (the built-in `developer` toolset, an MCP server...). `tools()` is async
 * because some toolsets discover their tools at run time (an MCP server lists them).
 */
export interface Toolset {
  /** Lower-case name, no `__` (it separates toolset and tool in qualified names). */
  name: string;
  description: string;
  /** Its tools; `context` names the working directory they will run for (a recipe server runs one process per directory). */
  tools(context?: { workingDir: string }): Promise<Tool[]>;
}

/** Builds a successful result. */
export function toolSuccess(content: string): ToolResult {
  return { content, isError: false };
}

/** Builds an error result: a message the model can read and act on. */
export function toolError(content: string): ToolResult {
  return { content, isError: true };
}

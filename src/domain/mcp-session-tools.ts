import type { JsonObject } from '../contracts/json';
import { mcpSessionTools, type McpSessionToolName } from '../contracts/mcp-session';
import { orchestrationToolSpecs } from './orchestration-tools';

/** MCP tool annotations (hints a client may show or act on; the spec's `ToolAnnotations`). */
export interface McpToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** One tool as `tools/list` offers it: the session tool's own name, description and input schema, plus hints. */
export interface McpToolListing {
  name: McpSessionToolName;
  title: string;
  description: string;
  inputSchema: JsonObject;
  annotations: McpToolAnnotations;
}

// Why these hints: `load` can cancel a task (`cancel: true`); `delegate`, `run_workflow` and `send_message` set subagents
// to work with its tools (files, commands, MCP servers), so a client should treat them as acting on the world.
const annotations: Record<McpSessionToolName, McpToolAnnotations> = {
  load: { title: 'Load a source or a task', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  delegate: { title: 'Delegate to a subagent', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  run_workflow: { title: 'Run a workflow', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  send_message: { title: 'Message a continuable task', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  list_subagent_models: { title: 'List subagent models', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
};

/**
 * The tools errand offers an MCP client (SEMANTICS §6): the session tools with the same descriptions and
 * input schemas a session's model gets (src/domain/orchestration-tools.ts), so their limits are the same.
 */
export function mcpToolListings(): McpToolListing[] {
  return mcpSessionTools.map((name) => {
    const spec = orchestrationToolSpecs[name];
    return { name, title: annotations[name].title, description: spec.description, inputSchema: spec.inputSchema, annotations: annotations[name] };
  });
}

/** Whether a name is one of the tools an MCP client may call. */
export function isMcpSessionTool(name: string): name is McpSessionToolName {
  return (mcpSessionTools as readonly string[]).includes(name);
}

/** Tools whose call changes something: a client's retry of the same request must not run them twice. */
export const mcpToolsWithEffects: readonly McpSessionToolName[] = ['delegate', 'run_workflow', 'send_message'];

/** Tools that start work which may run in the background (`async`): what a client may run as a task, and what reports progress. */
export const mcpBackgroundTools: readonly string[] = ['delegate', 'run_workflow'];

/** Whether a call is one of {@link mcpBackgroundTools} that its caller waits for (not `async`): the calls that report progress. */
export function waitsInForeground(name: unknown, args: { readonly async?: unknown; readonly [argument: string]: unknown } | undefined): boolean {
  return typeof name === 'string' && mcpBackgroundTools.includes(name) && args?.async !== true;
}

/**
 * The answer to a tool call whose result did not come within the server's longest wait (the HTTP API's,
 * `ERRAND_API_MAX_WAIT_MS`): the call goes on in the session, and the client's model is told how to get
 * its result.
 */
export function stillRunningText(name: string, args: JsonObject, waitedMs: number): string {
  const waited = `${name} is still running after ${Math.round(waitedMs / 1_000)} s, the longest this server waits for one answer.`;
  const taskId = typeof args.source === 'string' && /^task-\d+$/.test(args.source) ? args.source : undefined;
  if (name === 'load' && taskId) return `${waited} The task goes on: call load with source "${taskId}" again to keep waiting for it, or with peek: true to see its progress.`;
  if (name === 'delegate' && args.async !== true && args.continuable !== true) {
    return `${waited} The subagent goes on working in the foreground of this session. Send the same request again (the same request id and arguments) to keep waiting for it and get its result: it is not started twice. Its notices wait for your next tool result.`;
  }
  if (name === 'run_workflow' && args.async !== true) {
    return `${waited} The workflow run goes on in the foreground of this session. Send the same request again (the same request id and arguments) to keep waiting for it and get its result: it is not started twice.`;
  }
  if (mcpToolsWithEffects.includes(name as McpSessionToolName)) {
    return `${waited} It goes on in this session: send the same request again (the same request id and arguments) to keep waiting for it and get its result (it is not run twice).`;
  }
  return `${waited} Call ${name} again, or load with no arguments to see the session's tasks.`;
}

/**
 * errand's task id in the answer of a background `delegate` or `run_workflow` ("Started task-3 in the
 * background…", written by the session's orchestration), or undefined when the answer is not that.
 */
export function startedTaskIdOf(text: string): string | undefined {
  return /^Started (\S+) in the background/.exec(text)?.[1];
}

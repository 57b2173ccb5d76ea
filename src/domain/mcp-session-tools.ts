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

// Why these hints: `load` can cancel a task (`cancel: true`); `delegate` and `send_message` set a subagent
// to work with its tools (files, commands, MCP servers), so a client should treat them as acting on the world.
const annotations: Record<McpSessionToolName, McpToolAnnotations> = {
  load: { title: 'Load a source or a task', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  delegate: { title: 'Delegate to a subagent', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
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

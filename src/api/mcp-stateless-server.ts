import { Server } from '@modelcontextprotocol/server';
import type { JsonObject } from '../contracts/json';
import type { CallToolInput, CallToolResult } from '../contracts/mcp-session';
import type { TextPart } from '../contracts/agent-wire';
import type { ToolPolicyConfig } from '../tools/tool-policy';
import { mcpBackgroundTools, startedTaskIdOf, waitsInForeground } from '../domain/mcp-session-tools';
import { mcpProgressIntervalMs } from '../contracts/limits/api';
import { withProgress } from './mcp-progress';
import { allowedToolListings, runErrandToolCall, type ErrandToolAnswer } from './mcp-session-server';
import { clientTakesTasks, createTaskResult, registerTaskHandlers, taskCapability, type McpTaskBackend } from './mcp-tasks-extension';

/**
 * errand's MCP server for protocol revision 2026-07-28 (stateless: no `initialize`, no `Mcp-Session-Id`; each
 * request carries its version and the client's capabilities in `_meta`; decision 0042). The conversation a
 * 2025-11-25 client keeps with its protocol session is here an explicit handle: errand's session id, which
 * a tool call names in its `session` argument or in `_meta["errand/session"]`, and which every tool result
 * carries back in `_meta["errand/session"]`. A tool call without one starts a session and says its id.
 */

/** The `_meta` key (and result `_meta` key) of the session handle. */
export const sessionMetaKey = 'errand/session';

/** The tool argument of the session handle (added to every tool's input schema on this protocol revision). */
export const sessionArgument = 'session';

/** The form of errand's session ids (a handle of another form is refused, naming the argument). */
const sessionIdPattern = /^errand-[0-9a-f]{16}$/;

/** What the stateless server needs of errand: sessions by handle, stored texts, failures, the tool policy and tasks. */
export interface StatelessMcpBackend {
  /** Starts a session for a call that names none; answers its id. */
  startSession(): Promise<string>;
  /** Runs one tool call in a session; `requestId` is the client's JSON-RPC id (a retried request sends it again). */
  callTool(sessionId: string, input: CallToolInput, requestId: string | number): Promise<CallToolResult>;
  /** Reads the whole text of a part given by reference. */
  resolveParts(parts: TextPart[]): Promise<string>;
  /** Why a failed call failed, as the client should read it. */
  describeError(sessionId: string | undefined, error: unknown): string;
  /** The operator's tool policy (`ERRAND_TOOL_POLICY`), applied as on the 2025-11-25 path. */
  toolPolicy?: ToolPolicyConfig | undefined;
  /** What a foreground call's progress notification says now (the subagent the session waits for), if anything. */
  progressOf?: ((sessionId: string) => Promise<string | undefined>) | undefined;
  /** The Tasks extension (`io.modelcontextprotocol/tasks`), where it is served: the tasks, and a session task's delegation (or run) id. */
  tasks?: { backend: McpTaskBackend; delegationOf(sessionId: string, taskId: string): Promise<string | undefined> } | undefined;
  /** The session a call that names none uses (`errand mcp --session`); without it such a call starts a session. */
  defaultSession?: string | undefined;
}

const serverInfo = { name: 'errand', version: '0.1.0' };

const instructions =
  'errand: delegate tasks to durable subagents, in the foreground or in the background, and read their results with load. ' +
  `Your conversation with errand is a session: the first tool call without "${sessionArgument}" starts one and its result names it; ` +
  `pass that id as "${sessionArgument}" in every later call to keep its tasks and their notices, which arrive with your next tool result.`;

/** The tool listings of this revision: each input schema also takes the optional session handle. */
function statelessListings(toolPolicy: ToolPolicyConfig | undefined) {
  return allowedToolListings(toolPolicy).map((tool) => {
    const schema = tool.inputSchema as { properties?: Record<string, unknown> } & JsonObject;
    const properties = { ...(schema.properties ?? {}), [sessionArgument]: sessionProperty };
    return { ...tool, inputSchema: { ...schema, type: 'object' as const, properties } };
  });
}

const sessionProperty = {
  type: 'string',
  description: 'Your errand session (errand-…), as an earlier tool result named it. Leave it out only on your first call: errand starts a session and names it.',
};

/** The handle a call names (argument first, then `_meta`), or an error text naming where it was wrong. */
function handleOf(args: JsonObject, meta: Record<string, unknown> | undefined): { id?: string; problem?: string } {
  const given = args[sessionArgument] ?? meta?.[sessionMetaKey];
  if (given === undefined) return {};
  if (typeof given !== 'string' || !sessionIdPattern.test(given)) {
    return { problem: `"${sessionArgument}" (or _meta "${sessionMetaKey}") must be an errand session id like errand-0123456789abcdef, as a tool result named it; leave it out to start a session` };
  }
  return { id: given };
}

/**
 * A fresh server for one request (the SDK's per-request factory): tools/list and tools/call over errand's
 * sessions by handle; `server/discover` advertises the tools and, when served, the tasks extension.
 */
export function createStatelessErrandServer(backend: StatelessMcpBackend): Server {
  const tasks = backend.tasks;
  const server = new Server(serverInfo, { capabilities: { tools: {}, ...(tasks ? { extensions: taskCapability } : {}) }, instructions });
  server.setRequestHandler('tools/list', () => ({ tools: statelessListings(backend.toolPolicy) }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const { name } = request.params;
    const { [sessionArgument]: _handle, ...args } = (request.params.arguments ?? {}) as JsonObject;
    const handle = handleOf({ [sessionArgument]: _handle as JsonObject[string], ...args }, ctx.mcpReq._meta as Record<string, unknown> | undefined);
    if (handle.problem) return { content: [{ type: 'text' as const, text: `${name} did not run: ${handle.problem}.` }], isError: true };
    let sessionId = handle.id ?? backend.defaultSession;
    let started = false;
    if (sessionId === undefined) {
      try {
        sessionId = await backend.startSession();
        started = true;
      } catch (error) {
        return { content: [{ type: 'text' as const, text: `${name} did not run: ${backend.describeError(undefined, error)}` }], isError: true };
      }
    }
    const id = sessionId;
    const call = { callTool: (input: CallToolInput, requestId: string | number) => backend.callTool(id, input, requestId), resolveParts: backend.resolveParts, describeError: (error: unknown) => backend.describeError(id, error), toolPolicy: backend.toolPolicy };
    const progressToken = ctx.mcpReq._meta?.progressToken;
    const progressOf = backend.progressOf;
    const running = runErrandToolCall(call, name, args, ctx.mcpReq.id);
    // A foreground delegate reports its subagent's turns, cost and last words, a foreground run_workflow its
    // agents by state and its cost, to a client that asked for progress.
    const answer: ErrandToolAnswer =
      progressToken !== undefined && progressOf && waitsInForeground(name, args)
        ? await withProgress(running, () => progressOf(id), (progress, message) => ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, message } }), mcpProgressIntervalMs)
        : await running;
    // A background delegate or run_workflow of a client that takes tasks is answered with the task: the delegation or the run itself.
    const taskId = tasks && mcpBackgroundTools.includes(name) && args.async === true && !answer.isError && clientTakesTasks(ctx.mcpReq.envelope) ? startedTaskIdOf(answer.content[0]?.text ?? '') : undefined;
    const delegationId = tasks && taskId ? await tasks.delegationOf(id, taskId).catch(() => undefined) : undefined;
    const task = tasks && delegationId ? await tasks.backend.get(delegationId).catch(() => undefined) : undefined;
    if (task) {
      // What the call said (and the notices it carried) goes with the task's status message: the client's model reads it there.
      const said = [...answer.content.map((item) => item.text), ...(started ? [`errand started session ${id} for this call.`] : [])].join('\n');
      const { taskId: _id, status, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = task;
      return { ...createTaskResult({ taskId: delegationId ?? _id, status, statusMessage: said, createdAt, lastUpdatedAt, ttlMs, ...(pollIntervalMs ? { pollIntervalMs } : {}) }), _meta: { [sessionMetaKey]: id } } as never;
    }
    if (started) answer.content.push({ type: 'text', text: `errand started session ${id} for this call: pass "${sessionArgument}": "${id}" in your next calls to keep it (its tasks and their notices).` });
    return { ...answer, _meta: { [sessionMetaKey]: id } };
  });
  if (tasks) registerTaskHandlers(server, () => tasks.backend);
  return server;
}

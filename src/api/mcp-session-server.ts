import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, GetTaskPayloadRequestSchema, ListToolsRequestSchema, McpError, type CallToolResult as McpCallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../contracts/json';
import type { CallToolInput, CallToolResult } from '../contracts/mcp-session';
import type { TextPart } from '../contracts/agent-wire';
import { isMcpSessionTool, mcpBackgroundTools, mcpToolListings, waitsInForeground, type McpToolListing } from '../domain/mcp-session-tools';
import { resolvePolicy, type ToolPolicyConfig } from '../tools/tool-policy';
import { mcpProgressIntervalMs } from '../contracts/limits/api';
import { withProgress } from './mcp-progress';
import { legacyTaskCapability, legacyTaskResult, legacyTaskStore, startLegacyTask, type LegacySessionTasks } from './mcp-legacy-tasks';

/** What the MCP server needs of errand: one session's tool calls, and the text behind a stored part. */
export interface McpSessionBackend {
  /** The session workflow this MCP session is (its id is the MCP session id). */
  sessionId: string;
  /** How the client reconnects to this session (shown in the server's instructions). */
  reconnect: string;
  /** Runs one tool call; `requestId` is the client's JSON-RPC request id (a retry of a request sends it again). */
  callTool(input: CallToolInput, requestId: string | number): Promise<CallToolResult>;
  /** Reads the whole text of a part given by reference (a long result or notice). */
  resolveParts(parts: TextPart[]): Promise<string>;
  /** Why a failed call failed, as the client should read it. */
  describeError(error: unknown): string;
  /**
   * The operator's tool policy (`ERRAND_TOOL_POLICY`), applied to the client's own calls as to a session
   * model's: a denied tool is neither listed nor run; a tool under `ask` is listed, and each call is
   * refused, because errand cannot ask a person about a call an MCP client makes (its own prompts are
   * the client's business, and not every client has them).
   */
  toolPolicy?: ToolPolicyConfig | undefined;
  /**
   * 2025-11-25's tasks for clients that use them (mcp-legacy-tasks.ts): the tenant's tasks and this
   * session's own; absent where they are not served.
   */
  tasks?: Omit<LegacySessionTasks, 'load'> | undefined;
  /**
   * What a foreground call's progress notification says now (the subagent or run the session waits for), where
   * the connection can carry notifications during a call (stdio; the HTTP route answers JSON); absent elsewhere.
   */
  progressOf?: (() => Promise<string | undefined>) | undefined;
}

/** Version errand reports to MCP clients (the server's implementation info). */
const serverInfo = { name: 'errand', version: '0.1.0' };

/**
 * An MCP server over one errand session: `tools/list` gives the session tools with their own schemas and
 * hints; `tools/call` runs one through the session workflow and answers with its text, followed by the
 * notices of background tasks that settled since the previous call (one text item each).
 */
export function createErrandMcpServer(backend: McpSessionBackend): Server {
  const tasks: LegacySessionTasks | undefined = backend.tasks && {
    ...backend.tasks,
    load: (taskId) => runErrandToolCall(backend, 'load', { task_id: taskId }, `tasks-result-${taskId}`),
  };
  const taskStore = tasks && legacyTaskStore(tasks);
  const server = new Server(serverInfo, {
    capabilities: { tools: {}, logging: {}, ...(tasks ? { tasks: legacyTaskCapability } : {}) },
    ...(taskStore ? { taskStore } : {}),
    instructions:
      `errand session ${backend.sessionId}: delegate tasks to durable subagents, in the foreground or in the background, ` +
      'and read their results with load. Notices of background tasks arrive with your next tool result. ' +
      `Reconnect to this session (and its tasks) with ${backend.reconnect}.`,
  });
  // Where tasks are served, the tools that start background work say a client may run them as tasks.
  const listed = () => allowedToolListings(backend.toolPolicy).map((tool) => (tasks && mcpBackgroundTools.includes(tool.name) ? { ...tool, execution: { taskSupport: 'optional' as const } } : tool));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed() }));
  // tasks/result waits for its task's end at most as long as this server answers a request (the SDK's own waits without end).
  if (tasks) server.setRequestHandler(GetTaskPayloadRequestSchema, (request, extra) => legacyTaskResult(tasks, request.params.taskId, extra.signal) as Promise<never>);
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<McpCallToolResult> => {
    const { name } = request.params;
    const args = (request.params.arguments ?? {}) as JsonObject;
    if (request.params.task !== undefined) {
      if (!tasks) throw new McpError(ErrorCode.InvalidRequest, 'this errand MCP server does not run tools as tasks here (it has no session service); call the tool without "task"');
      return (await startLegacyTask(tasks, name, args, (taskArgs) => runErrandToolCall(backend, name, taskArgs, extra.requestId))) as unknown as McpCallToolResult;
    }
    const running = runErrandToolCall(backend, name, args, extra.requestId);
    const progressToken = extra._meta?.progressToken;
    const progressOf = backend.progressOf;
    // A foreground delegate or run_workflow reports what it waits for to a client that asked for progress (as at 2026-07-28).
    if (progressToken === undefined || !progressOf || !waitsInForeground(name, args)) return running;
    return withProgress(running, progressOf, (progress, message) => extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } }), mcpProgressIntervalMs);
  });
  return server;
}

/**
 * For a client that keeps its connection open (stdio): sends each notice that waits for the next tool result
 * also as an MCP logging notification (`notifications/message`, level `notice`, logger `errand`) as soon
 * as it is seen, once. The notice still comes with the next tool result, which is what a model reads.
 * Returns the function that stops it. A failed look is skipped; the next one tries again.
 */
export function notifyNotices(server: Server, pendingNotices: () => Promise<TextPart[][]>, resolveParts: (parts: TextPart[]) => Promise<string>, intervalMs: number): () => void {
  let sent = new Set<string>();
  let busy = false;
  const look = async () => {
    if (busy) return;
    busy = true;
    try {
      const notices = await pendingNotices();
      const keys = new Set<string>();
      for (const notice of notices) {
        const key = JSON.stringify(notice);
        keys.add(key);
        if (sent.has(key)) continue;
        await server.sendLoggingMessage({ level: 'notice', logger: 'errand', data: await resolveParts(notice) });
      }
      // Only notices still waiting are remembered: a later notice with the same text is a new one.
      sent = keys;
    } catch {
      // The session is unreachable for a moment, or the client is gone: the next look tries again.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void look(), intervalMs);
  return () => clearInterval(timer);
}

/** The tools the operator's policy lets an MCP client see (a denied tool is not listed). */
export function allowedToolListings(toolPolicy: ToolPolicyConfig | undefined): McpToolListing[] {
  return mcpToolListings().filter((tool) => resolvePolicy(toolPolicy, [], tool.name) !== 'deny');
}

/** What one tool call answers, in the shape both SDK generations take (text items and the error flag). */
export type ErrandToolAnswer = {
  content: { type: 'text'; text: string }[];
  isError: boolean;
};

/**
 * Runs one MCP tool call through a session (either protocol generation): the operator's policy first (a
 * denied tool is unknown, one under `ask` is refused with why), then the session's own call; the answer is
 * the tool's text followed by one text item per notice that waited for the client.
 */
export async function runErrandToolCall(
  backend: Pick<McpSessionBackend, 'callTool' | 'resolveParts' | 'describeError' | 'toolPolicy'>,
  name: string,
  args: JsonObject,
  requestId: string | number,
): Promise<ErrandToolAnswer> {
  const decision = resolvePolicy(backend.toolPolicy, [], name);
  if (!isMcpSessionTool(name) || decision === 'deny') {
    return errorResult(`Unknown tool "${name}". The tools are ${allowedToolListings(backend.toolPolicy).map((tool) => tool.name).join(', ')}.`);
  }
  if (decision === 'ask') {
    return errorResult(`${name} did not run: the operator's tool policy says a person approves each call of ${name}, and errand cannot ask one about a call an MCP client makes. Ask the operator to allow ${name} for MCP clients, or run the delegation with errand's CLI or API, where approvals work (errand approvals).`);
  }
  let result: CallToolResult;
  try {
    result = await backend.callTool({ name, arguments: args }, requestId);
  } catch (error) {
    return errorResult(`${name} did not run: ${backend.describeError(error)}`);
  }
  const content = [{ type: 'text' as const, text: await backend.resolveParts(result.parts) }];
  for (const notice of result.notices) content.push({ type: 'text', text: await backend.resolveParts(notice) });
  return { content, isError: result.isError };
}

function errorResult(text: string): ErrandToolAnswer {
  return { content: [{ type: 'text', text }], isError: true };
}

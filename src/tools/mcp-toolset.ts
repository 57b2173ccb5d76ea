import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject, JsonValue } from '../contracts/json';
import {
  defaultMcpCallTimeoutMs,
  defaultMcpIdleMs,
  defaultMcpStartTimeoutMs,
  maxMcpToolListPages,
  mcpStderrTailChars,
  type McpServerConfig,
} from './mcp-config';
import { convertCallResult } from './mcp-call-result';
import { modelSafeToolName, uniqueName } from './mcp-tool-names';
import { createMcpTransport, type StdioLaunch } from './mcp-transport';
import { toolError, type Tool, type ToolContext, type ToolResult, type Toolset } from './tool';

/** Options of {@link McpToolset}. */
export interface McpToolsetOptions {
  /** Close the connection (stop a stdio server) after this long unused. */
  idleMs?: number;
  /** Default time limit of one request; the server config's `timeoutMs` wins. */
  callTimeoutMs?: number;
  /** Time limit of starting the server and the initialize handshake. */
  startTimeoutMs?: number;
  /** Where `envFrom` values are read (default: the worker's environment). */
  env?: NodeJS.ProcessEnv;
  /** Name the client announces to servers. */
  clientName?: string;
  /** How a stdio server's process is started (recipe servers: in the sandbox or a PID namespace of its own). */
  launch?: StdioLaunch;
}

/** A live connection to the server. */
interface Connection {
  client: Client;
  transport: Transport;
  /** Set once the transport closed (process exit, HTTP session gone); the next use opens a new connection. */
  closed: boolean;
  closeReason?: string;
  /** Tools listed on this connection (until the server says its list changed). */
  tools?: Promise<Tool[]>;
}

/** The state of a server, for diagnostics and tests. */
export interface McpToolsetStatus {
  connected: boolean;
  /** Connections opened so far (1 after the first start; +1 per restart). */
  starts: number;
  /** Process id of a running stdio server. */
  pid?: number;
  /** Why the last start failed or the last connection ended, if it did. */
  lastError?: string;
}

/**
 * An MCP server as a toolset. One client per server config, shared by every call on this worker
 * (MCP multiplexes requests on one connection); opened on first use, closed after `idleMs` without use.
 *
 * Failures never throw into the agent loop: a server that cannot start, or dies, is an `isError` tool
 * result naming the server, and the next call starts it again. The tool list of the last good connection
 * is kept, so the names the model was offered stay valid while the server is down.
 */
export class McpToolset implements Toolset {
  readonly name: string;
  readonly description: string;
  private readonly idleMs: number;
  private readonly callTimeoutMs: number;
  private readonly startTimeoutMs: number;
  private current: Connection | undefined;
  private opening: Promise<Connection> | undefined;
  private lastTools: Tool[] = [];
  /** Whether a tool list was ever read (then `lastTools` is meaningful even while disconnected). */
  private listed = false;
  private inUse = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private starts = 0;
  private lastError: string | undefined;
  private stderrTail = '';
  private shutDown = false;

  constructor(
    readonly config: McpServerConfig,
    private readonly options: McpToolsetOptions = {},
  ) {
    this.name = config.name;
    this.description = config.description ?? (config.type === 'stdio' ? `MCP server (${config.command})` : `MCP server at ${new URL(config.url).host}`);
    this.idleMs = options.idleMs ?? defaultMcpIdleMs;
    this.callTimeoutMs = config.timeoutMs ?? options.callTimeoutMs ?? defaultMcpCallTimeoutMs;
    this.startTimeoutMs = options.startTimeoutMs ?? defaultMcpStartTimeoutMs;
  }

  /**
   * The server's tools. Never throws: when the server cannot be reached the last good list is returned
   * (empty before the first success), and calling one of those tools reports the failure to the model.
   */
  async tools(): Promise<Tool[]> {
    // Once listed, a closed connection (idle, crashed) is not reopened just to list: the last list is
    // offered and the next call restarts the server. Listing runs in modelTurn, and a slow restart there
    // would hold up a model call (and, outside its heartbeat, time it out).
    if (this.listed && !(this.current && !this.current.closed)) return this.lastTools;
    return this.use(async () => {
      let connection: Connection;
      try {
        connection = await this.connect();
      } catch {
        return this.lastTools;
      }
      connection.tools ??= this.listTools(connection);
      try {
        this.lastTools = await connection.tools;
        this.listed = true;
      } catch (error) {
        connection.tools = undefined;
        this.noteFailure(connection, error);
      }
      return this.lastTools;
    });
  }

  /** Calls one tool by its server-side name; every failure is an `isError` result naming the server. */
  async callTool(toolName: string, args: JsonObject, context: ToolContext): Promise<ToolResult> {
    return this.use(async () => {
      let connection: Connection;
      try {
        connection = await this.connect();
      } catch (error) {
        return toolError(`MCP server "${this.name}" is not available: ${describeError(error)}. It will be started again on the next call.`);
      }
      try {
        const result = await connection.client.callTool({ name: toolName, arguments: args }, undefined, {
          signal: context.abortSignal,
          timeout: this.callTimeoutMs,
          resetTimeoutOnProgress: true,
        });
        return convertCallResult(result);
      } catch (error) {
        if (context.abortSignal.aborted) return toolError(`the call to ${toolName} on MCP server "${this.name}" was cancelled`);
        if (this.noteFailure(connection, error)) {
          return toolError(
            `MCP server "${this.name}" stopped during the call to ${toolName}: ${connection.closeReason ?? describeError(error)}. ` +
              'It will be restarted on the next call; the call may or may not have taken effect.',
          );
        }
        return toolError(`MCP server "${this.name}" refused the call to ${toolName}: ${describeError(error)}`);
      }
    });
  }

  /** Connection state, for diagnostics and tests. */
  status(): McpToolsetStatus {
    const transport = this.current?.transport;
    const pid = transport instanceof StdioClientTransport ? transport.pid ?? undefined : undefined;
    return {
      connected: this.current !== undefined && !this.current.closed,
      starts: this.starts,
      ...(pid !== undefined ? { pid } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
    };
  }

  /** Whether nothing uses or opens the connection and no connection is open (a stdio server is not running). */
  idle(): boolean {
    return this.inUse === 0 && this.opening === undefined && !(this.current !== undefined && !this.current.closed);
  }

  /** Closes the connection (stops a stdio server). A later call opens a new one unless `final`. */
  async close(final = false): Promise<void> {
    if (final) this.shutDown = true;
    this.clearIdleTimer();
    const opening = this.opening;
    if (opening) await opening.catch(() => undefined);
    const connection = this.current;
    this.current = undefined;
    if (connection && !connection.closed) {
      connection.closed = true;
      connection.closeReason = 'closed by the worker';
      await connection.client.close().catch(() => undefined);
    }
  }

  // ---- connection management -------------------------------------------------------------------

  /** Runs `work` as one use of the connection: the idle timer runs only while nothing uses it. */
  private async use<T>(work: () => Promise<T>): Promise<T> {
    this.inUse += 1;
    this.clearIdleTimer();
    try {
      return await work();
    } finally {
      this.inUse -= 1;
      if (this.inUse === 0 && this.current && !this.shutDown) this.armIdleTimer();
    }
  }

  private armIdleTimer(): void {
    this.clearIdleTimer();
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.inUse === 0) void this.close();
    }, this.idleMs);
    // An idle MCP connection must not keep the worker process alive.
    this.idleTimer.unref();
  }

  private clearIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /** The open connection, opening one when there is none (concurrent callers share one attempt). */
  private async connect(): Promise<Connection> {
    if (this.shutDown) throw new Error('the worker is shutting down');
    if (this.current && !this.current.closed) return this.current;
    this.opening ??= this.openWithRetry().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  /**
   * Opens a connection; an HTTP server gets a second attempt at once, because the first request after a
   * server restart can go out on a pooled keep-alive socket that the old server closed ("fetch failed").
   */
  private async openWithRetry(): Promise<Connection> {
    try {
      return await this.open();
    } catch (error) {
      if (this.config.type !== 'streamable_http' || this.shutDown) throw error;
      return this.open();
    }
  }

  private async open(): Promise<Connection> {
    this.starts += 1;
    this.stderrTail = '';
    const transport = createMcpTransport(this.config, this.options.env ?? process.env, (text) => {
      this.stderrTail = (this.stderrTail + text).slice(-mcpStderrTailChars);
    }, this.options.launch);
    const client = new Client({ name: this.options.clientName ?? 'errand', version: '0.1.0' }, { capabilities: {} });
    const connection: Connection = { client, transport, closed: false };
    client.onclose = () => {
      connection.closed = true;
      connection.closeReason ??= this.closedMessage();
      this.lastError = connection.closeReason;
      if (this.current === connection) this.current = undefined;
    };
    // Transport errors are also seen by the pending request (or by onclose); nothing to do here but keep them quiet.
    client.onerror = () => undefined;
    try {
      await client.connect(transport, { timeout: this.startTimeoutMs });
    } catch (error) {
      connection.closed = true;
      await client.close().catch(() => undefined);
      const message = this.startFailure(error);
      this.lastError = message;
      throw new Error(message);
    }
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      connection.tools = undefined;
    });
    if (connection.closed) throw new Error(connection.closeReason ?? this.closedMessage());
    this.current = connection;
    this.lastError = undefined;
    return connection;
  }

  /**
   * Records a failed request. Returns true when the connection is gone (closed, timed out, or a transport
   * error): it is then dropped so the next call restarts the server. An error the server itself answered
   * with (unknown tool, invalid arguments) leaves the connection in place.
   */
  private noteFailure(connection: Connection, error: unknown): boolean {
    const answeredByServer = error instanceof McpError && error.code !== ErrorCode.ConnectionClosed && error.code !== ErrorCode.RequestTimeout;
    if (answeredByServer && !connection.closed) return false;
    connection.closeReason ??= connection.closed ? this.closedMessage() : describeError(error);
    this.lastError = connection.closeReason;
    if (this.current === connection) this.current = undefined;
    if (!connection.closed) {
      connection.closed = true;
      void connection.client.close().catch(() => undefined);
    }
    return true;
  }

  private closedMessage(): string {
    const stderr = this.stderrTail.trim();
    return this.config.type === 'stdio'
      ? `the server process exited${stderr ? ` (stderr: ${lastLines(stderr)})` : ''}`
      : 'the connection was closed';
  }

  private startFailure(error: unknown): string {
    const stderr = this.stderrTail.trim();
    const what = this.config.type === 'stdio' ? `could not start "${this.config.command}"` : `could not connect to ${this.config.url}`;
    return `${what}: ${describeError(error)}${stderr ? ` (stderr: ${lastLines(stderr)})` : ''}`;
  }

  private async listTools(connection: Connection): Promise<Tool[]> {
    const tools: Tool[] = [];
    const used = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < maxMcpToolListPages; page += 1) {
      const result = await connection.client.listTools(cursor ? { cursor } : {}, { timeout: this.callTimeoutMs });
      for (const tool of result.tools) {
        const specName = uniqueName(modelSafeToolName(tool.name), used);
        const serverName = tool.name;
        tools.push({
          spec: {
            name: specName,
            description: tool.description ?? tool.title ?? `${serverName} (MCP server ${this.name})`,
            inputSchema: toJsonObject(tool.inputSchema) ?? { type: 'object' },
          },
          run: (args, context) => this.callTool(serverName, args, context),
        });
      }
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }
}

/** A third-party JSON Schema as a plain JSON object (tolerant: anything else gives undefined). */
function toJsonObject(value: unknown): JsonObject | undefined {
  try {
    const json = JSON.parse(JSON.stringify(value ?? null)) as JsonValue;
    return json !== null && typeof json === 'object' && !Array.isArray(json) ? json : undefined;
  } catch {
    return undefined;
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

function lastLines(text: string): string {
  return text.split('\n').slice(-5).join(' | ');
}

import { Client, type JSONRPCMessage, type Transport, type TransportSendOptions } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createTaskSessionFromClient, type TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';
import { errandBin } from './mcp-errand-client';

/**
 * `errand mcp` (the CLI bundle, as users run it) under the MCP TypeScript SDK's second-generation client at
 * protocol revision 2026-07-28 over stdio, with the official Tasks requester (`@modelcontextprotocol/ext-tasks`).
 * The SDK's codecs refuse task results, so the package takes a raw request path from its host: here, a
 * request written to the same stdio connection with an id of its own, whose answer is taken off the stream
 * before the client sees it.
 */

const protocolVersion = '2026-07-28';
const clientInfo = { name: 'errand-stdio-tasks-test-client', version: '1.0.0' };
const clientCapabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

type RawAnswer = { result?: unknown; error?: { code: number; message: string; data?: unknown } };

/** The client's stdio transport, with a side door for raw requests (ids `raw-N`) that the client never sees. */
class RawRequestTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly pending = new Map<string, (answer: RawAnswer) => void>();
  private next = 0;

  constructor(private readonly inner: StdioClientTransport) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message) => {
      const id = 'id' in message ? message.id : undefined;
      const waiting = typeof id === 'string' && !('method' in message) ? this.pending.get(id) : undefined;
      if (waiting && typeof id === 'string') {
        this.pending.delete(id);
        waiting(message as RawAnswer);
        return;
      }
      this.onmessage?.(message);
    };
  }

  start(): Promise<void> {
    return this.inner.start();
  }
  send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  /** Sends `{method, params}` as a JSON-RPC request of its own and resolves with its answer. */
  raw(request: object): Promise<RawAnswer> {
    const id = `raw-${(this.next += 1)}`;
    const answered = new Promise<RawAnswer>((resolveAnswer) => this.pending.set(id, resolveAnswer));
    void this.inner.send({ jsonrpc: '2.0', id, ...(request as { method: string }) });
    return answered;
  }
}

/** A 2026-07-28 client of `errand mcp`, its Tasks session, and the command's stderr so far. */
export interface ModernStdioConnection {
  client: Client;
  session: TaskEnabledSession;
  stderr(): string;
  close(): Promise<void>;
}

/** Spawns `errand mcp` (with `args`) under the second-generation client, pinned to 2026-07-28, declaring the Tasks extension. */
export async function connectModernStdio(env: Record<string, string>, cwd: string, args: string[] = []): Promise<ModernStdioConnection> {
  const stdio = new StdioClientTransport({ command: process.execPath, args: [errandBin, 'mcp', ...args], env, cwd, stderr: 'pipe' });
  let stderr = '';
  stdio.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const transport = new RawRequestTransport(stdio);
  const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: protocolVersion } }, capabilities: clientCapabilities });
  await client.connect(transport);
  const rawDispatch = async (request: unknown) => {
    const answer = await transport.raw(request as object);
    if (answer.error) return { kind: 'error' as const, error: answer.error as never };
    return { kind: 'result' as const, result: answer.result as never };
  };
  const session = createTaskSessionFromClient(client as never, { endpointId: 'errand-stdio-test', rawDispatch, v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities } });
  return { client, session, stderr: () => stderr, close: async () => { await session.close(); await client.close(); } };
}

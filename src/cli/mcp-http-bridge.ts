import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isInitializeRequest, isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { devStackProbeTimeoutMs } from '../contracts/limits/api';
import type { CliIo } from './cli-io';

/** Where `errand mcp` found an API to bridge to, and the key it sends. */
export interface BridgeTarget {
  /** The API's base URL (its `/v1/mcp` is the MCP endpoint). */
  apiUrl: string;
  key: string | undefined;
  /** Where the URL came from, for messages (`ERRAND_API_URL`, the dev stack's state file). */
  foundIn: string;
  /** The MCP session to reconnect to (`--session`), sent as `Mcp-Session-Id` with the client's initialize. */
  sessionId?: string | undefined;
}

/** The JSON-RPC error code of a request the bridge could not deliver (the range MCP leaves to servers). */
const bridgeErrorCode = -32000;

/** Why a request to the API failed, in words that say what to do. */
function describeFailure(error: unknown, target: BridgeTarget): string {
  const where = `the errand API at ${target.apiUrl} (${target.foundIn})`;
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) {
    return `${where} refused the key (HTTP ${error.code}): set ERRAND_API_KEY to a key of that API (errand api-key <tenant> makes one)`;
  }
  if (error instanceof StreamableHTTPError) return `${where} answered HTTP ${error.code}: ${error.message}`;
  return `${where} did not answer: ${error instanceof Error ? (error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message) : String(error)}`;
}

/**
 * Checks that the API answers before the MCP handshake starts, so a wrong URL or a stopped stack is one
 * clear line on stderr and exit status 1, not a client that hangs or reports a broken protocol.
 */
async function probe(target: BridgeTarget): Promise<string | undefined> {
  try {
    const response = await fetch(`${target.apiUrl}/healthz`, { signal: AbortSignal.timeout(devStackProbeTimeoutMs) });
    await response.body?.cancel();
    return response.ok ? undefined : `the errand API at ${target.apiUrl} (${target.foundIn}) answered HTTP ${response.status} to /healthz`;
  } catch (error) {
    return `${describeFailure(error, target)}; start it (errand dev, errand api) or correct ERRAND_API_URL`;
  }
}

/**
 * `errand mcp` through an errand API: a bridge between the MCP client on stdio and the API's `/v1/mcp`
 * (MCP Streamable HTTP), message for message. The API holds the session (a session workflow of the key's
 * tenant), so a remote stack serves stdio clients too; the server-to-client stream of notices is opened
 * after `initialize` as an HTTP client does. A request the API does not take is answered to the client
 * as a JSON-RPC error with the reason, which also goes to stderr; a refused `initialize` ends the
 * command with status 1. Resolves with the exit status when the client closes stdin.
 */
export async function bridgeStdioToApi(target: BridgeTarget, io: CliIo): Promise<number> {
  const unreachable = await probe(target);
  if (unreachable !== undefined) {
    io.stderr(`errand mcp: ${unreachable}\n`);
    return 1;
  }
  const url = new URL(`${target.apiUrl}/v1/mcp`);
  const http = new StreamableHTTPClientTransport(url, {
    ...(target.key ? { requestInit: { headers: { authorization: `Bearer ${target.key}` } } } : {}),
    ...(target.sessionId ? { sessionId: target.sessionId } : {}),
  });
  const stdio = new StdioServerTransport();
  let exitCode = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolveFinished) => (finish = resolveFinished));
  let initializeId: string | number | undefined;
  let announced = false;

  http.onmessage = (message: JSONRPCMessage) => {
    if (initializeId !== undefined && 'id' in message && message.id === initializeId && 'result' in message) {
      // Later requests carry the negotiated version, as the SDK's own client sends it.
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === 'string') http.setProtocolVersion(version);
      if (!announced && http.sessionId) {
        announced = true;
        io.stderr(`errand mcp: session ${http.sessionId} through ${target.apiUrl} (reconnect with --session ${http.sessionId})\n`);
      }
    }
    void stdio.send(message);
  };
  // The stream of notices may close and reopen (the API ends it after its longest wait): the transport retries.
  http.onerror = () => undefined;

  stdio.onmessage = (message: JSONRPCMessage) => {
    const initializing = isInitializeRequest(message) && isJSONRPCRequest(message);
    if (initializing) initializeId = message.id;
    http.send(message).catch(async (error: unknown) => {
      const reason = describeFailure(error, target);
      io.stderr(`errand mcp: ${reason}\n`);
      if (isJSONRPCRequest(message)) await stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: bridgeErrorCode, message: `errand mcp: ${reason}` } }).catch(() => undefined);
      if (initializing) {
        exitCode = 1;
        finish();
      }
    });
  };
  stdio.onclose = () => finish();
  await stdio.start();
  await http.start();
  process.stdin.once('end', () => finish());
  await finished;
  // Closing the client does not end the session (it waits for a reconnect until its idle timeout).
  await http.close().catch(() => undefined);
  await stdio.close().catch(() => undefined);
  return exitCode;
}

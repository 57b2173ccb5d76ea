import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isInitializeRequest, isJSONRPCRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { UnsupportedProtocolVersionError } from '@modelcontextprotocol/client';
import { sessionArgument, sessionMetaKey } from '../api/mcp-stateless-server';
import { devStackProbeTimeoutMs } from '../contracts/limits/api';
import type { CliIo } from './cli-io';
import { claimsRevision, modernForwarder, modernHttpStatus } from './mcp-modern-bridge';

/** Where `errand mcp` found an API to bridge to, and the key it sends. */
export interface BridgeTarget {
  /** The API's base URL (its `/v1/mcp` is the MCP endpoint). */
  apiUrl: string;
  key: string | undefined;
  /** Where the URL came from, for messages (`ERRAND_API_URL`, the dev stack's state file). */
  foundIn: string;
  /**
   * The MCP session to reconnect to (`--session`): at 2025-11-25 sent as `Mcp-Session-Id` with the client's
   * initialize; at 2026-07-28 the session of a tool call that names none (`_meta["errand/session"]`).
   */
  sessionId?: string | undefined;
}

/** The JSON-RPC error code of a request the bridge could not deliver (the range MCP leaves to servers). */
const bridgeErrorCode = -32000;

/** Why a request to the API failed, in words that say what to do. */
function describeFailure(error: unknown, target: BridgeTarget): string {
  const where = `the errand API at ${target.apiUrl} (${target.foundIn})`;
  const status = error instanceof StreamableHTTPError ? error.code : modernHttpStatus(error);
  if (status === 401 || status === 403) {
    return `${where} refused the key (HTTP ${status}): set ERRAND_API_KEY to a key of that API (errand api-key <tenant> makes one)`;
  }
  if (status !== undefined && error instanceof Error) return `${where} answered HTTP ${status}: ${error.message}`;
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
 * command with status 1. The client's opening message chooses the protocol revision for the connection,
 * as on stdio the MCP SDK's own entry does (mcp-in-process.ts): a request claiming a revision in `_meta`
 * (2026-07-28) pins it to the stateless leg (mcp-modern-bridge.ts: no session header, no stream of
 * notices; an `initialize` later on is refused with the unsupported-version error), anything else to
 * the 2025-11-25 leg above; a `server/discover` before either is answered by the stateless leg and
 * pins nothing. Resolves with the exit status when the client closes stdin.
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
  /** The revision the client's opening message chose (undefined until it came). */
  let era: 'legacy' | 'modern' | undefined;
  const modern = modernForwarder(url, target.key);
  modern.onmessage = (message) => void stdio.send(message);

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

  const answerError = async (message: JSONRPCMessage, error: unknown) => {
    const reason = describeFailure(error, target);
    io.stderr(`errand mcp: ${reason}\n`);
    if (isJSONRPCRequest(message)) await stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: bridgeErrorCode, message: `errand mcp: ${reason}` } }).catch(() => undefined);
  };
  stdio.onmessage = (message: JSONRPCMessage) => {
    // `server/discover` is a probe: it is answered at 2026-07-28 but pins nothing (a client may still initialize).
    const probe = era === undefined && 'method' in message && message.method === 'server/discover' && claimsRevision(message);
    if (era === undefined && 'method' in message && !probe) era = claimsRevision(message) ? 'modern' : 'legacy';
    if (era === 'modern' || probe) {
      if (isInitializeRequest(message) && isJSONRPCRequest(message) && !claimsRevision(message)) {
        const refusal = new UnsupportedProtocolVersionError({ supported: [modernRevision], requested: message.params.protocolVersion });
        void stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: refusal.code, message: refusal.message, data: refusal.data } }).catch(() => undefined);
        return;
      }
      modern.send(withDefaultSession(message, target.sessionId)).catch((error: unknown) => answerError(message, error));
      return;
    }
    const initializing = isInitializeRequest(message) && isJSONRPCRequest(message);
    if (initializing) initializeId = message.id;
    http.send(message).catch(async (error: unknown) => {
      await answerError(message, error);
      if (initializing) {
        exitCode = 1;
        finish();
      }
    });
  };
  stdio.onclose = () => finish();
  await stdio.start();
  await http.start();
  await modern.start();
  process.stdin.once('end', () => finish());
  await finished;
  // Closing the client does not end the session (it waits for a reconnect until its idle timeout).
  await http.close().catch(() => undefined);
  await modern.close().catch(() => undefined);
  await stdio.close().catch(() => undefined);
  return exitCode;
}

/** The revision the stateless leg speaks. */
const modernRevision = '2026-07-28';

/** A tool call that names no session gets `--session`'s in `_meta` (as the in-process server's default session). */
function withDefaultSession(message: JSONRPCMessage, sessionId: string | undefined): JSONRPCMessage {
  if (sessionId === undefined || !isJSONRPCRequest(message) || message.method !== 'tools/call') return message;
  const params = (message.params ?? {}) as { arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };
  if (params.arguments?.[sessionArgument] !== undefined || params._meta?.[sessionMetaKey] !== undefined) return message;
  return { ...message, params: { ...params, _meta: { ...params._meta, [sessionMetaKey]: sessionId } } };
}

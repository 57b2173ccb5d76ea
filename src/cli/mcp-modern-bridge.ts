import { PROTOCOL_VERSION_META_KEY, SdkHttpError, StreamableHTTPClientTransport, UnauthorizedError, type JSONRPCMessage } from '@modelcontextprotocol/client';

/**
 * The 2026-07-28 leg of `errand mcp`'s bridge (mcp-http-bridge.ts): every request of a client that opened the
 * connection at that revision is POSTed to the API's `/v1/mcp` statelessly, as its own HTTP request (no
 * `Mcp-Session-Id`; the session is the handle the request names). The MCP SDK's second-generation HTTP client
 * transport frames it: the revision's headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) come from
 * the message, and the answer (JSON, or an event stream that carries progress before it) comes back message
 * for message, a refusal of the revision (HTTP 400 with a JSON-RPC error) as that error.
 */

/** Whether a message claims a protocol revision in `_meta` (the 2026-07-28 envelope; a 2025-era message has none). */
export function claimsRevision(message: JSONRPCMessage): boolean {
  if (!('method' in message)) return false;
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  return typeof meta?.[PROTOCOL_VERSION_META_KEY] === 'string';
}

/** The HTTP status of a failed POST of the second-generation transport, if it had one. */
export function modernHttpStatus(error: unknown): number | undefined {
  if (error instanceof UnauthorizedError) return 401;
  return error instanceof SdkHttpError ? error.status : undefined;
}

/** The stateless forwarder: `send` POSTs one message; answers arrive at `onmessage`. */
export interface ModernForwarder {
  start(): Promise<void>;
  send(message: JSONRPCMessage): Promise<void>;
  onmessage: ((message: JSONRPCMessage) => void) | undefined;
  close(): Promise<void>;
}

/**
 * A forwarder to `url` with the key. A client's `notifications/cancelled` aborts the HTTP request of the
 * request it names (on this revision a request is cancelled by ending its stream); other notifications of a
 * client have nothing to reach over stateless HTTP and are not sent.
 */
export function modernForwarder(url: URL, key: string | undefined): ModernForwarder {
  const transport = new StreamableHTTPClientTransport(url, key ? { requestInit: { headers: { authorization: `Bearer ${key}` } } } : {});
  const inFlight = new Map<string | number, AbortController>();
  const forwarder: ModernForwarder = {
    onmessage: undefined,
    start: () => transport.start(),
    async send(message) {
      if (!('method' in message) || !('id' in message)) {
        if ('method' in message && message.method === 'notifications/cancelled') {
          const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
          if (id !== undefined) inFlight.get(id)?.abort();
        }
        return;
      }
      // Kept until the answer arrives: an event stream goes on after send() resolves.
      const aborter = new AbortController();
      inFlight.set(message.id, aborter);
      try {
        await transport.send(message, { requestSignal: aborter.signal });
      } catch (error) {
        inFlight.delete(message.id);
        // A request the client cancelled is not answered (as the protocol says of a cancelled request).
        if (aborter.signal.aborted) return;
        throw error;
      }
    },
    close: () => transport.close(),
  };
  transport.onmessage = (message) => {
    if ('id' in message && message.id !== undefined && !('method' in message)) inFlight.delete(message.id);
    forwarder.onmessage?.(message);
  };
  // Errors of a POST reach the caller of send; this hook would report them twice.
  transport.onerror = () => undefined;
  return forwarder;
}

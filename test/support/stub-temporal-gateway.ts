import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP gateway in front of the dev server's HTTP API that misbehaves on cue, for the failures a busy
 * Temporal or a proxy in between causes: each request takes the next scripted behaviour (the last one
 * repeats), and every request is recorded with its headers and body.
 */

/** What the gateway does with one request. */
export type GatewayBehaviour =
  /** Passes the request to Temporal and its answer back. */
  | { kind: 'forward' }
  /** Answers with this status and body itself (a rate limit, a proxy's error page). */
  | { kind: 'answer'; status: number; body: string; contentType?: string }
  /** Passes the request to Temporal (so it lands) but never answers the client: a lost answer. */
  | { kind: 'forward-and-hang' };

/** One request the gateway received, and what Temporal answered when it was forwarded. */
export interface GatewayRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  behaviour: GatewayBehaviour['kind'];
  upstream?: { status: number; body: string };
}

/** A running gateway. */
export interface StubTemporalGateway {
  url: string;
  requests: GatewayRequest[];
  close(): Promise<void>;
}

function readBody(message: IncomingMessage): Promise<string> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.on('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    message.on('error', reject);
  });
}

function forward(upstream: URL, incoming: IncomingMessage, body: string): Promise<{ status: number; body: string; contentType: string }> {
  const headers = { ...incoming.headers, host: upstream.host };
  return new Promise((resolveAnswer, reject) => {
    const outgoing = httpRequest(new URL(incoming.url ?? '/', upstream), { method: incoming.method, headers }, (answer) => {
      readBody(answer).then((text) => resolveAnswer({ status: answer.statusCode ?? 0, body: text, contentType: String(answer.headers['content-type'] ?? 'application/json') }), reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** Starts a gateway to `upstreamUrl` (Temporal's HTTP API) on a free port of 127.0.0.1. */
export async function startStubTemporalGateway(upstreamUrl: string, behaviours: GatewayBehaviour[]): Promise<StubTemporalGateway> {
  if (behaviours.length === 0) throw new Error('startStubTemporalGateway: give at least one behaviour');
  const upstream = new URL(upstreamUrl);
  const requests: GatewayRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer((incoming, response) => {
    const behaviour = behaviours[Math.min(requests.length, behaviours.length - 1)] ?? { kind: 'forward' };
    const recorded: GatewayRequest = { method: incoming.method ?? '', path: incoming.url ?? '', headers: incoming.headers, body: '', behaviour: behaviour.kind };
    requests.push(recorded);
    void (async () => {
      recorded.body = await readBody(incoming);
      if (behaviour.kind === 'answer') {
        response.writeHead(behaviour.status, { 'content-type': behaviour.contentType ?? 'application/json' }).end(behaviour.body);
        return;
      }
      const answer = await forward(upstream, incoming, recorded.body);
      recorded.upstream = { status: answer.status, body: answer.body };
      if (behaviour.kind === 'forward-and-hang') hanging.add(response);
      else response.writeHead(answer.status, { 'content-type': answer.contentType }).end(answer.body);
    })().catch((error: unknown) => {
      response.writeHead(599, { 'content-type': 'text/plain' }).end(`stub gateway failed: ${String(error)}`);
    });
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
    },
  };
}

import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import type { ApiEnv } from './api-env';

/**
 * Reads a request's body once, at most `maxBytes` of it, and keeps the text for the route (readJsonBody in
 * route-spec.ts). Under Node (`@hono/node-server`, `errand api`) it reads the Node request directly: going
 * through the web `Request` its adapter would build costs a `ReadableStream` per request, about half a
 * millisecond of a start that should take little more than Temporal's own (bench figure
 * api-start-latency-p50). Elsewhere (the Lambda adapter) it reads `c.req.text()`. A declared length over
 * the limit is refused before anything is read; an undeclared one (chunked) is cut off at the limit under
 * Node, and refused once read elsewhere (where the platform bounds the body: API Gateway, 10 MB).
 */
export function bufferRequestBody(maxBytes: number, tooLarge: (c: Context<ApiEnv>) => Response): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > maxBytes) return tooLarge(c);
    const incoming = nodeRequestOf(c);
    const text = incoming ? await readNodeBody(incoming, maxBytes) : await c.req.text();
    if (text === undefined || Buffer.byteLength(text) > maxBytes) return tooLarge(c);
    c.set('bodyText', text);
    return next();
  };
}

/** The Node request under `@hono/node-server` (`errand api`); undefined elsewhere (the Lambda adapter). */
export function nodeRequestOf(c: Context<ApiEnv>): IncomingMessage | undefined {
  const env: unknown = c.env;
  if (typeof env !== 'object' || env === null || !('incoming' in env)) return undefined;
  const incoming = (env as { incoming: unknown }).incoming;
  return typeof incoming === 'object' && incoming !== null && 'on' in incoming && 'readableEnded' in incoming ? (incoming as IncomingMessage) : undefined;
}

/** The body as text, or undefined once it grows over `maxBytes` (the rest is left unread). */
function readNodeBody(incoming: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolveBody, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        incoming.off('data', onData);
        incoming.pause();
        resolveBody(undefined);
        return;
      }
      chunks.push(chunk);
    };
    incoming.on('data', onData);
    incoming.once('end', () => resolveBody(Buffer.concat(chunks).toString('utf8')));
    incoming.once('error', reject);
  });
}

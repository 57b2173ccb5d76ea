import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PlainHttpAnswerTooLarge, plainHttpRequest, PlainHttpTimeout } from '../../src/http/plain-http';

/**
 * The plain HTTP client of the quick paths (the CLI's peek, the API's HTTP starts) against real local
 * servers: its time limit is one deadline for the whole exchange, so a server that trickles its answer is
 * cut off too, and the answer it keeps is bounded.
 */

const servers: Server[] = [];
const open = new Set<ServerResponse>();
afterEach(async () => {
  for (const response of open) response.destroy();
  open.clear();
  await Promise.all(servers.splice(0).map((server) => new Promise<void>((resolveClose) => server.close(() => resolveClose()))));
});

async function serve(handler: (response: ServerResponse) => void): Promise<string> {
  const server = createServer((_request, response) => {
    open.add(response);
    handler(response);
  });
  servers.push(server);
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('plainHttpRequest', () => {
  it('reads a whole answer', async () => {
    const url = await serve((response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('all of it'));
    expect(await plainHttpRequest(url, { method: 'GET', headers: {}, timeoutMs: 2_000 })).toEqual({ status: 200, text: 'all of it' });
  });

  it('cuts off a server that keeps sending a byte now and then (the deadline is for the whole exchange, not idle time)', async () => {
    const url = await serve((response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => response.write('.'), 100);
      response.on('close', () => clearInterval(timer));
    });
    await expect(plainHttpRequest(url, { method: 'GET', headers: {}, timeoutMs: 800 })).rejects.toBeInstanceOf(PlainHttpTimeout);
  });

  it('refuses an answer larger than its bound instead of keeping it in memory', async () => {
    const url = await serve((response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('x'.repeat(64 * 1024));
    });
    const error = await plainHttpRequest(url, { method: 'GET', headers: {}, timeoutMs: 2_000, maxAnswerBytes: 1_024 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PlainHttpAnswerTooLarge);
    expect(String(error)).toContain('larger than 1024 bytes');
  });
});

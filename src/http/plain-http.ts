import type * as NodeHttp from 'node:http';
import type { Agent, IncomingMessage, RequestOptions } from 'node:http';
import type * as NodeHttps from 'node:https';
import { plainHttpMaxAnswerBytes } from '../contracts/limits/api';

/**
 * One HTTP request with Node's own http/https modules, for the quick paths: the CLI's `errand peek` and the
 * API's starts through Temporal's HTTP API. Why not `fetch`: Node compiles its bundled undici on the first
 * `fetch` of a process, about 25 ms of a CLI start that should answer at once (bench figure cli-peek).
 */

export interface PlainHttpAnswer {
  status: number;
  text: string;
}

/** Thrown when the whole exchange (connect, send, the full answer) did not finish within `timeoutMs`. */
export class PlainHttpTimeout extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'TimeoutError';
  }
}

/** Thrown when the answer's body is larger than the request allows. */
export class PlainHttpAnswerTooLarge extends Error {
  constructor(maxBytes: number) {
    super(`the answer is larger than ${maxBytes} bytes`);
    this.name = 'PlainHttpAnswerTooLarge';
  }
}

// Loaded on first use (a CLI command that never calls out does not pay for them), then kept: a dynamic
// import() per request costs a trip through the module loader (and through its hooks, where a loader such
// as tsx is registered: about a millisecond per request, bench figure api-start-latency).
let httpModule: Promise<typeof NodeHttp> | undefined;
let httpsModule: Promise<typeof NodeHttps> | undefined;

/**
 * Sends one request and reads the whole answer. `timeoutMs` bounds the whole exchange, not the idle time
 * between bytes (a server trickling its answer is cut off too); `maxAnswerBytes` (default
 * {@link plainHttpMaxAnswerBytes}) bounds the body kept in memory.
 */
export async function plainHttpRequest(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; timeoutMs?: number; agent?: Agent; maxAnswerBytes?: number },
): Promise<PlainHttpAnswer> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`unsupported protocol ${target.protocol} (http: or https:)`);
  const transport = target.protocol === 'https:' ? await (httpsModule ??= import('node:https')) : await (httpModule ??= import('node:http'));
  const headers: Record<string, string | number> = { ...init.headers };
  if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
  const options: RequestOptions = { method: init.method, headers, ...(init.agent ? { agent: init.agent } : {}) };
  const maxBytes = init.maxAnswerBytes ?? plainHttpMaxAnswerBytes;
  return new Promise<PlainHttpAnswer>((resolveAnswer, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const settle = <T>(finish: (value: T) => void) => (value: T) => {
      if (timer) clearTimeout(timer);
      finish(value);
    };
    const succeed = settle(resolveAnswer);
    const fail = settle(reject);
    const request = transport.request(target, options, (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        // Destroying the request ends the response too; its error reaches `fail` once.
        if (received > maxBytes) request.destroy(new PlainHttpAnswerTooLarge(maxBytes));
        else chunks.push(chunk);
      });
      response.on('error', fail);
      response.on('end', () => succeed({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    if (init.timeoutMs !== undefined) {
      const timeoutMs = init.timeoutMs;
      // One deadline for the whole exchange: a socket idle timeout would let a server that trickles a byte
      // now and then hold the request forever.
      timer = setTimeout(() => request.destroy(new PlainHttpTimeout(timeoutMs)), timeoutMs);
    }
    request.on('error', fail);
    request.end(init.body);
  });
}

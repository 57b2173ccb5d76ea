import type * as NodeHttp from 'node:http';
import type { Agent, IncomingMessage, RequestOptions } from 'node:http';
import type * as NodeHttps from 'node:https';

/**
 * One HTTP request with Node's own http/https modules, for the CLI's quick paths (`errand peek` through
 * Temporal's HTTP API). Why not `fetch`: Node compiles its bundled undici on the first `fetch` of a
 * process, about 25 ms of a CLI start that should answer at once (bench figure cli-peek).
 */

export interface PlainHttpAnswer {
  status: number;
  text: string;
}

/** Thrown when no answer came within `timeoutMs`. */
export class PlainHttpTimeout extends Error {
  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'TimeoutError';
  }
}

// Loaded on first use (a CLI command that never calls out does not pay for them), then kept: a dynamic
// import() per request costs a trip through the module loader (and through its hooks, where a loader such
// as tsx is registered: about a millisecond per request, bench figure api-start-latency).
let httpModule: Promise<typeof NodeHttp> | undefined;
let httpsModule: Promise<typeof NodeHttps> | undefined;

export async function plainHttpRequest(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; timeoutMs?: number; agent?: Agent },
): Promise<PlainHttpAnswer> {
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`unsupported protocol ${target.protocol} (http: or https:)`);
  const transport = target.protocol === 'https:' ? await (httpsModule ??= import('node:https')) : await (httpModule ??= import('node:http'));
  const headers: Record<string, string | number> = { ...init.headers };
  if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
  const options: RequestOptions = { method: init.method, headers, ...(init.agent ? { agent: init.agent } : {}) };
  return new Promise<PlainHttpAnswer>((resolveAnswer, reject) => {
    const request = transport.request(target, options, (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => resolveAnswer({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    if (init.timeoutMs !== undefined) {
      const timeoutMs = init.timeoutMs;
      request.setTimeout(timeoutMs, () => request.destroy(new PlainHttpTimeout(timeoutMs)));
    }
    request.on('error', reject);
    request.end(init.body);
  });
}

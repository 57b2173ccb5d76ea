import type { TemporalConnectOptions } from './temporal-connection';

/**
 * The address of Temporal's HTTP API (the frontend's JSON gateway: `temporal server start-dev --http-port`,
 * or a cluster's `frontend.httpPort`), set with `ERRAND_TEMPORAL_HTTP_URL` or `temporal.httpUrl` in the
 * config file. With it, `errand peek` reads a delegation with two plain HTTP requests instead of loading the
 * Temporal client (its protobuf definitions and gRPC alone take most of a second to load), and the API
 * starts delegations and sessions with one plain HTTP request instead of a gRPC call; without it, both use
 * the gRPC client like every other command. Decisions 0013 and 0019.
 */

/** Thrown for a bad HTTP address; the message names the setting. */
export class TemporalHttpUrlError extends Error {
  readonly errandError = 'TemporalHttpUrlError';
  constructor(message: string) {
    super(message);
    this.name = 'TemporalHttpUrlError';
  }
}

/**
 * Validates the HTTP address against the gRPC connection it stands beside: credentials go only over
 * https, and what fetch cannot present here (an mTLS client certificate, a private CA) is refused rather
 * than failing on the first peek. Returns the URL without a trailing slash, or undefined when not set.
 */
export function temporalHttpUrl(env: NodeJS.ProcessEnv, fileValue: string | undefined, connection: TemporalConnectOptions): string | undefined {
  const fromEnv = env.ERRAND_TEMPORAL_HTTP_URL?.trim();
  const setting = fromEnv ? 'ERRAND_TEMPORAL_HTTP_URL' : 'temporal.httpUrl in ERRAND_CONFIG';
  const value = fromEnv || fileValue?.trim();
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TemporalHttpUrlError(`${setting}="${value}" is not a URL: use the address of Temporal's HTTP API, e.g. "http://127.0.0.1:7243"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TemporalHttpUrlError(`${setting}="${value}" must be an http:// or https:// URL`);
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new TemporalHttpUrlError(`${setting}="${value}" must have no query, fragment or credentials: only scheme, host, port and an optional path prefix`);
  }
  const tls = typeof connection.tls === 'object' ? connection.tls : undefined;
  if (tls?.clientCertPair || tls?.serverRootCACertificate) {
    throw new TemporalHttpUrlError(
      `${setting} is set, but the Temporal connection uses ${tls.clientCertPair ? 'an mTLS client certificate' : 'a private CA certificate'}, which the HTTP client cannot present: unset ${setting} (peek and the API's starts then use the gRPC client)`,
    );
  }
  if (connection.apiKey !== undefined && url.protocol !== 'https:') {
    throw new TemporalHttpUrlError(`${setting}="${value}" is plain http, but a Temporal API key is configured: credentials are only ever sent over TLS; use https://`);
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * Headers of every request to Temporal's HTTP API: the connection's gRPC metadata and its API key as a bearer
 * token. The HTTP API (grpc-gateway in Temporal's frontend) turns only `Grpc-Metadata-<key>` headers,
 * `Authorization` and a few fixed ones into gRPC metadata; a plain header of another name is dropped, so
 * each metadata entry is sent under that prefix and arrives as the same key the gRPC client sends.
 */
export function temporalHttpHeaders(connection: TemporalConnectOptions): Record<string, string> {
  const metadata = Object.fromEntries(Object.entries(connection.metadata ?? {}).map(([key, value]) => [`grpc-metadata-${key}`, value]));
  return { ...metadata, ...(connection.apiKey === undefined ? {} : { authorization: `Bearer ${connection.apiKey}` }) };
}

/**
 * The gRPC status code and message of an error answer of Temporal's HTTP API (google.rpc.Status as JSON),
 * or undefined when the text is not one (a proxy's error page, a wrong port).
 */
export function temporalHttpStatus(text: string): { code: number; message: string } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null || !('code' in body) || typeof body.code !== 'number') return undefined;
  return { code: body.code, message: 'message' in body && typeof body.message === 'string' ? body.message : `code ${body.code}` };
}

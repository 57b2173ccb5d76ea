import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ApiGatewayV2Event } from '../../src/api/lambda';

/**
 * API Gateway HTTP API (payload format 2.0) events for a request, built from the recorded shapes in
 * test/fixtures/api-gateway: what API Gateway hands the Lambda for a GET and for a POST.
 */

const eventSchema = z.looseObject({
  version: z.literal('2.0'),
  routeKey: z.string(),
  rawPath: z.string(),
  rawQueryString: z.string(),
  headers: z.record(z.string(), z.string()),
  requestContext: z.looseObject({ http: z.looseObject({ method: z.string(), path: z.string() }) }),
  isBase64Encoded: z.boolean(),
  body: z.string().optional(),
});

/** A recorded event of test/fixtures/api-gateway, as API Gateway sent it. */
export function recordedEvent(name: string): ApiGatewayV2Event {
  const parsed = eventSchema.parse(JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'api-gateway', name), 'utf8')));
  return {
    ...parsed,
    body: parsed.body ?? null,
    requestContext: { ...JSON.parse(JSON.stringify(parsed.requestContext)), http: { ...parsed.requestContext.http } },
  };
}

/** What a request is made of. */
export interface GatewayRequestOptions {
  /** Bearer key; `null` for none. */
  key: string | null;
  body?: string;
  base64?: boolean;
  headers?: Record<string, string>;
}

/** The event API Gateway sends for `method pathAndQuery`. */
export function gatewayEvent(method: string, pathAndQuery: string, options: GatewayRequestOptions): ApiGatewayV2Event {
  const base = recordedEvent(method === 'GET' ? 'http-api-v2-get.json' : 'http-api-v2-post.json');
  const [path = '', query = ''] = pathAndQuery.split('?');
  const headers: Record<string, string | undefined> = { ...base.headers, ...options.headers };
  if (options.key !== null) headers.authorization = `Bearer ${options.key}`;
  const body = options.body === undefined ? null : options.base64 ? Buffer.from(options.body).toString('base64') : options.body;
  headers['content-length'] = String(options.body === undefined ? 0 : Buffer.byteLength(options.body));
  return {
    ...base,
    rawPath: path,
    rawQueryString: query,
    headers,
    queryStringParameters: Object.fromEntries(new URLSearchParams(query)),
    requestContext: { ...base.requestContext, http: { ...base.requestContext.http, method, path } },
    body,
    isBase64Encoded: options.base64 === true,
  };
}

import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { healthResponseSchema } from '../contracts/api';
import { rateLimitedRetryAfterSeconds } from '../contracts/limits/api';
import { GrpcCode, grpcStatusOf } from '../temporal/grpc-status';
import { TemporalUnreachableError } from '../temporal/temporal-unreachable';
import type { ApiDependencies } from './api-dependencies';
import type { ApiEnv } from './api-env';
import { authenticate } from './auth';
import { apiVersion, buildOpenApiDocument } from './openapi-document';
import { ApiProblem, isApiProblem, ProblemKind, problemResponse } from './problem';
import { bufferRequestBody, nodeRequestOf } from './request-body';
import { mountRoute, sendJson, type RouteSpec } from './route-spec';
import { apiRoutes, healthRoute, openApiRoute } from './route-table';
import { mountCatalogRoutes } from './routes/catalog-routes';
import { createLogger } from '../observability/json-logger';
import { mountDelegationRoutes } from './routes/delegation-routes';
import { mountMcpRoutes } from './routes/mcp-routes';
import { mountSessionRoutes } from './routes/session-routes';
import { mountWorkflowRoutes } from './routes/workflow-routes';
import { requestSpan } from './request-span';

/**
 * The errand HTTP API: one Hono app for both entry points (Node server, AWS Lambda). Order of checks:
 * authentication (so an unauthenticated caller learns nothing, not even which routes exist), body size,
 * then each route's schemas.
 */

/** True when the error means Temporal could not be reached (a 503, not a 500). */
export function isTemporalUnavailable(error: unknown): boolean {
  if (error instanceof TemporalUnreachableError) return true;
  const code = grpcStatusOf(error)?.code;
  if (code === GrpcCode.unavailable || code === GrpcCode.deadlineExceeded) return true;
  // The SDK's ServiceError (matched by name: this module loads no SDK) of a channel that never connected.
  return error instanceof Error && error.name === 'ServiceError' && /failed to connect/i.test(error.message);
}

/** True when Temporal refused for its rate limits (RESOURCE_EXHAUSTED, after the client's own retries): a 429. */
export function isTemporalRateLimited(error: unknown): boolean {
  return grpcStatusOf(error)?.code === GrpcCode.resourceExhausted;
}

/**
 * The `Allow` value of a request path: the methods its routes take (GET brings HEAD, which Hono answers
 * with the GET handler), or undefined when no route has that path.
 */
function methodsByPath(routes: readonly RouteSpec[]): (path: string) => string | undefined {
  const patterns = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  for (const route of routes) {
    // A `{param}` is one path segment; everything else is literal (escaped).
    const source = route.path.split(/(\{[A-Za-z0-9_]+\})/).map((part) => (/^\{.*\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('');
    const entry = patterns.get(route.path) ?? { pattern: new RegExp(`^${source}$`), methods: new Set<string>() };
    entry.methods.add(route.method.toUpperCase());
    if (route.method === 'get') entry.methods.add('HEAD');
    patterns.set(route.path, entry);
  }
  return (path) => {
    for (const { pattern, methods } of patterns.values()) if (pattern.test(path)) return [...methods].join(', ');
    return undefined;
  };
}

/**
 * Builds the API app. `operatorFacing` is the CLI's in-process use, where whoever reads the answer runs
 * Temporal too: an unreachable Temporal is answered with its address and the settings that name it, and
 * not logged as well (the CLI prints the answer). Over HTTP a client sees only that the service is down.
 */
export function createApp(deps: ApiDependencies, options: { requestLog?: boolean; operatorFacing?: boolean } = {}): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const log = createLogger('api');

  // First: the request's span is active for everything after it, the request log line included.
  app.use('*', requestSpan());

  // One structured line per request: method, route, status, time, tenant, the workflow it touched and, on
  // /v1/mcp, the MCP revision it spoke.
  // Other headers (API keys) and bodies are never logged. The CLI's in-process use turns it off. Under Node
  // (`errand api`) the line is written once the answer is on its way, not before (bench figure
  // api-start-latency); in a Lambda at once, as the function may be frozen when it has answered.
  if (options.requestLog ?? true) app.use('*', async (c, next) => {
    const started = Date.now();
    await next();
    const path = c.req.path;
    const id = /^\/v1\/(?:delegations|sessions|approvals)\/([^/]+)/.exec(path)?.[1];
    const tenant = c.get('tenant');
    // Which MCP revision a request of /v1/mcp spoke (the header its client sends with each request after the first).
    const mcpProtocolVersion = path === '/v1/mcp' ? c.req.header('mcp-protocol-version') : undefined;
    const entry = {
      method: c.req.method,
      path,
      status: c.res.status,
      durationMs: Date.now() - started,
      ...(tenant ? { tenant } : {}),
      ...(id ? { workflowId: decodeURIComponent(id) } : {}),
      ...(mcpProtocolVersion ? { mcpProtocolVersion: mcpProtocolVersion.slice(0, 32) } : {}),
    };
    if (nodeRequestOf(c)) setImmediate(() => log.info('request', entry));
    else log.info('request', entry);
  });
  app.use('/v1/*', authenticate(deps.api.auth));
  app.use(
    '/v1/*',
    bufferRequestBody(deps.api.maxBodyBytes, (c) =>
      problemResponse(
        c,
        new ApiProblem(413, ProblemKind.bodyTooLarge, 'The request body is too large', {
          detail: `the body is over ${deps.api.maxBodyBytes} bytes (ERRAND_API_MAX_BODY_BYTES); put large material in a source or a file in the working directory`,
          errors: [{ in: 'body', field: '', message: `larger than ${deps.api.maxBodyBytes} bytes` }],
        }),
      ),
    ),
  );

  mountDelegationRoutes(app, deps);
  mountSessionRoutes(app, deps);
  mountWorkflowRoutes(app, deps);
  mountMcpRoutes(app, deps);
  mountCatalogRoutes(app, deps);

  mountRoute(app, healthRoute, async ({ c }) => sendJson(c, healthResponseSchema, 200, { ok: true, version: apiVersion }));
  const document = buildOpenApiDocument(apiRoutes);
  mountRoute(app, openApiRoute, async ({ c }) => c.json(document, 200));

  const allowedMethods = methodsByPath(apiRoutes);
  app.notFound((c) => {
    // A path of the API asked with a method it does not take: 405 with the methods it does (RFC 9110).
    const allow = allowedMethods(c.req.path);
    if (allow) {
      return problemResponse(
        c,
        new ApiProblem(405, ProblemKind.methodNotAllowed, 'Method not allowed', { detail: `${c.req.path} does not take ${c.req.method}; it takes ${allow}`, headers: { allow } }),
      );
    }
    return problemResponse(c, new ApiProblem(404, ProblemKind.notFound, 'No such route', { detail: `${c.req.method} ${c.req.path} is not a route of this API; see /openapi.json` }));
  });

  app.onError((error, c) => {
    if (isApiProblem(error)) return problemResponse(c, error);
    if (error instanceof HTTPException && error.status < 500) {
      return problemResponse(c, new ApiProblem(error.status, ProblemKind.invalidRequest, 'The request is not valid', { detail: error.message }));
    }
    // Faults go through the redacting JSON logger (never a raw stack on stderr: a stack can quote a key),
    // and the client learns nothing about the server (no path, no stack).
    if (isTemporalRateLimited(error)) {
      log.warn('Temporal rate limited', { method: c.req.method, path: c.req.path, error });
      return problemResponse(
        c,
        new ApiProblem(429, ProblemKind.rateLimited, 'Temporal is over its rate limit', {
          detail: `the workflow service refused the call for its rate limits (RESOURCE_EXHAUSTED), also after retries; retry after ${rateLimitedRetryAfterSeconds} s`,
          headers: { 'retry-after': String(rateLimitedRetryAfterSeconds) },
        }),
      );
    }
    if (isTemporalUnavailable(error)) {
      const toOperator = options.operatorFacing === true && error instanceof TemporalUnreachableError;
      if (!toOperator) log.warn('Temporal unavailable', { method: c.req.method, path: c.req.path, error });
      const detail = toOperator ? error.message : 'the workflow service cannot be reached; retry later';
      return problemResponse(c, new ApiProblem(503, ProblemKind.unavailable, 'Temporal is unavailable', { detail, headers: { 'retry-after': '5' } }));
    }
    log.error('request failed', { method: c.req.method, path: c.req.path, error });
    return problemResponse(c, new ApiProblem(500, ProblemKind.internal, 'Internal server error', { detail: 'the server failed to answer; the failure was logged' }));
  });

  return app;
}

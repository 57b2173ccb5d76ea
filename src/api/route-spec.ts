import type { Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import type { ApiEnv } from './api-env';
import { ApiProblem, invalidRequest, ProblemKind } from './problem';

/**
 * One route's contract: method, path, parameters, body and answers, as zod schemas. The app mounts routes
 * from these specs (validating every part before the handler runs) and the OpenAPI document is generated
 * from the same specs, so documentation and behaviour cannot drift.
 */

/** HTTP methods the API uses. */
export type HttpMethod = 'get' | 'post' | 'delete';

/** One documented answer. */
export interface ResponseSpec {
  description: string;
  /** Body schema; omitted for problem answers (they use the shared problem schema). */
  schema?: z.ZodType;
  /** Media type of the body when it is not JSON (e.g. `text/event-stream`). */
  contentType?: string;
  /** An answer without a body (e.g. 204). */
  empty?: true;
  /** A problem answer that the MCP transport may give instead as a JSON-RPC error (`application/json`). */
  orJsonRpcError?: true;
  /** For `text/event-stream`: the events of the stream by name, each with the JSON of its `data:`. */
  events?: Record<string, { data: z.ZodType; description: string }>;
}

/** A documented request header. */
export interface HeaderSpec {
  schema: z.ZodType<string | undefined, string | undefined>;
  description: string;
}

/** The contract of one route. */
export interface RouteSpec<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType> {
  method: HttpMethod;
  /** OpenAPI form: `/v1/delegations/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** False for the public routes (`/healthz`, `/openapi.json`). */
  authenticated: boolean;
  params: P;
  query: Q;
  /** JSON body, if the route takes one. An optional body that is absent is parsed as `{}`. */
  body?: { schema: B; required: boolean; description: string };
  headers?: Record<string, HeaderSpec>;
  /** Answers by status; problem answers (4xx/5xx) have no schema. */
  responses: Record<number, ResponseSpec>;
}

/** Declares a route spec (identity; keeps the schema types for the handler). */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType = z.ZodUndefined>(spec: RouteSpec<P, Q, B>): RouteSpec<P, Q, B> {
  return spec;
}

/** What a handler receives: every request part, already validated. */
export interface RouteInput<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
  headers: Record<string, string | undefined>;
  tenant: string;
  c: Context<ApiEnv>;
}

/** A route handler. */
export type RouteHandler<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = (input: RouteInput<P, Q, B>) => Promise<Response>;

/** Hono's path form of an OpenAPI path: `{id}` → `:id`. */
export function honoPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

function objectKeys(schema: z.ZodType): string[] {
  const shape: unknown = 'shape' in schema ? schema.shape : undefined;
  return typeof shape === 'object' && shape !== null ? Object.keys(shape) : [];
}

function parsePart<S extends z.ZodType>(schema: S, value: unknown, location: 'path' | 'query' | 'body'): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidRequest(parsed.error, location, objectKeys(schema));
  return parsed.data;
}

async function readJsonBody(c: Context<ApiEnv>, required: boolean): Promise<unknown> {
  const contentType = c.req.header('content-type');
  const text = c.get('bodyText') ?? (await c.req.text());
  // Only a truly empty body is an absent one; whitespace alone is not JSON (below).
  if (text === '') {
    if (required) {
      throw new ApiProblem(400, ProblemKind.invalidRequest, 'The request is not valid', {
        detail: 'a JSON request body is required',
        errors: [{ in: 'body', field: '', message: 'a JSON request body is required' }],
      });
    }
    return {};
  }
  // A body of another media type is refused rather than guessed at; a missing Content-Type is read as JSON.
  if (contentType !== undefined && !/^application\/([a-z0-9.+-]*\+)?json\b/i.test(contentType.trim())) {
    throw new ApiProblem(415, ProblemKind.unsupportedMediaType, 'Unsupported media type', {
      detail: `Content-Type "${contentType}" is not accepted: send application/json`,
      errors: [{ in: 'header', field: 'Content-Type', message: 'expected application/json' }],
    });
  }
  try {
    const value: unknown = JSON.parse(text);
    return value;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ApiProblem(400, ProblemKind.malformedJson, 'The request body is not valid JSON', {
      detail: message,
      errors: [{ in: 'body', field: '', message: `not valid JSON: ${message}` }],
    });
  }
}

/** Mounts a route on the app: validates path, query, headers and body with the spec's schemas, then calls the handler. */
export function mountRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(app: Hono<ApiEnv>, spec: RouteSpec<P, Q, B>, handler: RouteHandler<P, Q, B>): void {
  app.on(spec.method.toUpperCase(), honoPath(spec.path), async (c) => {
    const params = parsePart(spec.params, c.req.param(), 'path');
    const query = parsePart(spec.query, c.req.query(), 'query');
    const headers: Record<string, string | undefined> = {};
    for (const [name, header] of Object.entries(spec.headers ?? {})) {
      const parsed = header.schema.safeParse(c.req.header(name));
      if (!parsed.success) {
        const message = parsed.error.issues[0]?.message ?? 'invalid';
        throw new ApiProblem(400, ProblemKind.invalidRequest, 'The request is not valid', {
          detail: `header ${name}: ${message}`,
          errors: [{ in: 'header', field: name, message }],
        });
      }
      headers[name] = parsed.data;
    }
    let body: unknown;
    if (spec.body) body = parsePart(spec.body.schema, await readJsonBody(c, spec.body.required), 'body');
    // Routes without a body spec get `undefined`, which is what their (default) ZodUndefined body type says.
    const tenant = spec.authenticated ? c.get('tenant') : '';
    // Defence in depth: an authenticated route must never run without the tenant the auth middleware sets.
    if (spec.authenticated && !tenant) throw new Error(`route ${spec.operationId} ran without an authenticated tenant`);
    return handler({ params, query, body: body as z.output<B>, headers, tenant, c });
  });
}

/** Sends a JSON answer whose type is checked against the route's response schema. */
export function sendJson<S extends z.ZodType>(c: Context<ApiEnv>, _schema: S, status: ContentfulStatusCode, value: z.output<S>): Response {
  return c.json(value, status);
}

import type { Hono } from 'hono';
import type { z } from 'zod';
import { problemSchema, type Problem } from '../contracts/api';
import type { ApiEnv } from '../api/api-env';

/**
 * How the CLI reaches the API: over HTTP (`ERRAND_API_URL` + `ERRAND_API_KEY`), or in process — the same
 * Hono app, talking straight to Temporal — when no URL is set. Either way every command goes through the
 * API's validation and answers, so the two modes behave the same.
 */

/** An answer of the API. */
export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** Sends requests to the API. */
export interface ApiTransport {
  /** Where requests go, for messages ("http://…" or "in-process (Temporal at …)"). */
  describe: string;
  request(method: 'GET' | 'POST', path: string, options?: { body?: unknown; headers?: Record<string, string> }): Promise<ApiAnswer>;
}

/** An error answer of the API, with its problem document. */
export class ApiRequestError extends Error {
  readonly errandError = 'ApiRequestError';
  readonly status: number;
  readonly problem: Problem | undefined;
  constructor(status: number, problem: Problem | undefined, fallback: string) {
    super(problem ? `${problem.title}${problem.detail ? `: ${problem.detail}` : ''}` : fallback);
    this.name = 'ApiRequestError';
    this.status = status;
    this.problem = problem;
  }
}

async function readAnswer(response: Response): Promise<ApiAnswer> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    // Not JSON (a proxy's error page): keep the text for the message.
  }
  return { status: response.status, body };
}

function requestInit(method: string, options: { body?: unknown; headers?: Record<string, string> }, key: string | undefined): RequestInit {
  const headers = new Headers(options.headers);
  if (key) headers.set('authorization', `Bearer ${key}`);
  if (options.body !== undefined) headers.set('content-type', 'application/json');
  return { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) };
}

/** Talks to an API server over HTTP. `foundIn` says where the URL came from (default `ERRAND_API_URL`), for messages. */
export function httpTransport(baseUrl: string, key: string | undefined, foundIn = 'ERRAND_API_URL'): ApiTransport {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    describe: base,
    async request(method, path, options = {}) {
      let response: Response;
      try {
        response = await fetch(`${base}${path}`, requestInit(method, options, key));
      } catch (error) {
        throw new Error(`cannot reach the errand API at ${base} (${foundIn}): ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`);
      }
      return readAnswer(response);
    },
  };
}

/** Calls the app in this process (no server; the app talks to Temporal directly). */
export function inProcessTransport(app: Hono<ApiEnv>, describe: string): ApiTransport {
  return {
    describe,
    async request(method, path, options = {}) {
      return readAnswer(await app.request(path, requestInit(method, options, undefined)));
    },
  };
}

/**
 * Sends a request and parses a success answer with `schema` (answers are external data too). An error
 * answer becomes an {@link ApiRequestError} carrying the problem document.
 */
export async function call<S extends z.ZodType>(
  transport: ApiTransport,
  method: 'GET' | 'POST',
  path: string,
  schema: S,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: z.output<S> }> {
  const answer = await transport.request(method, path, options);
  if (answer.status >= 400) {
    const problem = problemSchema.safeParse(answer.body);
    throw new ApiRequestError(answer.status, problem.success ? problem.data : undefined, `the API answered ${answer.status}: ${typeof answer.body === 'string' ? answer.body.slice(0, 300) : JSON.stringify(answer.body)}`);
  }
  const parsed = schema.safeParse(answer.body);
  if (!parsed.success) {
    throw new Error(`unexpected answer from ${transport.describe} ${method} ${path} (${answer.status}): ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
  }
  return { status: answer.status, body: parsed.data };
}

/** Whether `error` is an {@link ApiRequestError}, by marker (works across module copies). */
export function isApiRequestError(error: unknown): error is ApiRequestError {
  return typeof error === 'object' && error !== null && 'errandError' in error && error.errandError === 'ApiRequestError';
}

/**
 * Human lines for an API error: title and detail, each field problem (with its code, when the planner gave
 * one, so a script can tell refusals apart), suggestions.
 */
export function describeApiError(error: ApiRequestError): string {
  const lines = [error.message];
  for (const problem of error.problem?.errors ?? []) {
    const where = `${problem.field ? `${problem.in} ${problem.field}` : problem.in}${problem.code ? ` [${problem.code}]` : ''}`;
    // A problem the detail already says is listed only for its code.
    if (!error.message.includes(problem.message)) lines.push(`  - ${where}: ${problem.message}`);
    else if (problem.code) lines.push(`  - ${where}`);
  }
  if (error.problem?.suggestions && error.problem.suggestions.length > 0) lines.push(`  did you mean: ${error.problem.suggestions.join(', ')}?`);
  return lines.join('\n');
}

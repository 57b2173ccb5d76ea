import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import type { ErrandConfig } from '../settings/config';
import type { FieldProblem, Problem, problemLocations } from '../contracts/api';
import { configureProvidersHint } from '../domain/model-precedence';

/**
 * Error answers of the API as RFC 9457 problem documents (`application/problem+json`). A handler throws
 * an {@link ApiProblem}; the app's error handler turns it into the response, so every 4xx has the same
 * shape and nothing but a real fault becomes a 5xx.
 */

/** Media type of every error answer. */
export const problemContentType = 'application/problem+json';

/** Kinds of problem, as the last part of the `type` URN. */
export const ProblemKind = {
  invalidRequest: 'invalid-request',
  malformedJson: 'malformed-json',
  unsupportedMediaType: 'unsupported-media-type',
  bodyTooLarge: 'body-too-large',
  unauthorized: 'unauthorized',
  notFound: 'not-found',
  sourceNotFound: 'source-not-found',
  invalidDelegation: 'invalid-delegation',
  limitExceeded: 'limit-exceeded',
  /** A tenant holds as many event streams as the server allows (`ERRAND_API_MAX_EVENT_STREAMS`): 429. */
  tooManyEventStreams: 'too-many-event-streams',
  /** A tenant has as many MCP sessions running as the server allows (`ERRAND_API_MAX_MCP_SESSIONS`): 429. */
  tooManyMcpSessions: 'too-many-mcp-sessions',
  /** The tenant's model calls today reached the operator's daily cost cap (`ERRAND_TENANT_DAILY_COST_USD`): 429. */
  dailyCostCap: 'daily-cost-cap',
  idempotencyKeyReused: 'idempotency-key-reused',
  /** A workflow's update validator refused the input (a message that is only whitespace, an unknown tool): 422. */
  invalidInput: 'invalid-input',
  conflict: 'conflict',
  methodNotAllowed: 'method-not-allowed',
  unavailable: 'temporal-unavailable',
  /** Temporal refused for its rate limits (RESOURCE_EXHAUSTED) after the client's retries: 429 with Retry-After. */
  rateLimited: 'temporal-rate-limited',
  /** The server cannot run what was asked because of its own configuration (no model provider). */
  notConfigured: 'not-configured',
  /** The route exists but this deployment cannot serve it (the event stream behind API Gateway + Lambda, sessions in an API built without them). */
  notAvailableHere: 'not-available-here',
  internal: 'internal-error',
} as const;
/** One problem kind. */
export type ProblemKindName = (typeof ProblemKind)[keyof typeof ProblemKind];

/** Options of an {@link ApiProblem}. */
export interface ApiProblemOptions {
  detail?: string;
  errors?: FieldProblem[];
  suggestions?: string[];
  headers?: Record<string, string>;
}

/** A problem a handler reports; becomes a problem+json response with its status. */
export class ApiProblem extends Error {
  /** Marker for recognising the error without `instanceof` across module copies. */
  readonly errandError = 'ApiProblem';
  readonly status: ContentfulStatusCode;
  readonly kind: ProblemKindName;
  readonly title: string;
  readonly options: ApiProblemOptions;

  constructor(status: ContentfulStatusCode, kind: ProblemKindName, title: string, options: ApiProblemOptions = {}) {
    super(options.detail ? `${title}: ${options.detail}` : title);
    this.name = 'ApiProblem';
    this.status = status;
    this.kind = kind;
    this.title = title;
    this.options = options;
  }
}

/** True for an {@link ApiProblem} (by marker). */
export function isApiProblem(error: unknown): error is ApiProblem {
  return typeof error === 'object' && error !== null && 'errandError' in error && error.errandError === 'ApiProblem';
}

/** The problem document of an {@link ApiProblem}. */
export function problemDocument(problem: ApiProblem, instance: string): Problem {
  return {
    type: `urn:errand:problem:${problem.kind}`,
    title: problem.title,
    status: problem.status,
    ...(problem.options.detail ? { detail: problem.options.detail } : {}),
    instance,
    ...(problem.options.errors ? { errors: problem.options.errors } : {}),
    ...(problem.options.suggestions ? { suggestions: problem.options.suggestions } : {}),
  };
}

/** Writes a problem as the response. */
export function problemResponse(c: Context, problem: ApiProblem): Response {
  const body = JSON.stringify(problemDocument(problem, c.req.path));
  return c.body(body, problem.status, { 'content-type': problemContentType, ...problem.options.headers });
}

/** Field problems of a failed zod parse, located in one part of the request. */
export function fieldProblems(error: z.ZodError, location: (typeof problemLocations)[number], validKeys?: readonly string[]): FieldProblem[] {
  return error.issues.flatMap((issue): FieldProblem[] => {
    const path = issue.path.map(String);
    // Unknown keys are reported on the parent with the names in `keys`; name each key as its own field.
    if (issue.code === 'unrecognized_keys') {
      const valid = path.length === 0 && validKeys ? `; valid: ${validKeys.join(', ') || '(none)'}` : '';
      return issue.keys.map((key) => ({ in: location, field: [...path, key].join('.'), message: `unknown ${location === 'query' ? 'query parameter' : 'field'} "${key}"${valid}` }));
    }
    return [{ in: location, field: path.join('.'), message: issue.message }];
  });
}

/** A 400 for a request part that failed its schema. */
export function invalidRequest(error: z.ZodError, location: (typeof problemLocations)[number], validKeys?: readonly string[]): ApiProblem {
  const errors = fieldProblems(error, location, validKeys);
  const first = errors[0];
  return new ApiProblem(400, ProblemKind.invalidRequest, 'The request is not valid', {
    detail: errors.length === 1 && first ? `${location} ${first.field || '(whole)'}: ${first.message}` : `${errors.length} problems in the ${location}`,
    errors,
  });
}

/** A 404 that says nothing about whether the id exists for someone else. */
export function delegationNotFound(id: string): ApiProblem {
  return new ApiProblem(404, ProblemKind.notFound, 'No such delegation', { detail: `no delegation with id "${id}" is visible to this API key` });
}

/**
 * Refuses a start when the server has no model provider at all: nothing the caller sends can make it run, so
 * it is the server's 503 (naming the settings its operator sets), not a 422 about a body field.
 */
export function assertProviderConfigured(config: Pick<ErrandConfig, 'providers'>, what: 'delegation' | 'session'): void {
  if (config.providers.length > 0) return;
  throw new ApiProblem(503, ProblemKind.notConfigured, 'No model provider is configured', {
    detail: `this server has no model provider (ERRAND_PROVIDERS is unset or empty), so no ${what} can run. ${configureProvidersHint}`,
  });
}

/** What `errand api` and the Lambda say at start when no model provider is configured (every start would be refused). */
export const noProviderWarning = 'no model provider is configured (ERRAND_PROVIDERS is unset or empty): every delegation and session start will be answered 503 not-configured until one is (MCP sessions start: their delegations are planned on the workers)';

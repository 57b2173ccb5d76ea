import { z } from 'zod';
import { planningFailureCodes } from './planning-failure';

/**
 * Wire schemas of the HTTP API (`/v1`). The routes validate with these and the OpenAPI document is
 * generated from them, so the two cannot drift. Request schemas are strict: an unknown field or query
 * parameter is a 400 that names it. Response schemas describe what the API sends.
 *
 * This file holds what the routes share (the problem document, `wait`, the delegation path, no query or
 * path) and the health answer; each group of routes has its own file: delegation-api.ts, model-api.ts,
 * source-api.ts, session-api.ts, mcp-api.ts, usage-api.ts.
 */

// ---- shared pieces ---------------------------------------------------------------------------------

/** Where a problem was found in the request. */
export const problemLocations = ['body', 'query', 'path', 'header'] as const;

/** One validation problem: where, which field, and what is wrong (and what would be valid). */
export const fieldProblemSchema = z.object({
  in: z.enum(problemLocations),
  /** Dotted path of the field, e.g. `max_turns`, `parameters.env`; empty for the whole body. */
  field: z.string(),
  message: z.string(),
  /** Why a delegation cannot start, as a code (decision 0041); a string, so a client tolerates codes added later. */
  code: z.string().optional().describe(`Why the delegation cannot start (a 422 of the planner): one of ${planningFailureCodes.join(', ')}.`),
});
/** One validation problem. */
export type FieldProblem = z.infer<typeof fieldProblemSchema>;

/** An RFC 9457 problem document (`application/problem+json`): every error answer of the API. */
export const problemSchema = z.object({
  /** A URN naming the kind of problem, e.g. `urn:errand:problem:invalid-request`. */
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  /** The request path. */
  instance: z.string().optional(),
  errors: z.array(fieldProblemSchema).optional(),
  /** "Did you mean" names: for an unknown source (always, maybe empty), provider or model (when some are close). */
  suggestions: z.array(z.string()).optional(),
});
/** An RFC 9457 problem document. */
export type Problem = z.infer<typeof problemSchema>;

/**
 * A `wait` duration: a whole number with unit `ms`, `s` or `m` (`30s`, `1500ms`, `1m`), or plain seconds
 * (`30`). Capped at the configured maximum wait.
 */
export const waitDurationSchema = z
  .string()
  .regex(/^\d{1,9}(ms|s|m)?$/, { error: 'expected a duration such as 30s, 1500ms or 1m (plain numbers are seconds)' })
  .describe('How long to wait for the result, e.g. 30s, 1500ms, 1m (capped by the server maximum).');

/** Path parameter `{id}`: a delegation's workflow id (workflow-ids.ts; a child started before ids lost their `/` is addressed with it encoded as %2F). */
export const delegationPathSchema = z.strictObject({
  id: z
    .string()
    .min(1)
    .max(1000)
    .regex(/^[A-Za-z0-9._:/@~-]+$/, { error: 'expected a delegation id such as errand-3f9c2a7b1d4e5f60' })
    .describe('The delegation id (workflow id); a child id is `<parent>~task-<n>` (one started by an older release, `<parent>/task-<n>`, has its `/` encoded as %2F).'),
});

/** No query parameters. */
export const emptyQuerySchema = z.strictObject({});
/** No path parameters. */
export const emptyPathSchema = z.strictObject({});

/** Answer of `GET /healthz`. */
export const healthResponseSchema = z.object({ ok: z.literal(true), version: z.string() });

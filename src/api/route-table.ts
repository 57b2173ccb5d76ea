import { z } from 'zod';
import { delegationPathSchema, emptyPathSchema, emptyQuerySchema, healthResponseSchema } from '../contracts/api';
import {
  cancelBodySchema,
  cancelResponseSchema,
  delegationStatusSchema,
  idempotencyKeySchema,
  listDelegationsQuerySchema,
  listDelegationsResponseSchema,
  resultQuerySchema,
  resultResponseSchema,
  sendMessageBodySchema,
  sendMessageResponseSchema,
  startDelegationQuerySchema,
  startDelegationResponseSchema,
} from '../contracts/delegation-api';
import { listModelsQuerySchema, modelsResponseSchema } from '../contracts/model-api';
import {
  listSourcesQuerySchema,
  listSourcesResponseSchema,
  sourceContentResponseSchema,
  sourcePathSchema,
} from '../contracts/source-api';
import { delegateRequestSchema } from '../contracts/delegation';
import { delegationEvents } from '../contracts/delegation-events';
import { mcpDeleteRoute, mcpPostRoute, mcpStreamRoute } from './mcp-route-specs';
import { workflowRoutes } from './workflow-route-specs';
import { defineRoute, type ResponseSpec, type RouteSpec } from './route-spec';
import {
  approvalBodySchema,
  approvalPathSchema,
  approvalResponseSchema,
  approvalsResponseSchema,
  cancelSessionBodySchema,
  cancelSessionResponseSchema,
  sessionMessageResponseSchema,
  sessionResponseSchema,
  startSessionBodySchema,
  startSessionResponseSchema,
} from '../contracts/session-api';

/**
 * Every route of the API, as contracts. Handlers are mounted against these specs (src/api/routes/) and
 * `GET /openapi.json` is generated from them. A new route is a spec here (its bodies in contracts/) plus a handler in routes/.
 */

const unauthorized: ResponseSpec = { description: 'Missing or invalid API key.' };
const badRequest: ResponseSpec = { description: 'The request is malformed: bad JSON, wrong types, unknown fields or parameters.' };
const notFound: ResponseSpec = { description: 'No such delegation for this API key (other tenants\' delegations are not visible).' };
const tooLarge: ResponseSpec = { description: 'The request body is larger than the configured limit.' };
const unsupported: ResponseSpec = { description: 'The body is not application/json.' };
const unavailable: ResponseSpec = { description: 'Temporal cannot be reached.' };
const startRefused: ResponseSpec = {
  description: "Temporal refused the start for its rate limits, also after retries (`temporal-rate-limited`), or the tenant's model calls today reached the operator's daily cost cap, ERRAND_TENANT_DAILY_COST_USD (`daily-cost-cap`, with the figures; `Retry-After` is the time until 00:00 UTC).",
};
const unavailableOrNotConfigured: ResponseSpec = { description: 'Temporal cannot be reached, or this server has no model provider configured (`not-configured`).' };
const sessionNotFound: ResponseSpec = { description: "No such session or approval for this API key (other tenants' are not visible)." };
const sessionConflict: ResponseSpec = { description: 'The workflow refused it: the session has ended, or the approval is no longer pending.' };
const optionalIdempotencyKey = idempotencyKeySchema.optional();

/** `POST /v1/delegations`. */
export const startDelegationRoute = defineRoute({
  method: 'post',
  path: '/v1/delegations',
  operationId: 'startDelegation',
  summary: 'Start a subagent',
  description:
    'Validates the request, resolves the source and model, and starts a subagent workflow. With `?wait=` the answer waits ' +
    'for the result up to that long (capped by the server at `ERRAND_API_MAX_WAIT_MS`, 25 s by default; a longer wait is cut to it and the answer says so in `Errand-Wait-Capped`). With an `Idempotency-Key`, a retried request returns the same ' +
    'delegation (`created: false`) instead of starting another.',
  tag: 'delegations',
  authenticated: true,
  params: emptyPathSchema,
  query: startDelegationQuerySchema,
  body: { schema: delegateRequestSchema, required: true, description: 'What to delegate: instructions, a source, or both.' },
  headers: { 'Idempotency-Key': { schema: optionalIdempotencyKey, description: 'Makes a retried start return the same delegation (per tenant).' } },
  responses: {
    200: { description: 'An earlier request with the same Idempotency-Key started this delegation.', schema: startDelegationResponseSchema },
    201: { description: 'The delegation started (and, with `?wait=`, possibly finished).', schema: startDelegationResponseSchema },
    400: badRequest,
    401: unauthorized,
    413: tooLarge,
    415: unsupported,
    422: { description: "The request is well-formed but cannot run: unknown source (with suggestions), model not allowed, bad parameters, working_dir outside, max_turns / time_budget / cost_budget_usd over the operator's limit, a cost cap on a model without prices, a context whose estimated cost does not fit cost_budget_usd, or an Idempotency-Key reused for a different request." },
    429: startRefused,
    503: unavailableOrNotConfigured,
  },
});

/** `GET /v1/delegations`. */
export const listDelegationsRoute = defineRoute({
  method: 'get',
  path: '/v1/delegations',
  operationId: 'listDelegations',
  summary: 'List delegations',
  description: 'The API key\'s delegations, newest first, filtered by state, source or parent; page with `nextPageToken`.',
  tag: 'delegations',
  authenticated: true,
  params: emptyPathSchema,
  query: listDelegationsQuerySchema,
  responses: { 200: { description: 'One page of delegations.', schema: listDelegationsResponseSchema }, 400: badRequest, 401: unauthorized, 503: unavailable },
});

/** `GET /v1/delegations/{id}`. */
export const getDelegationRoute = defineRoute({
  method: 'get',
  path: '/v1/delegations/{id}',
  operationId: 'getDelegation',
  summary: 'Status and peek',
  description: 'State, counters and source from the search attributes, and a live peek (turns, last tool call, last text).',
  tag: 'delegations',
  authenticated: true,
  params: delegationPathSchema,
  query: emptyQuerySchema,
  responses: { 200: { description: 'The delegation.', schema: delegationStatusSchema }, 400: badRequest, 401: unauthorized, 404: notFound, 503: unavailable },
});

/** `GET /v1/delegations/{id}/result`. */
export const getDelegationResultRoute = defineRoute({
  method: 'get',
  path: '/v1/delegations/{id}/result',
  operationId: 'getDelegationResult',
  summary: 'Result, waiting up to ?wait=',
  description: 'The result when the delegation has ended (200). Still running after the wait: 202 with its state and a peek; ask again. A wait longer than the server\'s longest (`ERRAND_API_MAX_WAIT_MS`, 25 s by default) is cut to it, and the answer says so in `Errand-Wait-Capped`.',
  tag: 'delegations',
  authenticated: true,
  params: delegationPathSchema,
  query: resultQuerySchema,
  responses: {
    200: { description: 'The delegation ended; here is its result.', schema: resultResponseSchema },
    202: { description: 'Still running (`done: false`), with a peek.', schema: resultResponseSchema },
    400: badRequest,
    401: unauthorized,
    404: notFound,
    503: unavailable,
  },
});

/** `GET /v1/delegations/{id}/events`. */
export const delegationEventsRoute = defineRoute({
  method: 'get',
  path: '/v1/delegations/{id}/events',
  operationId: 'streamDelegationEvents',
  summary: 'Live events (server-sent events)',
  description:
    'A `text/event-stream` of what the delegation does, each event with JSON data: `state` ({state}), `turn` ({turn, maxTurns}: a model ' +
    'call started), `tool` ({name, argumentsPreview, turn, toolCalls}: the last of its new tool calls), `text` ({turn, attempt, delta, ' +
    'chars, restart?, gap?}: text the model is writing now; `restart` means a retried call starts its text again), `queued` ' +
    '({queuedMessages}), and `settled` (the result, as `GET …/result` returns it), after which the stream ends. A new connection ' +
    'first describes the current state. Comment lines keep idle connections open; the stream closes after the server\'s longest wait ' +
    '(ERRAND_API_MAX_WAIT_MS) and the client reconnects with `Last-Event-ID` to continue where it was. Streams of one delegation share ' +
    'one look at it; a tenant may hold ERRAND_API_MAX_EVENT_STREAMS streams open at once (429 past it). Node server only: behind API ' +
    'Gateway + Lambda it answers 501 (responses are buffered there); poll `GET /v1/delegations/{id}` instead, whose peek has the same text as `partial`.',
  tag: 'delegations',
  authenticated: true,
  params: delegationPathSchema,
  query: emptyQuerySchema,
  headers: {
    'Last-Event-ID': {
      schema: z.string().max(200).optional(),
      description: 'The id of the last event received: a reconnecting client gets only what is newer. An id that is not one of ours starts from the current state.',
    },
  },
  responses: {
    200: { description: 'The event stream.', contentType: 'text/event-stream', events: delegationEvents },
    204: { description: 'The stream already ended with `settled` (Last-Event-ID `settled`): nothing more will come.', empty: true },
    400: badRequest,
    401: unauthorized,
    404: notFound,
    429: { description: 'This tenant already holds the most open event streams the server allows (`ERRAND_API_MAX_EVENT_STREAMS`, default 20): close one and retry after `Retry-After` seconds.' },
    501: { description: 'Served by the Lambda behind API Gateway, which buffers responses: poll `GET /v1/delegations/{id}` (peek, with `partial`) instead.' },
    503: unavailable,
  },
});

/** `POST /v1/delegations/{id}/cancel`. */
export const cancelDelegationRoute = defineRoute({
  method: 'post',
  path: '/v1/delegations/{id}/cancel',
  operationId: 'cancelDelegation',
  summary: 'Cancel',
  description: 'Sends the cancel signal: in-flight model and tool calls stop and the run ends `cancelled` with what it had produced.',
  tag: 'delegations',
  authenticated: true,
  params: delegationPathSchema,
  query: emptyQuerySchema,
  body: { schema: cancelBodySchema, required: false, description: 'Optional reason.' },
  responses: {
    202: { description: 'Cancel requested (or the delegation had already ended: `cancelRequested: false`).', schema: cancelResponseSchema },
    400: badRequest,
    401: unauthorized,
    404: notFound,
    413: tooLarge,
    415: unsupported,
    503: unavailable,
  },
});

/** A message the workflow's validator refused as invalid (typed InvalidInput, decision 0041). */
const refusedInput = { description: 'The workflow refused the message as invalid (for example only whitespace); the detail says why.' };

/** A message refused because the workflow's queue is full. */
const queueFull = { description: 'The workflow already holds ERRAND_MAX_QUEUED_MESSAGES queued messages (default 100); the detail names the limit.' };

/** `POST /v1/delegations/{id}/messages`. */
export const sendMessageRoute = defineRoute({
  method: 'post',
  path: '/v1/delegations/{id}/messages',
  operationId: 'sendDelegationMessage',
  summary: 'Send a message to a continuable subagent',
  description: 'Delivers the next user message (the `sendMessage` update). 202 once the workflow accepted it; 409 when it is not continuable or has ended.',
  tag: 'delegations',
  authenticated: true,
  params: delegationPathSchema,
  query: emptyQuerySchema,
  body: { schema: sendMessageBodySchema, required: true, description: 'The message.' },
  headers: { 'Idempotency-Key': { schema: optionalIdempotencyKey, description: 'Makes a retried message a no-op (the update id derives from it).' } },
  responses: {
    202: { description: 'The workflow accepted the message.', schema: sendMessageResponseSchema },
    400: badRequest,
    401: unauthorized,
    404: notFound,
    409: { description: 'The delegation is not continuable, or has ended.' },
    413: tooLarge,
    422: refusedInput,
    429: queueFull,
    415: unsupported,
    503: unavailable,
  },
});

/** `POST /v1/sessions`. */
export const startSessionRoute = defineRoute({
  method: 'post', path: '/v1/sessions', operationId: 'startSession', summary: 'Start a parent session',
  description: 'Starts a session whose model can load and delegate; messages arrive with POST /v1/sessions/{id}/messages.',
  tag: 'sessions', authenticated: true, params: emptyPathSchema, query: emptyQuerySchema,
  body: { schema: startSessionBodySchema, required: true, description: 'Session settings and an optional first message.' },
  headers: { 'Idempotency-Key': { schema: optionalIdempotencyKey, description: 'Makes a retried start return the same session (per tenant).' } },
  responses: {
    201: { description: 'The session started.', schema: startSessionResponseSchema },
    200: { description: 'An earlier request with the same Idempotency-Key started this session.', schema: startSessionResponseSchema },
    400: badRequest, 401: unauthorized, 409: { description: 'The Idempotency-Key cannot be used (choose another).' }, 413: tooLarge, 415: unsupported,
    422: { description: "No default model is configured, maxDepth / maxTurnsPerMessage / timeBudget / costBudgetUsd is over the operator's limit, costBudgetUsd is set for a model without prices, or an Idempotency-Key reused for a different request." }, 429: startRefused, 503: unavailableOrNotConfigured },
});
/** `GET /v1/sessions/{id}`. */
export const getSessionRoute = defineRoute({
  method: 'get', path: '/v1/sessions/{id}', operationId: 'getSession', summary: 'Read a session',
  description: 'The transcript (bounded), state, and background tasks of a session.',
  tag: 'sessions', authenticated: true, params: delegationPathSchema, query: emptyQuerySchema,
  responses: { 200: { description: 'The session.', schema: sessionResponseSchema }, 400: badRequest, 401: unauthorized, 404: sessionNotFound, 503: { description: 'Temporal cannot be reached, or no worker answered the session\'s queries in time.' } },
});
/** `POST /v1/sessions/{id}/messages`. */
export const sendSessionMessageRoute = defineRoute({
  method: 'post', path: '/v1/sessions/{id}/messages', operationId: 'sendSessionMessage', summary: 'Send a message to a session',
  description: 'Answers 202 once the session has durably accepted the message; the reply appears in the transcript.',
  tag: 'sessions', authenticated: true, params: delegationPathSchema, query: emptyQuerySchema,
  body: { schema: sendMessageBodySchema, required: true, description: 'The message.' },
  headers: { 'Idempotency-Key': { schema: optionalIdempotencyKey, description: 'Makes a retried message a no-op (the update id derives from it): it is queued once.' } },
  responses: { 202: { description: 'Accepted.', schema: sessionMessageResponseSchema }, 400: badRequest, 401: unauthorized, 404: sessionNotFound, 409: sessionConflict, 413: tooLarge, 415: unsupported, 422: refusedInput, 429: queueFull, 503: unavailable },
});
/** `POST /v1/sessions/{id}/cancel`. */
export const cancelSessionRoute = defineRoute({
  method: 'post', path: '/v1/sessions/{id}/cancel', operationId: 'cancelSession', summary: 'Cancel a session',
  description: 'Ends the session and cancels every task under it. Answers 202 once the cancel is recorded; the session then ends `cancelled`.',
  tag: 'sessions', authenticated: true, params: delegationPathSchema, query: emptyQuerySchema,
  body: { schema: cancelSessionBodySchema, required: false, description: 'An optional reason.' },
  responses: { 202: { description: 'The cancel is recorded.', schema: cancelSessionResponseSchema }, 400: badRequest, 401: unauthorized, 404: sessionNotFound, 409: sessionConflict, 413: tooLarge, 415: unsupported, 503: unavailable },
});
/** `GET /v1/approvals`. */
export const listApprovalsRoute = defineRoute({
  method: 'get', path: '/v1/approvals', operationId: 'listApprovals', summary: 'Tool calls waiting for approval',
  description: "The tenant's tool calls under an `ask` policy that wait for a decision.",
  tag: 'approvals', authenticated: true, params: emptyPathSchema, query: emptyQuerySchema,
  responses: { 200: { description: 'Pending approvals, oldest first.', schema: approvalsResponseSchema }, 400: badRequest, 401: unauthorized, 503: unavailable },
});
/** `POST /v1/approvals/{id}`. */
export const decideApprovalRoute = defineRoute({
  method: 'post', path: '/v1/approvals/{id}', operationId: 'decideApproval', summary: 'Approve or deny a tool call',
  description: 'The subagent continues with the tool result, or with the denial (and its reason).',
  tag: 'approvals', authenticated: true, params: approvalPathSchema, query: emptyQuerySchema,
  body: { schema: approvalBodySchema, required: true, description: 'The decision.' },
  responses: { 200: { description: 'Recorded.', schema: approvalResponseSchema }, 400: badRequest, 401: unauthorized, 404: sessionNotFound, 409: sessionConflict, 413: tooLarge, 415: unsupported, 503: unavailable },
});

/** `GET /v1/sources`. */
export const listSourcesRoute = defineRoute({
  method: 'get',
  path: '/v1/sources',
  operationId: 'listSources',
  summary: 'List sources',
  description: 'Recipes and agents that can be delegated (what `load()` lists), with store health.',
  tag: 'sources',
  authenticated: true,
  params: emptyPathSchema,
  query: listSourcesQuerySchema,
  responses: { 200: { description: 'The listing.', schema: listSourcesResponseSchema }, 400: badRequest, 401: unauthorized },
});

/** `GET /v1/sources/{name}`. */
export const getSourceRoute = defineRoute({
  method: 'get',
  path: '/v1/sources/{name}',
  operationId: 'getSource',
  summary: 'Read a source',
  description: 'What `load(name)` shows, plus the raw file and its version. Unknown names: 404 with suggestions.',
  tag: 'sources',
  authenticated: true,
  params: sourcePathSchema,
  query: emptyQuerySchema,
  responses: {
    200: { description: 'The source.', schema: sourceContentResponseSchema },
    400: badRequest,
    401: unauthorized,
    404: { description: 'No source of that name; `suggestions` lists close names.' },
    422: { description: 'The source exists but is not valid.' },
  },
});

/** `GET /v1/models`. */
export const listModelsRoute = defineRoute({
  method: 'get',
  path: '/v1/models',
  operationId: 'listModels',
  summary: 'Allowed models',
  description: 'The providers and models a delegation may choose (with context window, output limit and reasoning efforts), and the default.',
  tag: 'models',
  authenticated: true,
  params: emptyPathSchema,
  query: listModelsQuerySchema,
  responses: {
    200: { description: 'The allow-list.', schema: modelsResponseSchema },
    400: badRequest,
    401: unauthorized,
    404: { description: 'No provider of that name; `suggestions` lists close names.' },
  },
});

/** `GET /healthz`. */
export const healthRoute = defineRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'health',
  summary: 'Liveness',
  tag: 'system',
  authenticated: false,
  params: emptyPathSchema,
  query: emptyQuerySchema,
  responses: { 200: { description: 'The API process is up.', schema: healthResponseSchema } },
});

/** `GET /openapi.json`. */
export const openApiRoute = defineRoute({
  method: 'get',
  path: '/openapi.json',
  operationId: 'openApiDocument',
  summary: 'This API as OpenAPI 3.1',
  tag: 'system',
  authenticated: false,
  params: emptyPathSchema,
  query: emptyQuerySchema,
  responses: { 200: { description: 'The OpenAPI 3.1 document.', schema: z.record(z.string(), z.unknown()) } },
});

/** Every route, in documentation order. */
export const apiRoutes: readonly RouteSpec[] = [
  startDelegationRoute,
  listDelegationsRoute,
  getDelegationRoute,
  getDelegationResultRoute,
  delegationEventsRoute,
  cancelDelegationRoute,
  sendMessageRoute,
  startSessionRoute,
  getSessionRoute,
  sendSessionMessageRoute,
  cancelSessionRoute,
  listApprovalsRoute,
  decideApprovalRoute,
  ...workflowRoutes,
  mcpPostRoute,
  mcpStreamRoute,
  mcpDeleteRoute,
  listSourcesRoute,
  getSourceRoute,
  listModelsRoute,
  healthRoute,
  openApiRoute,
];

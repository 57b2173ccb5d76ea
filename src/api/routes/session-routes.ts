import type { Hono } from 'hono';
import { z } from 'zod';
import { delegationPathSchema, emptyPathSchema, emptyQuerySchema, sendMessageBodySchema } from '../../contracts/api';
import { maxDepthCeiling, maxMessageLength } from '../../contracts/limits';
import type { ApiDependencies } from '../api-dependencies';
import type { ApiEnv } from '../api-env';
import { ApiProblem, ProblemKind } from '../problem';
import { checkSessionLimits } from '../request-limits';
import { defineRoute, mountRoute, sendJson, type ResponseSpec } from '../route-spec';

const unauthorized: ResponseSpec = { description: 'Missing or invalid API key.' };
const badRequest: ResponseSpec = { description: 'The request is malformed: bad JSON, wrong types, unknown fields or parameters.' };
const notFound: ResponseSpec = { description: "No such session or approval for this API key (other tenants' are not visible)." };
const conflict: ResponseSpec = { description: 'The workflow refused it: the session has ended, or the approval is no longer pending.' };

/** Body of `POST /v1/sessions`. */
export const startSessionBodySchema = z.strictObject({
  label: z.string().min(1).max(200).optional().describe('Short label for listings and the Web UI.'),
  instructions: z.string().max(maxMessageLength).optional().describe('System instructions for the session.'),
  context: z.string().max(maxMessageLength).optional().describe('Reference material for the session.'),
  message: z.string().min(1).max(maxMessageLength).optional().describe('A first message, run at once.'),
  maxTurnsPerMessage: z.number().int().min(1).max(1_000).optional().describe("Model calls one message may cause; at most the operator's limit (ERRAND_SESSION_MAX_TURNS), else 422."),
  maxDepth: z.number().int().min(1).max(maxDepthCeiling).optional().describe("Depth limit of its delegations (1: subagents cannot delegate); at most the operator's limit (ERRAND_MAX_DEPTH), else 422."),
});
const startSessionResponseSchema = z.object({ id: z.string(), runId: z.string(), links: z.object({ self: z.string(), messages: z.string() }) });
const transcriptEntrySchema = z.object({ role: z.enum(['user', 'assistant', 'notice', 'event']), text: z.string(), at: z.number() });
const sessionResponseSchema = z.object({
  id: z.string(),
  running: z.boolean(),
  transcript: z.object({ state: z.string(), entries: z.array(transcriptEntrySchema), queuedMessages: z.number() }),
  /** The session's peek; `partial` is the text its model is writing now, while a model call streams. */
  peek: z.record(z.string(), z.unknown()),
});
const sessionMessageResponseSchema = z.object({ id: z.string(), accepted: z.literal(true), queuedTurns: z.number() });
const approvalSchema = z.object({ id: z.string(), workflowId: z.string(), tool: z.string(), argumentsPreview: z.string(), requestedAt: z.number(), expiresAt: z.number() });
const approvalsResponseSchema = z.object({ approvals: z.array(approvalSchema) });
const approvalPathSchema = z.strictObject({ id: z.string().min(1).max(1_200).describe('Approval id: `<workflow id>:<message>:<call>`.') });
const approvalBodySchema = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  reason: z.string().max(2_000).optional().describe('Shown to the subagent with a denial.'),
});
const approvalResponseSchema = z.object({ id: z.string(), decision: z.enum(['approve', 'deny']) });

/** `POST /v1/sessions`. */
export const startSessionRoute = defineRoute({
  method: 'post', path: '/v1/sessions', operationId: 'startSession', summary: 'Start a parent session',
  description: 'Starts a session whose model can load and delegate; messages arrive with POST /v1/sessions/{id}/messages.',
  tag: 'sessions', authenticated: true, params: emptyPathSchema, query: emptyQuerySchema,
  body: { schema: startSessionBodySchema, required: true, description: 'Session settings and an optional first message.' },
  responses: { 201: { description: 'The session started.', schema: startSessionResponseSchema }, 400: badRequest, 401: unauthorized, 422: { description: "No model is configured, or maxDepth / maxTurnsPerMessage is over the operator's limit." } },
});
/** `GET /v1/sessions/{id}`. */
export const getSessionRoute = defineRoute({
  method: 'get', path: '/v1/sessions/{id}', operationId: 'getSession', summary: 'Read a session',
  description: 'The transcript (bounded), state, and background tasks of a session.',
  tag: 'sessions', authenticated: true, params: delegationPathSchema, query: emptyQuerySchema,
  responses: { 200: { description: 'The session.', schema: sessionResponseSchema }, 400: badRequest, 401: unauthorized, 404: notFound },
});
/** `POST /v1/sessions/{id}/messages`. */
export const sendSessionMessageRoute = defineRoute({
  method: 'post', path: '/v1/sessions/{id}/messages', operationId: 'sendSessionMessage', summary: 'Send a message to a session',
  description: 'Answers 202 once the session has durably accepted the message; the reply appears in the transcript.',
  tag: 'sessions', authenticated: true, params: delegationPathSchema, query: emptyQuerySchema,
  body: { schema: sendMessageBodySchema, required: true, description: 'The message.' },
  responses: { 202: { description: 'Accepted.', schema: sessionMessageResponseSchema }, 400: badRequest, 401: unauthorized, 404: notFound, 409: conflict },
});
const cancelSessionBodySchema = z.strictObject({ reason: z.string().max(2_000).optional().describe('Why; shown in the session and its tasks.') });
const cancelSessionResponseSchema = z.object({ id: z.string(), cancelling: z.literal(true) });
/** `POST /v1/sessions/{id}/cancel`. */
export const cancelSessionRoute = defineRoute({
  method: 'post', path: '/v1/sessions/{id}/cancel', operationId: 'cancelSession', summary: 'Cancel a session',
  description: 'Ends the session and cancels every task under it. Answers 202 once the cancel is recorded; the session then ends `cancelled`.',
  tag: 'sessions', authenticated: true, params: delegationPathSchema, query: emptyQuerySchema,
  body: { schema: cancelSessionBodySchema, required: false, description: 'An optional reason.' },
  responses: { 202: { description: 'The cancel is recorded.', schema: cancelSessionResponseSchema }, 400: badRequest, 401: unauthorized, 404: notFound, 409: conflict },
});
/** `GET /v1/approvals`. */
export const listApprovalsRoute = defineRoute({
  method: 'get', path: '/v1/approvals', operationId: 'listApprovals', summary: 'Tool calls waiting for approval',
  description: "The tenant's tool calls under an `ask` policy that wait for a decision.",
  tag: 'approvals', authenticated: true, params: emptyPathSchema, query: emptyQuerySchema,
  responses: { 200: { description: 'Pending approvals, oldest first.', schema: approvalsResponseSchema }, 401: unauthorized },
});
/** `POST /v1/approvals/{id}`. */
export const decideApprovalRoute = defineRoute({
  method: 'post', path: '/v1/approvals/{id}', operationId: 'decideApproval', summary: 'Approve or deny a tool call',
  description: 'The subagent continues with the tool result, or with the denial (and its reason).',
  tag: 'approvals', authenticated: true, params: approvalPathSchema, query: emptyQuerySchema,
  body: { schema: approvalBodySchema, required: true, description: 'The decision.' },
  responses: { 200: { description: 'Recorded.', schema: approvalResponseSchema }, 400: badRequest, 401: unauthorized, 404: notFound, 409: conflict },
});

/** The session and approval routes, in documentation order. */
export const sessionRoutes = [startSessionRoute, getSessionRoute, sendSessionMessageRoute, cancelSessionRoute, listApprovalsRoute, decideApprovalRoute] as const;

/** Mounts `/v1/sessions` and `/v1/approvals`. */
export function mountSessionRoutes(app: Hono<ApiEnv>, deps: ApiDependencies): void {
  const service = () => {
    if (!deps.sessions) throw new ApiProblem(503, ProblemKind.unavailable, 'Sessions are not available in this deployment');
    return deps.sessions;
  };
  mountRoute(app, startSessionRoute, async ({ body, tenant, c }) => {
    checkSessionLimits(body, deps.config);
    const started = await service().start(tenant, body);
    const self = `/v1/sessions/${encodeURIComponent(started.id)}`;
    c.header('location', self);
    return sendJson(c, startSessionResponseSchema, 201, { ...started, links: { self, messages: `${self}/messages` } });
  });
  mountRoute(app, getSessionRoute, async ({ params, tenant, c }) => sendJson(c, sessionResponseSchema, 200, await service().get(tenant, params.id)));
  mountRoute(app, sendSessionMessageRoute, async ({ params, body, tenant, c }) => sendJson(c, sessionMessageResponseSchema, 202, await service().sendMessage(tenant, params.id, body.message)));
  mountRoute(app, cancelSessionRoute, async ({ params, body, tenant, c }) => sendJson(c, cancelSessionResponseSchema, 202, await service().cancel(tenant, params.id, body?.reason)));
  mountRoute(app, listApprovalsRoute, async ({ tenant, c }) => sendJson(c, approvalsResponseSchema, 200, { approvals: await service().listApprovals(tenant) }));
  mountRoute(app, decideApprovalRoute, async ({ params, body, tenant, c }) => sendJson(c, approvalResponseSchema, 200, await service().decide(tenant, params.id, body.decision, body.reason)));
}

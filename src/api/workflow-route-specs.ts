import { z } from 'zod';
import { emptyQuerySchema } from '../contracts/api';
import { idempotencyKeySchema, startDelegationQuerySchema } from '../contracts/delegation-api';
import {
  cancelWorkflowBodySchema,
  restartAgentResponseSchema,
  resumeWorkflowBodySchema,
  resumeWorkflowResponseSchema,
  startWorkflowBodySchema,
  startWorkflowResponseSchema,
  workflowAgentPathSchema,
  workflowControlResponseSchema,
  workflowDryRunResponseSchema,
  workflowPathSchema,
  workflowResultSchema,
  workflowStatusSchema,
  workflowViewSchema,
} from '../contracts/workflow-api';
import { defineRoute, type ResponseSpec } from './route-spec';

/**
 * The `/v1/workflows` routes (SEMANTICS §7) as contracts; their handlers are routes/workflow-routes.ts, and
 * route-table.ts lists them with every other route (so the OpenAPI document shows them).
 */

const unauthorized: ResponseSpec = { description: 'Missing or invalid API key.' };
const badRequest: ResponseSpec = { description: 'The request is malformed: bad JSON, wrong types, unknown fields or parameters.' };
const notFound: ResponseSpec = { description: "No such workflow run for this API key (other tenants' runs are not visible)." };
const unavailable: ResponseSpec = { description: 'Temporal cannot be reached.' };
const conflict: ResponseSpec = { description: 'The run has ended (or refused the request): it needs a running run.' };
const tooLarge: ResponseSpec = { description: 'The request body is larger than the configured limit.' };
const unsupported: ResponseSpec = { description: 'The body is not application/json.' };
const tag = 'workflows';

/** `POST /v1/workflows`. */
export const startWorkflowRoute = defineRoute({
  method: 'post',
  path: '/v1/workflows',
  operationId: 'startWorkflow',
  summary: 'Start a workflow run (or project one)',
  description:
    'Runs a workflow script (Claude Code\'s `agent()`, `parallel`, `pipeline`, `args`), inline as `script` or a workflow source by `name` ' +
    '(`.claude/workflows/<name>.js`), as a durable run whose agents are delegations. Before it starts, the run is projected: the script runs ' +
    'in its sandbox with every agent answered by a placeholder, and each agent is counted at one full context window of its model; a projection ' +
    'over `costBudgetUsd` refuses the start (422). `dryRun: true` answers the projection without starting. With `?wait=` the answer waits for ' +
    'the end up to that long (capped at `ERRAND_API_MAX_WAIT_MS`). With an `Idempotency-Key`, a retried request returns the same run.',
  tag,
  authenticated: true,
  params: z.strictObject({}),
  query: startDelegationQuerySchema,
  body: { schema: startWorkflowBodySchema, required: true, description: 'The script (or a workflow name), its args, and the run\'s caps.' },
  headers: { 'Idempotency-Key': { schema: idempotencyKeySchema.optional(), description: 'Makes a retried start return the same run (per tenant).' } },
  responses: {
    200: { description: 'A dry run\'s projection, or the run an earlier request with this Idempotency-Key started.', schema: z.union([workflowDryRunResponseSchema, startWorkflowResponseSchema]) },
    201: { description: 'The run started (and, with `?wait=`, possibly ended: `result`).', schema: startWorkflowResponseSchema },
    400: badRequest,
    401: unauthorized,
    413: tooLarge,
    415: unsupported,
    422: { description: "Unknown workflow name (naming where it looked), a script that does not parse or uses what a workflow script may not, timeBudget / costBudgetUsd over the operator's limit, a projection over costBudgetUsd (naming agents, tokens and cost), or an Idempotency-Key reused for a different request." },
    429: { description: "The tenant's model calls today reached the operator's daily cost cap (ERRAND_TENANT_DAILY_COST_USD)." },
    501: { description: 'This server does not run workflows (no workflow service is wired).' },
    503: { description: 'Temporal cannot be reached, or this server has no model provider configured (`not-configured`).' },
  },
});

/** `GET /v1/workflows/{id}`. */
export const getWorkflowRoute = defineRoute({
  method: 'get',
  path: '/v1/workflows/{id}',
  operationId: 'getWorkflow',
  summary: 'A workflow run and its view',
  description: 'Temporal\'s status and the run\'s view: status, phase, counts per label (waiting, running, done, failed), each agent, tokens, cost, elapsed time, and its result or diagnostic once it has ended.',
  tag,
  authenticated: true,
  params: workflowPathSchema,
  query: emptyQuerySchema,
  responses: { 200: { description: 'The run.', schema: workflowStatusSchema }, 400: badRequest, 401: unauthorized, 404: notFound, 503: unavailable },
});

/** `GET /v1/workflows/{id}/events`. */
export const workflowEventsRoute = defineRoute({
  method: 'get',
  path: '/v1/workflows/{id}/events',
  operationId: 'streamWorkflowEvents',
  summary: 'Live view (server-sent events)',
  description:
    'A `text/event-stream` of the run\'s view: a `view` event (the view, as `GET /v1/workflows/{id}` has it) whenever it changed, then `ended` ' +
    '(the run\'s result) when the run has ended, after which the stream ends. The stream closes after the server\'s longest wait ' +
    '(ERRAND_API_MAX_WAIT_MS); reconnect to continue (a new connection starts with the current view). Node server only: behind API Gateway + ' +
    'Lambda it answers 501; poll `GET /v1/workflows/{id}` there.',
  tag,
  authenticated: true,
  params: workflowPathSchema,
  query: emptyQuerySchema,
  responses: {
    200: {
      description: 'The event stream.',
      contentType: 'text/event-stream',
      events: {
        view: { data: workflowViewSchema, description: 'The run\'s view, sent when it changed.' },
        ended: { data: workflowResultSchema, description: 'The run\'s result; the stream ends after it.' },
        error: { data: z.object({ detail: z.string() }), description: 'The server could not look at the run; reconnect to try again.' },
      },
    },
    400: badRequest,
    401: unauthorized,
    404: notFound,
    501: { description: 'Served by the Lambda behind API Gateway, which buffers responses: poll `GET /v1/workflows/{id}` instead.' },
    503: unavailable,
  },
});

/** `POST /v1/workflows/{id}/pause`. */
export const pauseWorkflowRoute = defineRoute({
  method: 'post',
  path: '/v1/workflows/{id}/pause',
  operationId: 'pauseWorkflow',
  summary: 'Pause a run',
  description: 'No new agent starts; running agents finish. `requested: false` when the run has already ended.',
  tag,
  authenticated: true,
  params: workflowPathSchema,
  query: emptyQuerySchema,
  responses: { 202: { description: 'The pause was sent (or the run had ended).', schema: workflowControlResponseSchema }, 400: badRequest, 401: unauthorized, 404: notFound, 503: unavailable },
});

/** `POST /v1/workflows/{id}/resume`. */
export const resumeWorkflowRoute = defineRoute({
  method: 'post',
  path: '/v1/workflows/{id}/resume',
  operationId: 'resumeWorkflow',
  summary: 'Resume a run (a paused one, or an ended one from its journal)',
  description:
    'A running run: agents start again (`action: signalled`; a `script` is refused, as a running run keeps its script). A run that has ended ' +
    '(completed, failed, cancelled, budget): a new run starts with the same args and caps from the ended run\'s journal (`action: started`, ' +
    'the new run under `started`), with the edited `script` when one is given: every agent whose key is in the journal returns its result ' +
    'without running again, and only agents whose key is new run. The new run is projected and checked against its money cap like a start.',
  tag,
  authenticated: true,
  params: workflowPathSchema,
  query: emptyQuerySchema,
  body: { schema: resumeWorkflowBodySchema, required: false, description: 'An edited script, for a run that has ended.' },
  responses: {
    201: { description: 'The run had ended: a new run started from its journal.', schema: resumeWorkflowResponseSchema },
    202: { description: 'The running run was told to go on.', schema: resumeWorkflowResponseSchema },
    400: badRequest,
    401: unauthorized,
    404: notFound,
    409: { description: 'A script was given for a run that is still running, or the ended run has no journal (it ended without a result).' },
    413: tooLarge,
    415: unsupported,
    422: { description: 'The edited script does not parse, or its projection passes the money cap.' },
    503: unavailable,
  },
});

/** `POST /v1/workflows/{id}/cancel`. */
export const cancelWorkflowRoute = defineRoute({
  method: 'post',
  path: '/v1/workflows/{id}/cancel',
  operationId: 'cancelWorkflow',
  summary: 'Cancel a run',
  description: 'Cancels every running agent and ends the run `cancelled`. `requested: false` when it has already ended.',
  tag,
  authenticated: true,
  params: workflowPathSchema,
  query: emptyQuerySchema,
  body: { schema: cancelWorkflowBodySchema, required: false, description: 'Why, for the record.' },
  responses: { 202: { description: 'The cancel was sent (or the run had ended).', schema: workflowControlResponseSchema }, 400: badRequest, 401: unauthorized, 404: notFound, 413: tooLarge, 415: unsupported, 503: unavailable },
});

/** `POST /v1/workflows/{id}/agents/{key}/restart`. */
export const restartWorkflowAgentRoute = defineRoute({
  method: 'post',
  path: '/v1/workflows/{id}/agents/{key}/restart',
  operationId: 'restartWorkflowAgent',
  summary: 'Restart one agent of a run',
  description: "Drops the agent's key from the run's journal, so its `agent()` call runs again the next time the script reaches it.",
  tag,
  authenticated: true,
  params: workflowAgentPathSchema,
  query: emptyQuerySchema,
  responses: { 202: { description: 'The agent will run again.', schema: restartAgentResponseSchema }, 400: badRequest, 401: unauthorized, 404: notFound, 409: conflict, 503: unavailable },
});

/** Every workflow route, in documentation order. */
export const workflowRoutes = [startWorkflowRoute, getWorkflowRoute, workflowEventsRoute, pauseWorkflowRoute, resumeWorkflowRoute, cancelWorkflowRoute, restartWorkflowAgentRoute] as const;

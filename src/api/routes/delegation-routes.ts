import type { Hono } from 'hono';
import {
  cancelResponseSchema,
  delegationStatusSchema,
  listDelegationsResponseSchema,
  resultResponseSchema,
  sendMessageResponseSchema,
  startDelegationResponseSchema,
} from '../../contracts/api';
import type { ApiDependencies } from '../api-dependencies';
import type { ApiEnv } from '../api-env';
import { idempotentUpdateId, requestFingerprint } from '../delegation-ids';
import { checkDelegationLimits } from '../request-limits';
import { ApiProblem, assertProviderConfigured, ProblemKind } from '../problem';
import { mountRoute, sendJson } from '../route-spec';
import {
  cancelDelegationRoute,
  delegationEventsRoute,
  getDelegationResultRoute,
  getDelegationRoute,
  listDelegationsRoute,
  sendMessageRoute,
  startDelegationRoute,
} from '../route-table';
import { waitCappedHeader } from '../wait-duration';
import { requestWait } from '../request-deadline';
import { delegationEventStream, eventStreamNotAvailable, servedByLambda } from '../delegation-event-stream';
import { EventStreamHub } from '../event-stream-hub';
import { eventStreamMinLifetimeMs } from '../../contracts/limits';

/** Links of a delegation, relative to the API root. */
function links(id: string): { self: string; result: string } {
  const self = `/v1/delegations/${encodeURIComponent(id)}`;
  return { self, result: `${self}/result` };
}

/** Mounts the `/v1/delegations` routes. */
export function mountDelegationRoutes(app: Hono<ApiEnv>, deps: ApiDependencies): void {
  const { delegations } = deps;
  // One per API process: the event streams' shared pollers and the per-tenant cap.
  const eventStreams = new EventStreamHub(delegations, deps.api.maxEventStreamsPerTenant);

  mountRoute(app, startDelegationRoute, async ({ body, query, headers, tenant, c }) => {
    assertProviderConfigured(deps.config, 'delegation');
    checkDelegationLimits(body, deps.config);
    const plan = await deps.plan(body, { tenant });
    if (!plan.ok) {
      const unknownSource = plan.suggestions !== undefined;
      const first = plan.errors[0];
      throw new ApiProblem(422, unknownSource ? ProblemKind.sourceNotFound : ProblemKind.invalidDelegation, unknownSource ? 'Unknown source' : 'The delegation cannot start', {
        detail: plan.errors.length === 1 && first ? `${first.field}: ${first.message}` : plan.errors.map((error) => `${error.field}: ${error.message}`).join('; '),
        errors: plan.errors.map((error) => ({ in: 'body' as const, field: error.field, message: error.message })),
        ...(plan.suggestions ? { suggestions: plan.suggestions } : {}),
      });
    }
    const idempotencyKey = headers['Idempotency-Key'];
    const started = await delegations.start({
      tenant,
      input: plan.input,
      ...(plan.source ? { source: plan.source } : {}),
      ...(idempotencyKey === undefined ? {} : { idempotency: { key: idempotencyKey, requestFingerprint: requestFingerprint(body) } }),
    });
    // The wait is measured from here: what the start took comes off a Lambda's remaining time.
    const { ms: waitMs, cappedNotice } = requestWait(c, query.wait, deps.api.maxWaitMs);
    const status = started.created ? 201 : 200;
    c.header('location', links(started.id).self);
    if (cappedNotice !== undefined) c.header(waitCappedHeader, cappedNotice);
    if (waitMs > 0) {
      const outcome = await delegations.result(tenant, started.id, waitMs);
      return sendJson(c, startDelegationResponseSchema, status, {
        id: started.id,
        runId: started.runId,
        created: started.created,
        state: outcome.done ? outcome.result.status : outcome.state,
        ...(outcome.done ? { result: outcome.result } : {}),
        links: links(started.id),
      });
    }
    const state = started.created ? 'running' : (await delegations.state(tenant, started.id)).state;
    return sendJson(c, startDelegationResponseSchema, status, { id: started.id, runId: started.runId, created: started.created, state, links: links(started.id) });
  });

  mountRoute(app, listDelegationsRoute, async ({ query, tenant, c }) => {
    const page = await delegations.list(tenant, query);
    return sendJson(c, listDelegationsResponseSchema, 200, page);
  });

  mountRoute(app, getDelegationRoute, async ({ params, tenant, c }) => {
    return sendJson(c, delegationStatusSchema, 200, await delegations.status(tenant, params.id));
  });

  mountRoute(app, getDelegationResultRoute, async ({ params, query, tenant, c }) => {
    const wait = requestWait(c, query.wait, deps.api.maxWaitMs);
    const outcome = await delegations.result(tenant, params.id, wait.ms);
    if (wait.cappedNotice !== undefined) c.header(waitCappedHeader, wait.cappedNotice);
    return sendJson(c, resultResponseSchema, outcome.done ? 200 : 202, outcome);
  });

  mountRoute(app, delegationEventsRoute, async ({ params, headers, tenant, c }) => {
    if (servedByLambda(c)) throw eventStreamNotAvailable(params.id);
    return delegationEventStream(c, {
      delegations,
      hub: eventStreams,
      tenant,
      id: params.id,
      lastEventId: headers['Last-Event-ID'],
      lifetimeMs: Math.max(deps.api.maxWaitMs, eventStreamMinLifetimeMs),
    });
  });

  mountRoute(app, cancelDelegationRoute, async ({ params, body, tenant, c }) => {
    return sendJson(c, cancelResponseSchema, 202, await delegations.cancel(tenant, params.id, body.reason));
  });

  mountRoute(app, sendMessageRoute, async ({ params, body, headers, tenant, c }) => {
    const key = headers['Idempotency-Key'];
    const accepted = await delegations.sendMessage(tenant, params.id, body.message, key === undefined ? undefined : idempotentUpdateId(tenant, key));
    return sendJson(c, sendMessageResponseSchema, 202, accepted);
  });
}

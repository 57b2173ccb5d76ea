import type { Hono } from 'hono';
import {
  approvalResponseSchema,
  approvalsResponseSchema,
  cancelSessionResponseSchema,
  sessionMessageResponseSchema,
  sessionResponseSchema,
  startSessionResponseSchema,
} from '../../contracts/session-api';
import type { ApiDependencies } from '../api-dependencies';
import { idempotentUpdateId, requestFingerprint } from '../delegation-ids';
import type { ApiEnv } from '../api-env';
import { ApiProblem, assertProviderConfigured, ProblemKind } from '../problem';
import { checkSessionLimits } from '../request-limits';
import { mountRoute, sendJson } from '../route-spec';
import { cancelSessionRoute, decideApprovalRoute, getSessionRoute, listApprovalsRoute, sendSessionMessageRoute, startSessionRoute } from '../route-table';

/** Mounts `/v1/sessions` and `/v1/approvals`. */
export function mountSessionRoutes(app: Hono<ApiEnv>, deps: ApiDependencies): void {
  const service = () => {
    if (!deps.sessions) {
      throw new ApiProblem(503, ProblemKind.notAvailableHere, 'Sessions are not available in this deployment', {
        detail: 'this API server was set up without a session service; delegations (/v1/delegations) are served',
      });
    }
    return deps.sessions;
  };
  mountRoute(app, startSessionRoute, async ({ body, headers, tenant, c }) => {
    assertProviderConfigured(deps.config, 'session');
    checkSessionLimits(body, deps.config);
    const key = headers['Idempotency-Key'];
    const started = await service().start(tenant, body, key === undefined ? undefined : { key, requestFingerprint: requestFingerprint(body) });
    const self = `/v1/sessions/${encodeURIComponent(started.id)}`;
    c.header('location', self);
    return sendJson(c, startSessionResponseSchema, started.created ? 201 : 200, { ...started, links: { self, messages: `${self}/messages` } });
  });
  mountRoute(app, getSessionRoute, async ({ params, tenant, c }) => sendJson(c, sessionResponseSchema, 200, await service().get(tenant, params.id)));
  mountRoute(app, sendSessionMessageRoute, async ({ params, body, headers, tenant, c }) => {
    const key = headers['Idempotency-Key'];
    return sendJson(c, sessionMessageResponseSchema, 202, await service().sendMessage(tenant, params.id, body.message, key === undefined ? undefined : idempotentUpdateId(tenant, key)));
  });
  mountRoute(app, cancelSessionRoute, async ({ params, body, tenant, c }) => sendJson(c, cancelSessionResponseSchema, 202, await service().cancel(tenant, params.id, body?.reason)));
  mountRoute(app, listApprovalsRoute, async ({ tenant, c }) => sendJson(c, approvalsResponseSchema, 200, { approvals: await service().listApprovals(tenant) }));
  mountRoute(app, decideApprovalRoute, async ({ params, body, tenant, c }) => sendJson(c, approvalResponseSchema, 200, await service().decide(tenant, params.id, body.decision, body.reason)));
}

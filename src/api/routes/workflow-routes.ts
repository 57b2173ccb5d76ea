import type { Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { eventStreamMinLifetimeMs, workflowEventPollMs } from '../../contracts/limits';
import {
  restartAgentResponseSchema,
  resumeWorkflowResponseSchema,
  startWorkflowResponseSchema,
  workflowControlResponseSchema,
  workflowDryRunResponseSchema,
  workflowStatusSchema,
  type StartWorkflowBody,
} from '../../contracts/workflow-api';
import { workflowRunMessageNames } from '../../contracts/workflow-run';
import type { ApiDependencies } from '../api-dependencies';
import type { ApiEnv } from '../api-env';
import { servedByLambda } from '../delegation-event-stream';
import { requestFingerprint } from '../delegation-ids';
import { ApiProblem, assertProviderConfigured, isApiProblem, ProblemKind } from '../problem';
import { checkSessionLimits } from '../request-limits';
import { mountRoute, sendJson } from '../route-spec';
import { resolveWait, waitCappedHeader } from '../wait-duration';
import { cancelWorkflowRoute, getWorkflowRoute, pauseWorkflowRoute, restartWorkflowAgentRoute, resumeWorkflowRoute, startWorkflowRoute, workflowEventsRoute } from '../workflow-route-specs';
import type { WorkflowRunService } from '../workflow-run-service';

/** Links of a workflow run, relative to the API root. */
export function workflowLinks(id: string): { self: string; events: string } {
  const self = `/v1/workflows/${encodeURIComponent(id)}`;
  return { self, events: `${self}/events` };
}

/** The planner (and with it the script sandbox) loads with the first start, not with the API (decision 0026). */
const planning = () => import('../workflow-run-planning.js');

/** Mounts the `/v1/workflows` routes. */
export function mountWorkflowRoutes(app: Hono<ApiEnv>, deps: ApiDependencies): void {
  const wired = () => {
    if (!deps.workflows) {
      throw new ApiProblem(501, ProblemKind.notAvailableHere, 'Workflow runs are not available on this server', { detail: 'this API server was set up without a workflow service; delegations (/v1/delegations) are served' });
    }
    return deps.workflows;
  };
  const startedBy = 'errand HTTP API';

  /** Plans a run from a body in the tenant's working directory (the script given, or found by name). */
  const plan = async (tenant: string, body: StartWorkflowBody, script?: { script: string; scriptName: string }, journalRef?: string) => {
    assertProviderConfigured(deps.config, 'delegation');
    checkSessionLimits({ timeBudget: body.timeBudget, costBudgetUsd: body.costBudgetUsd }, deps.config);
    const { workingDir, places } = await wired().placesFor(tenant);
    const resumed = journalRef === undefined ? undefined : { journalRef, blobs: wired().service.blobs };
    return (await planning()).planWorkflowRun(body, { config: deps.config, workingDir, places, startedBy }, script, resumed);
  };

  mountRoute(app, startWorkflowRoute, async ({ body, query, headers, tenant, c }) => {
    const { service } = wired();
    const planned = await plan(tenant, body);
    if (body.dryRun === true) return sendJson(c, workflowDryRunResponseSchema, 200, { dryRun: true, scriptName: planned.input.scriptName, projection: planned.projection });
    const key = headers['Idempotency-Key'];
    const started = await service.start({ tenant, input: planned.input, ...(key === undefined ? {} : { idempotency: { key, requestFingerprint: requestFingerprint(body) } }) });
    const { ms: waitMs, cappedNotice } = resolveWait(query.wait, deps.api.maxWaitMs);
    c.header('location', workflowLinks(started.id).self);
    if (cappedNotice !== undefined) c.header(waitCappedHeader, cappedNotice);
    const result = waitMs > 0 ? await service.result({ ...(await service.describeOwned(tenant, started.id)).description }, waitMs) : undefined;
    return sendJson(c, startWorkflowResponseSchema, started.created ? 201 : 200, {
      ...started,
      scriptName: planned.input.scriptName,
      ...(started.created ? { projection: planned.projection } : {}),
      ...(result ? { result } : {}),
      links: workflowLinks(started.id),
    });
  });

  mountRoute(app, getWorkflowRoute, async ({ params, tenant, c }) => {
    const { service } = wired();
    const run = await service.describeOwned(tenant, params.id);
    const { description } = run;
    const view = await service.view(params.id);
    return sendJson(c, workflowStatusSchema, 200, {
      id: params.id,
      temporalStatus: description.statusName,
      startedAt: (description.startTime ?? new Date(0)).toISOString(),
      closedAt: description.closeTime ? description.closeTime.toISOString() : null,
      ...view,
      ...(run.memo?.resumedFrom ? { resumedFrom: run.memo.resumedFrom } : {}),
      links: workflowLinks(params.id),
    });
  });

  mountRoute(app, workflowEventsRoute, async ({ params, tenant, c }) => {
    if (servedByLambda(c)) {
      throw new ApiProblem(501, ProblemKind.notAvailableHere, 'Event streams are not available on this deployment', { detail: `this API runs behind API Gateway + Lambda, which buffer responses; poll GET /v1/workflows/${encodeURIComponent(params.id)} instead` });
    }
    const { service } = wired();
    await service.describeOwned(tenant, params.id);
    return workflowEventStream(c, service, tenant, params.id, Math.max(deps.api.maxWaitMs, eventStreamMinLifetimeMs));
  });

  mountRoute(app, pauseWorkflowRoute, async ({ params, tenant, c }) => {
    const answer = await wired().service.signal(tenant, params.id, workflowRunMessageNames.pauseSignal, {});
    return sendJson(c, workflowControlResponseSchema, 202, { id: params.id, ...answer });
  });

  mountRoute(app, cancelWorkflowRoute, async ({ params, body, tenant, c }) => {
    const answer = await wired().service.signal(tenant, params.id, workflowRunMessageNames.cancelSignal, body.reason === undefined ? {} : { reason: body.reason });
    return sendJson(c, workflowControlResponseSchema, 202, { id: params.id, ...answer });
  });

  mountRoute(app, restartWorkflowAgentRoute, async ({ params, tenant, c }) => {
    await wired().service.restartAgent(tenant, params.id, params.key);
    return sendJson(c, restartAgentResponseSchema, 202, { id: params.id, key: params.key, restarted: true });
  });

  mountRoute(app, resumeWorkflowRoute, async ({ params, body, tenant, c }) => {
    const { service } = wired();
    const run = await service.describeOwned(tenant, params.id);
    if (run.description.statusName === 'RUNNING') {
      if (body.script !== undefined) {
        throw new ApiProblem(409, ProblemKind.conflict, 'A running run keeps its script', { detail: `workflow run ${params.id} is running; pause or cancel it, and resume it with the edited script once it has ended`, errors: [{ in: 'body', field: 'script', message: 'only a run that has ended can be resumed with an edited script' }] });
      }
      await service.signal(tenant, params.id, workflowRunMessageNames.resumeSignal, {});
      return sendJson(c, resumeWorkflowResponseSchema, 202, { id: params.id, action: 'signalled' });
    }
    // Ended: a new run from the ended run's journal, with its args and caps (and the edited script, when given).
    const ended = await service.result(run.description, 1_000);
    if (ended === undefined) {
      throw new ApiProblem(409, ProblemKind.conflict, 'The workflow run cannot be resumed', { detail: `workflow run ${params.id} ended (${run.description.statusName.toLowerCase()}) without a result, so it left no journal to resume from; start a new run instead` });
    }
    const input = await service.inputOf(run);
    const resumed: StartWorkflowBody = {
      script: body.script ?? input.script,
      args: input.args,
      concurrency: input.concurrency,
      maxAgents: input.maxAgents,
      ...(input.caps.tokenBudget !== undefined ? { tokenBudget: input.caps.tokenBudget } : {}),
      ...(input.caps.timeBudgetMs !== undefined ? { timeBudget: Math.ceil(input.caps.timeBudgetMs / 1_000) } : {}),
      ...(input.caps.costBudgetMicroUsd !== undefined ? { costBudgetUsd: input.caps.costBudgetMicroUsd / 1_000_000 } : {}),
    };
    const planned = await plan(tenant, resumed, { script: resumed.script ?? input.script, scriptName: input.scriptName }, ended.journalRef);
    const started = await service.start({ tenant, input: planned.input, journalRef: ended.journalRef, resumedFrom: params.id });
    c.header('location', workflowLinks(started.id).self);
    return sendJson(c, resumeWorkflowResponseSchema, 201, { id: params.id, action: 'started', started: { id: started.id, runId: started.runId, links: workflowLinks(started.id) }, projection: planned.projection });
  });
}

/** `GET /v1/workflows/{id}/events`: the view when it changed, `ended` with the result, bounded by `lifetimeMs`. */
function workflowEventStream(c: Context<ApiEnv>, service: WorkflowRunService, tenant: string, id: string, lifetimeMs: number): Response {
  return streamSSE(c, async (stream) => {
    const deadline = Date.now() + lifetimeMs;
    let last = '';
    try {
      while (!stream.aborted && !stream.closed) {
        const { description } = await service.describeOwned(tenant, id);
        const { view } = await service.view(id);
        const shown = view === null ? '' : JSON.stringify(view);
        if (view !== null && shown !== last) {
          await stream.writeSSE({ event: 'view', data: shown });
          last = shown;
        }
        if (description.statusName !== 'RUNNING') {
          const result = await service.result(description, 1_000);
          if (result) await stream.writeSSE({ event: 'ended', data: JSON.stringify(result) });
          else await stream.writeSSE({ event: 'error', data: JSON.stringify({ detail: `the run ended (${description.statusName.toLowerCase()}) without a result` }) });
          return;
        }
        if (Date.now() >= deadline) {
          await stream.write(': the stream closes after its longest life; reconnect to continue\n\n');
          return;
        }
        await stream.sleep(workflowEventPollMs);
      }
    } catch (error) {
      if (stream.aborted || stream.closed) return;
      const detail = isApiProblem(error) ? (error.options.detail ?? error.title) : 'the server could not look at the run; reconnect to try again';
      await stream.writeSSE({ event: 'error', data: JSON.stringify({ detail }) }).catch(() => undefined);
    }
  });
}

import type { ApiDependencies } from './api-dependencies';
import { delegationTasks } from './mcp-delegation-tasks';
import { eitherTasks, runStatusMessage, workflowRunTasks } from './mcp-workflow-run-tasks';
import { progressMessage } from './mcp-progress';
import type { StatelessMcpServices } from './routes/mcp-stateless-route';
import type { SessionService } from './session-service';
import type { LegacySessionTasks } from './mcp-legacy-tasks';
import type { McpTaskBackend } from './mcp-tasks-extension';

/** What differs between the places that serve MCP 2026-07-28 (`/v1/mcp`, `errand mcp` over stdio). */
export interface StatelessMcpPlace {
  /** The session service (a place without one throws here, saying so). */
  sessions(): SessionService;
  /** Starts a session for a call that names none (the API caps a tenant's sessions; `errand mcp` starts it as its own). */
  startSession(tenant: string): Promise<string>;
  /** Why a failed call failed, as the client should read it. */
  describeError(tenant: string, sessionId: string | undefined, error: unknown): string;
  /** Whether the Tasks extension is served (it needs the session service). */
  tasks: boolean;
  /**
   * Whether a request id names one call (HTTP: a retried request sends it again and is the same call). Not
   * over stdio: there is no retry, and a new `errand mcp` process of the same session numbers from 0 again.
   */
  requestIdsNameCalls: boolean;
}

/**
 * errand's side of a 2026-07-28 MCP server (decision 0042), per tenant: tool calls in a session, stored
 * texts, the tool policy, a foreground call's progress (the subagent or workflow run the session waits for) and the Tasks
 * extension over delegations and workflow runs. One definition for both transports: the API's `/v1/mcp` and `errand mcp`'s
 * stdio (in process), so a client sees the same server on either.
 */
export function statelessMcpServices(deps: ApiDependencies, resolveParts: StatelessMcpServices['resolveParts'], place: StatelessMcpPlace): StatelessMcpServices {
  const service = place.sessions;
  return {
    startSession: place.startSession,
    callTool: (tenant, sessionId, input, requestId, waitMs) => service().callTool(tenant, sessionId, input, { ...(place.requestIdsNameCalls ? { requestId } : {}), ...(waitMs !== undefined ? { waitMs } : {}) }),
    resolveParts,
    describeError: place.describeError,
    toolPolicy: deps.config.toolPolicy,
    progressOf: foregroundProgressOf(deps, service),
    tasks: place.tasks
      ? (tenant) => {
          const tasks = mcpTasksOf(deps, service, tenant);
          return { backend: tasks.backend, delegationOf: async (sessionId, taskId) => (await tasks.sessionTasks(sessionId)).find((task) => task.taskId === taskId)?.workflowId };
        }
      : undefined,
  };
}

/**
 * What a foreground call's progress notification says now, for both protocol revisions: the subagent (its
 * turns, cost and last words) or the workflow run (its agents by state) the session waits for, if any.
 */
export function foregroundProgressOf(deps: Pick<ApiDependencies, 'delegations' | 'workflows'>, service: () => SessionService): (tenant: string, sessionId: string) => Promise<string | undefined> {
  return async (tenant, sessionId) => {
    const tasks = (await service().get(tenant, sessionId)).peek.tasks ?? [];
    const waitedFor = tasks.filter((task) => task.workflowId !== undefined && (task.state === 'running' || task.state === 'starting' || task.state === 'waiting_approval')).at(-1);
    if (waitedFor?.workflowId === undefined) return undefined;
    // A task is a delegation (delegate) or a workflow run (run_workflow): a run reports its view.
    if (waitedFor.kind === 'workflow') {
      if (!deps.workflows) return undefined;
      await deps.workflows.service.describeOwned(tenant, waitedFor.workflowId);
      const { view } = await deps.workflows.service.view(waitedFor.workflowId);
      return view ? `${view.id} ${runStatusMessage(view)}` : undefined;
    }
    return progressMessage(await deps.delegations.status(tenant, waitedFor.workflowId));
  };
}

/**
 * A tenant's MCP tasks, for both protocol revisions: by id, a delegation (delegate) or a workflow run
 * (run_workflow); and a session's own tasks, errand's task id beside the delegation's (or run's) once it has one.
 */
export function mcpTasksOf(deps: Pick<ApiDependencies, 'delegations' | 'sessions' | 'workflows'>, sessions: () => SessionService, tenant: string): { backend: McpTaskBackend; sessionTasks(sessionId: string): Promise<Array<{ taskId: string; workflowId: string }>> } {
  return {
    backend: deps.workflows
      ? eitherTasks(delegationTasks(tenant, deps.delegations, deps.sessions), workflowRunTasks(tenant, deps.workflows.service))
      : delegationTasks(tenant, deps.delegations, deps.sessions),
    sessionTasks: async (sessionId) =>
      ((await sessions().get(tenant, sessionId)).peek.tasks ?? []).flatMap((task) => (task.workflowId === undefined ? [] : [{ taskId: task.taskId, workflowId: task.workflowId }])),
  };
}

/** The 2025-11-25 tasks of one MCP session (mcp-legacy-tasks.ts), where the session service serves them. */
export function legacySessionTasks(deps: Pick<ApiDependencies, 'delegations' | 'sessions' | 'workflows'>, tenant: string, sessionId: string, resultWaitMs?: number): Omit<LegacySessionTasks, 'load'> | undefined {
  const sessions = deps.sessions;
  if (!sessions) return undefined;
  const tasks = mcpTasksOf(deps, () => sessions, tenant);
  return { backend: tasks.backend, sessionTasks: () => tasks.sessionTasks(sessionId), ...(resultWaitMs !== undefined ? { resultWaitMs } : {}) };
}

import type { Context, Hono } from 'hono';
import type * as McpServerParts from '../mcp-server-parts';
import { createBlobStore } from '../../activities/blob-store-factory';
import type { ApiDependencies } from '../api-dependencies';
import type { ApiEnv } from '../api-env';
import { remainingWaitMs } from '../request-deadline';
import { mcpDeleteRoute, mcpPostRoute, mcpStreamRoute } from '../mcp-route-specs';
import { servedByLambda } from '../delegation-event-stream';
import { mcpSessionsRetryAfterSeconds, eventStreamMinLifetimeMs } from '../../contracts/limits/api';
import { mcpNoticePollIntervalMs } from '../../contracts/limits/workflow';
import { createLogger } from '../../observability/json-logger';
import { describeToolFailure } from '../mcp-tool-failure';
import { storedTextReader } from '../mcp-stored-text';
import { ApiProblem, ProblemKind } from '../problem';
import { statelessMcpServing } from './mcp-stateless-route';
import { foregroundProgressOf, legacySessionTasks, statelessMcpServices } from '../mcp-stateless-services';
import { waitsInForeground } from '../../domain/mcp-session-tools';
import { mountRoute } from '../route-spec';
import type { SessionService } from '../session-service';

/**
 * The MCP server parts (the MCP SDK and, through it, ajv), loaded by the first MCP request and then kept:
 * every other route, and a Lambda's cold start, does without them (decision 0026).
 */
let mcpParts: Promise<typeof McpServerParts> | undefined;

function loadMcpParts(): Promise<typeof McpServerParts> {
  mcpParts ??= import('../mcp-server-parts.js');
  return mcpParts;
}

/** Methods answered without the session: they hold nothing of it. */
const sessionFreeMethods = new Set(['tools/list', 'ping']);

/** Whether a JSON-RPC message needs the session workflow (a tool call, a reconnecting initialize). */
function usesSession(message: { method?: unknown }): boolean {
  if (typeof message.method !== 'string') return false;
  return !sessionFreeMethods.has(message.method) && !message.method.startsWith('notifications/');
}

/** How long a tool call waits for its result (request-deadline.ts). */
function toolCallWaitMs(c: Context<ApiEnv>, maxWaitMs: number): number {
  return remainingWaitMs(c, maxWaitMs).ms;
}

/**
 * Mounts `/v1/mcp`: errand's orchestration tools over MCP Streamable HTTP (SEMANTICS §6), with the API's keys
 * and tenants. The MCP session is a session workflow and its id is the `Mcp-Session-Id`, so nothing about a
 * session lives in this process: each request gets an MCP server of its own over that workflow, and any
 * API process (or a restarted one) serves the next request of the same session.
 */
export function mountMcpRoutes(app: Hono<ApiEnv>, deps: ApiDependencies): void {
  const shared = mcpRouteParts(deps);
  mountMcpPost(app, deps, shared);
  mountMcpStream(app, deps, shared);
  mountMcpDelete(app, shared);
}

/** What the MCP routes share: the session service, the reader of stored texts, the session checks and starts. */
function mcpRouteParts(deps: ApiDependencies) {
  const service = (): SessionService => {
    if (!deps.sessions) {
      throw new ApiProblem(503, ProblemKind.notAvailableHere, 'MCP sessions are not available in this deployment', {
        detail: 'this API server was set up without a session service; delegations (/v1/delegations) are served',
      });
    }
    return deps.sessions;
  };
  const resolveParts = storedTextReader(createBlobStore(deps.config));

  const log = createLogger('api');
  const describeError = (tenant: string, sessionId: string) => (error: unknown): string => describeToolFailure(error, log, { tenant, sessionId });

  /** A running session of the tenant, or 404 (the MCP answer that tells a client to initialize anew): one describe. */
  const running = async (tenant: string, id: string): Promise<void> => {
    if (!(await service().isRunning(tenant, id))) throw new ApiProblem(404, ProblemKind.notFound, 'No such MCP session', { detail: `MCP session ${id} has ended; initialize a new one` });
  };

  /** A new MCP session, unless the tenant already runs as many as the server allows. */
  const startSession = async (tenant: string): Promise<string> => {
    // No provider check: an MCP session has no model of its own (the client's model calls the tools); each
    // delegate is planned on a worker, with the worker's providers, and refused there if none can run it.
    const most = deps.api.maxMcpSessionsPerTenant;
    const started = await service().startMcpSession(tenant, most);
    if ('held' in started) {
      throw new ApiProblem(429, ProblemKind.tooManyMcpSessions, 'Too many MCP sessions', {
        detail: `this tenant already has ${started.held} MCP sessions running, the most this server allows (ERRAND_API_MAX_MCP_SESSIONS=${most}); reconnect to one with its Mcp-Session-Id, end one with DELETE /v1/mcp, or wait for an idle one to end`,
        headers: { 'retry-after': String(mcpSessionsRetryAfterSeconds) },
      });
    }
    return started.id;
  };
  return { service, resolveParts, log, describeError, running, startSession };
}

type McpRouteParts = ReturnType<typeof mcpRouteParts>;

/** `POST /v1/mcp`: a 2026-07-28 request is served statelessly; a 2025-11-25 one over its session's workflow. */
function mountMcpPost(app: Hono<ApiEnv>, deps: ApiDependencies, { service, resolveParts, log, describeError, running, startSession }: McpRouteParts): void {
  /** What a 2025-11-25 foreground call's progress says (the same words as at 2026-07-28). */
  const progressOf = foregroundProgressOf(deps, service);
  /** The 2026-07-28 leg (stateless, decision 0042), made at the first such request. */
  let stateless: ReturnType<typeof statelessMcpServing> | undefined;
  const statelessLeg = (parts: typeof McpServerParts) =>
    (stateless ??= statelessMcpServing(
      parts,
      statelessMcpServices(deps, resolveParts, {
        sessions: service,
        startSession,
        describeError: (tenant, sessionId, error) => describeToolFailure(error, log, { tenant, sessionId }),
        tasks: deps.sessions !== undefined,
        requestIdsNameCalls: true,
      }),
    ));

  mountRoute(app, mcpPostRoute, async ({ body, headers, tenant, c }) => {
    // A request of revision 2026-07-28 carries its version in `_meta` (no initialize, no session header): the
    // SDK's own test tells it from a 2025-11-25 one, which is served below exactly as before.
    const parts = await loadMcpParts();
    if (!(await parts.isLegacyRequest(c.req.raw, body))) {
      return statelessLeg(parts)(acceptingJson(c.req.raw), body, { tenant, waitMs: toolCallWaitMs(c, deps.api.maxWaitMs) });
    }
    const given = headers['Mcp-Session-Id'];
    const messages = Array.isArray(body) ? body : [body];
    const initializing = messages.some((message) => message.method === 'initialize');
    let sessionId: string;
    if (given !== undefined) {
      // tools/list, ping and notifications are answered from this process alone: they hold nothing of the
      // session's. Only a message that uses the session (a tool call, a reconnecting initialize) looks it up.
      if (messages.some(usesSession)) await running(tenant, given);
      sessionId = given;
    } else if (initializing) {
      sessionId = await startSession(tenant);
    } else {
      throw new ApiProblem(400, ProblemKind.invalidRequest, 'No MCP session', {
        detail: 'send the Mcp-Session-Id header that the initialize answer gave, or initialize first',
        errors: [{ in: 'header', field: 'Mcp-Session-Id', message: 'required for every message but initialize' }],
      });
    }
    const { createErrandMcpServer, WebStandardStreamableHTTPServerTransport: Transport } = parts;
    // A call waits at most the API's longest wait (and what a Lambda has left), then answers "still running".
    const waitMs = toolCallWaitMs(c, deps.api.maxWaitMs);
    // A foreground call that asked for progress is answered as an event stream that carries it, where responses
    // are not buffered (not behind API Gateway + Lambda) and the client takes a stream; everything else is JSON.
    const streamed = !servedByLambda(c) && messages.length === 1 && wantsProgress(messages[0]) && /\btext\/event-stream\b/.test(c.req.header('accept') ?? '');
    const server = createErrandMcpServer({
      sessionId,
      reconnect: `the Mcp-Session-Id header ${sessionId}`,
      callTool: (input, requestId) => service().callTool(tenant, sessionId, input, { requestId, waitMs, checked: true }),
      resolveParts,
      describeError: describeError(tenant, sessionId),
      toolPolicy: deps.config.toolPolicy,
      tasks: legacySessionTasks(deps, tenant, sessionId, waitMs),
      ...(streamed ? { progressOf: () => progressOf(tenant, sessionId) } : {}),
    });
    // Stateless transport: the session is the workflow, named by the header this route sets on every answer.
    const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: !streamed });
    await server.connect(transport);
    let answer: Response;
    try {
      answer = await transport.handleRequest(acceptingJson(c.req.raw), { parsedBody: body });
    } catch (error) {
      await server.close().catch(() => undefined);
      throw error;
    }
    const answerHeaders = new Headers(answer.headers);
    answerHeaders.set('mcp-session-id', sessionId);
    if (!streamed || answer.body === null) {
      const text = await answer.text().finally(() => server.close().catch(() => undefined));
      return new Response(text, { status: answer.status, headers: answerHeaders });
    }
    // The server lives as long as its stream: it closes when the answer has been sent or the client went away.
    const close = () => void server.close().catch(() => undefined);
    const streamBody = answer.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: close }));
    c.req.raw.signal.addEventListener('abort', close, { once: true });
    return new Response(streamBody, { status: answer.status, headers: answerHeaders });
  });
}

/** Whether a JSON-RPC message is a foreground `delegate` or `run_workflow` call that asked for progress. */
function wantsProgress(message: unknown): boolean {
  const request = message as { method?: unknown; params?: { name?: unknown; arguments?: { async?: unknown }; _meta?: { progressToken?: unknown }; task?: unknown } };
  if (request.method !== 'tools/call' || request.params?._meta?.progressToken === undefined || request.params.task !== undefined) return false;
  return waitsInForeground(request.params.name, request.params.arguments);
}

/** `GET /v1/mcp`: a session's notices as a server-sent event stream (not where responses are buffered). */
function mountMcpStream(app: Hono<ApiEnv>, deps: ApiDependencies, { service, resolveParts, describeError, running }: McpRouteParts): void {
  /** Open notice streams per tenant (capped like the delegation event streams, ERRAND_API_MAX_EVENT_STREAMS). */
  const openStreams = new Map<string, number>();

  mountRoute(app, mcpStreamRoute, async ({ headers, tenant, c }) => {
    // Where responses are buffered (API Gateway + Lambda) a stream would never arrive: 405 tells an MCP client there is none.
    if (servedByLambda(c)) {
      throw new ApiProblem(405, ProblemKind.methodNotAllowed, 'No server-to-client stream here', {
        detail: 'this deployment buffers responses, so GET /v1/mcp has no stream; notices come with the next tool result',
        headers: { allow: 'POST, DELETE' },
      });
    }
    const id = headers['Mcp-Session-Id'];
    if (id === undefined) {
      throw new ApiProblem(400, ProblemKind.invalidRequest, 'No MCP session', {
        detail: 'send the Mcp-Session-Id header of the session whose notices to stream',
        errors: [{ in: 'header', field: 'Mcp-Session-Id', message: 'required' }],
      });
    }
    if (!/\btext\/event-stream\b|\*\/\*/.test(c.req.header('accept') ?? '')) {
      throw new ApiProblem(406, ProblemKind.invalidRequest, 'Not acceptable', { detail: 'GET /v1/mcp answers text/event-stream; send Accept: text/event-stream' });
    }
    await running(tenant, id);
    const held = openStreams.get(tenant) ?? 0;
    if (held >= deps.api.maxEventStreamsPerTenant) {
      throw new ApiProblem(429, ProblemKind.tooManyEventStreams, 'Too many open event streams', {
        detail: `this tenant already has ${held} MCP streams open, the most this server allows (ERRAND_API_MAX_EVENT_STREAMS=${deps.api.maxEventStreamsPerTenant}); notices also come with every tool result`,
        headers: { 'retry-after': '5' },
      });
    }
    openStreams.set(tenant, held + 1);
    const { createErrandMcpServer, notifyNotices, WebStandardStreamableHTTPServerTransport: Transport } = await loadMcpParts();
    const server = createErrandMcpServer({
      sessionId: id,
      reconnect: `the Mcp-Session-Id header ${id}`,
      callTool: (input, requestId) => service().callTool(tenant, id, input, { requestId, waitMs: toolCallWaitMs(c, deps.api.maxWaitMs) }),
      resolveParts,
      describeError: describeError(tenant, id),
      toolPolicy: deps.config.toolPolicy,
    });
    const transport = new Transport({ sessionIdGenerator: undefined });
    let stopNotices = (): void => undefined;
    let closed = false;
    const close = (): void => {
      if (closed) return;
      closed = true;
      clearTimeout(lifetime);
      stopNotices();
      openStreams.set(tenant, Math.max(0, (openStreams.get(tenant) ?? 1) - 1));
      void server.close().catch(() => undefined);
    };
    // The stream ends after the server's longest wait; the client opens it again (no state is lost: notices wait in the session).
    const lifetime = setTimeout(close, Math.max(deps.api.maxWaitMs, eventStreamMinLifetimeMs));
    c.req.raw.signal.addEventListener('abort', close, { once: true });
    try {
      await server.connect(transport);
      const answer = await transport.handleRequest(c.req.raw);
      if (answer.status !== 200) {
        close();
        return answer;
      }
      stopNotices = notifyNotices(server, () => service().pendingNotices(tenant, id), resolveParts, mcpNoticePollIntervalMs);
      const answerHeaders = new Headers(answer.headers);
      answerHeaders.set('mcp-session-id', id);
      return new Response(answer.body, { status: 200, headers: answerHeaders });
    } catch (error) {
      close();
      throw error;
    }
  });
}

/** `DELETE /v1/mcp`: the MCP client ends its session (the workflow is cancelled with everything under it). */
function mountMcpDelete(app: Hono<ApiEnv>, { service, running }: McpRouteParts): void {
  mountRoute(app, mcpDeleteRoute, async ({ headers, tenant, c }) => {
    const id = headers['Mcp-Session-Id'];
    if (id === undefined) {
      throw new ApiProblem(400, ProblemKind.invalidRequest, 'No MCP session', {
        detail: 'send the Mcp-Session-Id header of the session to end',
        errors: [{ in: 'header', field: 'Mcp-Session-Id', message: 'required' }],
      });
    }
    await running(tenant, id);
    await service().cancel(tenant, id, `ended by its MCP client (${tenant})`);
    return c.body(null, 204);
  });
}

/**
 * The request as the MCP transport reads it: one with no Accept header (or one of any type) accepts any answer (RFC 9110), so
 * it is given the Accept the transport wants (it answers JSON here); an Accept that names other types is kept,
 * and the transport refuses it with 406 as the protocol says.
 */
function acceptingJson(request: Request): Request {
  const accept = request.headers.get('accept')?.trim() ?? '';
  if (accept !== '' && accept !== '*/*') return request;
  const headers = new Headers(request.headers);
  headers.set('accept', 'application/json, text/event-stream');
  // The body was read already and goes to the transport parsed: the copy carries none.
  return new Request(request.url, { method: request.method, headers, signal: request.signal });
}

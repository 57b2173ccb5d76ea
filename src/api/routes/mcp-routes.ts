import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Hono } from 'hono';
import { createBlobStore } from '../../activities/blob-store-factory';
import type { ApiDependencies } from '../api-dependencies';
import type { ApiEnv } from '../api-env';
import { mcpDeleteRoute, mcpPostRoute, mcpStreamRoute } from '../mcp-route-specs';
import { createErrandMcpServer, notifyNotices } from '../mcp-session-server';
import { servedByLambda } from '../delegation-event-stream';
import { mcpNoticePollIntervalMs, eventStreamMinLifetimeMs } from '../../contracts/limits';
import { storedTextReader } from '../mcp-stored-text';
import { ApiProblem, assertProviderConfigured, ProblemKind } from '../problem';
import { mountRoute } from '../route-spec';
import type { SessionService } from '../session-service';

/**
 * Mounts `/v1/mcp`: errand's orchestration tools over MCP Streamable HTTP (SEMANTICS §6), with the API's keys
 * and tenants. The MCP session is a session workflow and its id is the `Mcp-Session-Id`, so nothing about a
 * session lives in this process: each request gets an MCP server of its own over that workflow, and any
 * API process (or a restarted one) serves the next request of the same session.
 */
export function mountMcpRoutes(app: Hono<ApiEnv>, deps: ApiDependencies): void {
  const service = (): SessionService => {
    if (!deps.sessions) {
      throw new ApiProblem(503, ProblemKind.notAvailableHere, 'MCP sessions are not available in this deployment', {
        detail: 'this API server was set up without a session service; delegations (/v1/delegations) are served',
      });
    }
    return deps.sessions;
  };
  const resolveParts = storedTextReader(createBlobStore(deps.config));

  /** A running session of the tenant, or 404 (the MCP answer that tells a client to initialize anew). */
  const running = async (tenant: string, id: string): Promise<void> => {
    const found = await service().get(tenant, id);
    if (!found.running) throw new ApiProblem(404, ProblemKind.notFound, 'No such MCP session', { detail: `MCP session ${id} has ended; initialize a new one` });
  };

  mountRoute(app, mcpPostRoute, async ({ body, headers, tenant, c }) => {
    const given = headers['Mcp-Session-Id'];
    const initializing = (Array.isArray(body) ? body : [body]).some((message) => message.method === 'initialize');
    let sessionId: string;
    if (given !== undefined) {
      await running(tenant, given);
      sessionId = given;
    } else if (initializing) {
      assertProviderConfigured(deps.config, 'session');
      sessionId = (await service().start(tenant, { mcp: true })).id;
    } else {
      throw new ApiProblem(400, ProblemKind.invalidRequest, 'No MCP session', {
        detail: 'send the Mcp-Session-Id header that the initialize answer gave, or initialize first',
        errors: [{ in: 'header', field: 'Mcp-Session-Id', message: 'required for every message but initialize' }],
      });
    }
    const server = createErrandMcpServer({
      sessionId,
      reconnect: `the Mcp-Session-Id header ${sessionId}`,
      callTool: (input) => service().callTool(tenant, sessionId, input),
      resolveParts,
      describeError: (error) => (error instanceof Error ? error.message : String(error)),
      toolPolicy: deps.config.toolPolicy,
    });
    // Stateless transport: the session is the workflow, named by the header this route sets on every answer.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      const answer = await transport.handleRequest(c.req.raw, { parsedBody: body });
      const answerHeaders = new Headers(answer.headers);
      answerHeaders.set('mcp-session-id', sessionId);
      return new Response(await answer.text(), { status: answer.status, headers: answerHeaders });
    } finally {
      await server.close().catch(() => undefined);
    }
  });


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
    const server = createErrandMcpServer({
      sessionId: id,
      reconnect: `the Mcp-Session-Id header ${id}`,
      callTool: (input) => service().callTool(tenant, id, input),
      resolveParts,
      describeError: (error) => (error instanceof Error ? error.message : String(error)),
      toolPolicy: deps.config.toolPolicy,
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
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

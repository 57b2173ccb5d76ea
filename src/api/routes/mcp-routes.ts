import type { Hono } from 'hono';
import type * as McpServerParts from '../mcp-server-parts';
import { createBlobStore } from '../../activities/blob-store-factory';
import type { ApiDependencies } from '../api-dependencies';
import type { ApiEnv } from '../api-env';
import { mcpDeleteRoute, mcpPostRoute } from '../mcp-route-specs';
import { storedTextReader } from '../mcp-stored-text';
import { ApiProblem, assertProviderConfigured, ProblemKind } from '../problem';
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
    const { createErrandMcpServer, WebStandardStreamableHTTPServerTransport: Transport } = await loadMcpParts();
    const server = createErrandMcpServer({
      sessionId,
      reconnect: `the Mcp-Session-Id header ${sessionId}`,
      callTool: (input) => service().callTool(tenant, sessionId, input),
      resolveParts,
      describeError: (error) => (error instanceof Error ? error.message : String(error)),
    });
    // Stateless transport: the session is the workflow, named by the header this route sets on every answer.
    const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
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

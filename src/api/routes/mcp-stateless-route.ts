import type * as McpServerParts from '../mcp-server-parts';
import type { StatelessMcpBackend } from '../mcp-stateless-server';
import type { CallToolInput, CallToolResult } from '../../contracts/mcp-session';
import type { TextPart } from '../../contracts/agent-wire';
import type { ToolPolicyConfig } from '../../tools/tool-policy';
import { createLogger } from '../../observability/json-logger';

/** What the stateless (2026-07-28) leg of `POST /v1/mcp` needs of the route, per tenant. */
export interface StatelessMcpServices {
  startSession(tenant: string): Promise<string>;
  /** `waitMs`: how long a call waits for its result before it answers "still running" (undefined: until it ends). */
  callTool(tenant: string, sessionId: string, input: CallToolInput, requestId: string | number, waitMs: number | undefined): Promise<CallToolResult>;
  resolveParts(parts: TextPart[]): Promise<string>;
  describeError(tenant: string, sessionId: string | undefined, error: unknown): string;
  toolPolicy: ToolPolicyConfig | undefined;
  /** A foreground call's progress message in a tenant's session. */
  progressOf?: ((tenant: string, sessionId: string) => Promise<string | undefined>) | undefined;
  /** The Tasks extension for a tenant, where it is served. */
  tasks?: ((tenant: string) => NonNullable<StatelessMcpBackend['tasks']>) | undefined;
}

/** Who a request is for (over HTTP handed to the per-request server through the SDK's `authInfo`, a pass-through). */
export interface RequestParty {
  tenant: string;
  /** How long a tool call waits (undefined: until it ends, as over stdio). */
  waitMs: number | undefined;
  /** The session a call that names none uses (`errand mcp --session`); without it such a call starts one. */
  defaultSession?: string | undefined;
}

/** errand's 2026-07-28 server backend for one party: the services bound to its tenant (HTTP and stdio alike). */
export function statelessBackend(services: StatelessMcpServices, party: RequestParty): StatelessMcpBackend {
  const { tenant, waitMs } = party;
  return {
    startSession: () => services.startSession(tenant),
    callTool: (sessionId, input, requestId) => services.callTool(tenant, sessionId, input, requestId, waitMs),
    resolveParts: services.resolveParts,
    describeError: (sessionId, error) => services.describeError(tenant, sessionId, error),
    toolPolicy: services.toolPolicy,
    tasks: services.tasks?.(tenant),
    progressOf: services.progressOf ? (sessionId) => services.progressOf?.(tenant, sessionId) ?? Promise.resolve(undefined) : undefined,
    defaultSession: party.defaultSession,
  };
}

const log = createLogger('api');

/**
 * The 2026-07-28 leg of `POST /v1/mcp` (decision 0042): the MCP SDK's stateless handler, made once per process,
 * which builds a server per request over errand's sessions. Nothing about a client is kept here: the request
 * names its session (a handle in the tool's arguments or `_meta`), so any API process, or the Lambda, answers it.
 */
export function statelessMcpServing(parts: typeof McpServerParts, services: StatelessMcpServices): (request: Request, body: unknown, party: RequestParty) => Promise<Response> {
  const handler = parts.createMcpHandler(
    (ctx) => {
      const party = ctx.authInfo?.extra as RequestParty | undefined;
      if (!party) throw new Error('the stateless MCP handler was called without the request\'s tenant');
      return parts.createStatelessErrandServer(statelessBackend(services, party));
    },
    // A 2025-11-25 request never reaches this handler (the route serves it with the first-generation transport).
    { legacy: 'reject', onerror: (error) => log.warn('MCP request refused or failed (2026-07-28)', { error: error.message }) },
  );
  return (request, body, party) =>
    handler.fetch(request, { parsedBody: body, authInfo: { token: '', clientId: party.tenant, scopes: [], extra: { ...party } } });
}

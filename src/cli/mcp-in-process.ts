import type { Server as ModernServer } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { createBlobStore } from '../activities/blob-store-factory';
import type { ApiDependencies } from '../api/api-dependencies';
import { storedTextReader } from '../api/mcp-stored-text';
import { createErrandMcpServer, notifyNotices } from '../api/mcp-session-server';
import { createStatelessErrandServer } from '../api/mcp-stateless-server';
import { legacySessionTasks, statelessMcpServices } from '../api/mcp-stateless-services';
import { statelessBackend } from '../api/routes/mcp-stateless-route';
import { describeToolFailure } from '../api/mcp-tool-failure';
import { mcpNoticePollIntervalMs } from '../contracts/limits/workflow';
import { createLogger } from '../observability/json-logger';
import type { CliIo } from './cli-io';

/** What `errand mcp` serves in process: the tenant, the session it reconnects to (if any) and its label. */
export interface InProcessMcp {
  deps: ApiDependencies;
  tenant: string;
  /** A running session given with `--session` (checked by the caller). */
  given: string | undefined;
  label: string | undefined;
}

/**
 * `errand mcp` without an API: MCP over stdio, straight to Temporal, at either protocol revision. The MCP
 * SDK's stdio entry (`serveStdio`) reads the client's opening message and pins the connection to its era
 * as the stdio binding says: an `initialize` (or a message without the `_meta` version claim) is a
 * 2025-11-25 client, served by the first SDK generation's server over one session, started (or reconnected)
 * at that moment, with its notices also sent as logging notifications; `server/discover` or a request
 * claiming 2026-07-28 is served by the same stateless server as `/v1/mcp` (decision 0042), where each call
 * names its session (`--session` is the one a call naming none uses), with progress and the Tasks
 * extension. Resolves with the exit status when the client closes stdin.
 */
export async function serveMcpInProcess(mcp: InProcessMcp, io: CliIo): Promise<number> {
  const { deps, tenant, given, label } = mcp;
  const sessions = deps.sessions;
  if (!sessions) throw new Error('the session service is not configured');
  const resolveParts = storedTextReader(createBlobStore(deps.config));
  const log = createLogger('mcp');
  const startSession = async (): Promise<string> => (await sessions.start(tenant, { mcp: true, ...(label ? { label } : {}) })).id;
  let exitCode = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolveFinished) => (finish = resolveFinished));

  const legacyServer = async () => {
    let sessionId: string;
    try {
      if (given !== undefined) {
        sessionId = given;
        io.stderr(`errand mcp: reconnected to session ${sessionId}\n`);
      } else {
        sessionId = await startSession();
        io.stderr(`errand mcp: session ${sessionId} started (reconnect with --session ${sessionId})\n`);
      }
    } catch (error) {
      // As before the handshake could choose a revision: a session that cannot start ends the command.
      io.stderr(`errand mcp: ${error instanceof Error ? error.message : String(error)}\n`);
      exitCode = 1;
      finish();
      throw error;
    }
    const server = createErrandMcpServer({
      sessionId,
      reconnect: `errand mcp --session ${sessionId}`,
      callTool: (input) => sessions.callTool(tenant, sessionId, input),
      resolveParts,
      // An ApiProblem's title and detail (e.g. why the session refused the call); anything else is logged to stderr.
      describeError: (error) => describeToolFailure(error, log, { tenant, sessionId }),
      toolPolicy: deps.config.toolPolicy,
      tasks: legacySessionTasks(deps, tenant, sessionId),
      // stdio carries notifications during a call: a foreground delegate or run_workflow reports its progress.
      progressOf: () => services.progressOf?.(tenant, sessionId) ?? Promise.resolve(undefined),
    });
    const stopNotices = notifyNotices(server, () => sessions.pendingNotices(tenant, sessionId), resolveParts, mcpNoticePollIntervalMs);
    server.onclose = () => stopNotices();
    // The SDK's stdio entry connects what it is given and closes it: the first generation's server does both
    // as the second's does (the entry touches nothing else of a 2025-era instance).
    return server as unknown as ModernServer;
  };

  const services = statelessMcpServices(deps, resolveParts, {
    sessions: () => sessions,
    startSession: async () => {
      const id = await startSession();
      io.stderr(`errand mcp: session ${id} started for a call that named none (2026-07-28)\n`);
      return id;
    },
    describeError: (_tenant, sessionId, error) => describeToolFailure(error, log, { tenant, ...(sessionId ? { sessionId } : {}) }),
    tasks: true,
    requestIdsNameCalls: false,
  });
  const modernServer = () => createStatelessErrandServer(statelessBackend(services, { tenant, waitMs: undefined, defaultSession: given }));

  const handle = serveStdio(({ era }) => (era === 'modern' ? modernServer() : legacyServer()), {
    transport: new StdioServerTransport(),
    onerror: (error) => log.warn('MCP message refused or failed', { error: error.message }),
  });
  // The client ends the connection by closing stdin; a session stays for a reconnect until its idle timeout.
  process.stdin.once('end', () => finish());
  await finished;
  await handle.close().catch(() => undefined);
  return exitCode;
}

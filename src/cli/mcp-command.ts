import { parseArgs } from 'node:util';
import { loadApiConfig } from '../api/api-config';
import { createApiDependencies } from '../api/default-dependencies';
import { sessionIdPattern } from '../contracts/mcp-api';
import type { CliContext } from './cli-context';
import { UsageError } from './cli-io';
import { loadClientConfig } from '../settings/client-config';
import { findDevStack, otherTemporalNote } from './dev-stack-state';
import { readDevStackToken } from './dev-stack-token';
import { bridgeStdioToApi, type BridgeTarget } from './mcp-http-bridge';
import { serveMcpInProcess } from './mcp-in-process';

/**
 * `errand mcp`: errand's orchestration tools for any MCP client, over stdio (SEMANTICS §6), at protocol
 * revision 2025-11-25 (the MCP session is one durable session workflow) or 2026-07-28 (each call names its
 * session; decision 0043), as the client's opening message says. Like the other client commands, it finds
 * its stack in this order (cli-context.ts): `ERRAND_API_URL` (+ `ERRAND_API_KEY`), then a running `errand
 * dev` of the same data directory — through either, it bridges stdio to that API's `/v1/mcp`
 * (mcp-http-bridge.ts) — and otherwise it reaches Temporal itself (mcp-in-process.ts, the client
 * configuration, as the in-process CLI), as tenant `local` (`ERRAND_LOCAL_TENANT`). `--session <id>` (or
 * `ERRAND_MCP_SESSION`) reconnects to an earlier session and its tasks (at 2026-07-28: the session of a
 * call that names none); otherwise a new one starts. stdout carries the protocol only: everything for a
 * person goes to stderr.
 */
export async function mcpCommand(argv: string[], context: CliContext): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { session: { type: 'string' }, label: { type: 'string' } }, allowPositionals: false, strict: true });
  const { env, cwd, io } = context;
  const given = values.session ?? env.ERRAND_MCP_SESSION;
  const from = values.session !== undefined ? '--session' : 'ERRAND_MCP_SESSION';
  if (given !== undefined && !sessionIdPattern.test(given)) {
    throw new UsageError(`${from} "${given}" is not a session id (errand- and 16 hex digits, as errand mcp printed when it started the session)`);
  }
  const target = await apiTarget(env, cwd, io);
  if (target !== undefined) {
    if (values.label !== undefined) io.stderr('errand mcp: --label is not sent through an API (the API labels its MCP sessions); it was ignored\n');
    return await bridgeStdioToApi({ ...target, ...(given !== undefined ? { sessionId: given } : {}) }, io);
  }
  const loaded = loadApiConfig(env, cwd, { localDefault: true });
  const tenant = loaded.auth.mode === 'off' ? loaded.auth.tenant : (env.ERRAND_LOCAL_TENANT ?? 'local');
  const deps = createApiDependencies({ env, cwd, api: { ...loaded, auth: { mode: 'off', tenant } }, startedBy: 'errand mcp' });
  const sessions = deps.sessions;
  if (!sessions) throw new Error('the session service is not configured');
  try {
    if (given !== undefined) {
      const found = await sessions.get(tenant, given);
      if (!found.running) throw new UsageError(`session ${given} (${from}) has ended; start errand mcp without it for a new session`);
    }
    return await serveMcpInProcess({ deps, tenant, given, label: values.label }, io);
  } finally {
    await deps.temporal.close().catch(() => undefined);
  }
}

/**
 * The API `errand mcp` goes through, as the other client commands choose theirs: `ERRAND_API_URL`, else a
 * live `errand dev` of this data directory (with its token unless `ERRAND_API_KEY` is set); undefined: none,
 * talk to Temporal.
 */
async function apiTarget(env: NodeJS.ProcessEnv, cwd: string, io: CliContext['io']): Promise<Omit<BridgeTarget, 'sessionId'> | undefined> {
  const url = env.ERRAND_API_URL;
  if (url) return { apiUrl: url.replace(/\/+$/, ''), key: env.ERRAND_API_KEY, foundIn: 'ERRAND_API_URL' };
  const { dataDir } = loadClientConfig(env, cwd);
  const stack = await findDevStack(dataDir);
  if (stack.kind === 'alive') {
    const note = otherTemporalNote(stack, env);
    if (note) io.stderr(`errand mcp: ${note}\n`);
    return { apiUrl: stack.state.apiUrl.replace(/\/+$/, ''), key: env.ERRAND_API_KEY ?? readDevStackToken(dataDir), foundIn: `the errand dev stack found in ${stack.path}` };
  }
  if (stack.kind === 'ignored') io.stderr(`errand mcp: ${stack.note}\n`);
  return undefined;
}

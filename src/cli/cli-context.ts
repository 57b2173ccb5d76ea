import { httpTransport, type ApiAnswer, type ApiTransport } from './api-transport';
import type { ApiConfig } from '../api/api-config';
import type { CliIo } from './cli-io';
import { checkTraceparent, traceparentHeader } from '../observability/trace-context';

/**
 * What every client command gets: output streams and a lazily built API transport, chosen in this order:
 * 1. `ERRAND_API_URL` set: the CLI is an HTTP client of that API (key from `ERRAND_API_KEY`);
 * 2. a running `errand dev` of the same data directory (its state file, see dev-stack-state.ts): the CLI
 *    talks to that stack's API with the stack's token (dev-stack-token.ts; `ERRAND_API_KEY` wins), so it
 *    uses the stack's configuration (demo model, example recipes);
 * 3. otherwise it runs the API app in process against the Temporal server of its own configuration, as
 *    tenant `local` (`ERRAND_LOCAL_TENANT` changes it). With `ERRAND_TEMPORAL_HTTP_URL` set, `peek` reads
 *    through Temporal's HTTP API instead, without loading the Temporal client (temporal-http-peek.ts).
 */
export interface CliContext {
  io: CliIo;
  env: NodeJS.ProcessEnv;
  cwd: string;
  transport(): ApiTransport;
  /** Closes the Temporal connection of the in-process mode, if one was made. */
  close(): Promise<void>;
}

/**
 * The in-process transport. The API app, its configuration and the Temporal client are loaded on the first
 * request, not when the transport is made: commands that fail on their arguments, or talk HTTP, never pay
 * for them.
 */
function inProcessApiTransport(env: NodeJS.ProcessEnv, cwd: string, onClose: (close: () => Promise<void>) => void): ApiTransport {
  let loading: Promise<ApiTransport> | undefined;
  const load = async (): Promise<ApiTransport> => {
    const [{ loadApiConfig, localTenant }, { createApp }, { createApiDependencies }, { inProcessTransport }] = await Promise.all([
      import('../api/api-config.js'),
      import('../api/app.js'),
      import('../api/default-dependencies.js'),
      import('./api-transport.js'),
    ]);
    const loaded = loadApiConfig(env, cwd, { localDefault: true });
    const api = { ...loaded, auth: { mode: 'off' as const, tenant: cliTenant(loaded, env, localTenant) } };
    const deps = createApiDependencies({ env, cwd, api, startedBy: 'errand CLI' });
    // In process, the API's spans are this process's: exported when OTEL_EXPORTER_OTLP_ENDPOINT is set.
    const { startTracing, stopTracing } = await import('../observability/tracing.js');
    await startTracing('cli', env);
    onClose(async () => {
      await deps.temporal.close();
      await stopTracing();
    });
    const inner = inProcessTransport(createApp(deps, { requestLog: false, operatorFacing: true }), `Temporal at ${deps.config.temporal.address} (in process; set ERRAND_API_URL to use an API server)`);
    transport.describe = inner.describe;
    return inner;
  };
  const transport: ApiTransport = {
    describe: 'Temporal (in process; set ERRAND_API_URL to use an API server)',
    async request(method, path, options): Promise<ApiAnswer> {
      loading ??= load();
      return (await loading).request(method, path, options);
    },
  };
  return transport;
}

/** The tenant the in-process CLI acts as: the local tenant of auth `off`, else `ERRAND_LOCAL_TENANT` or `local`. */
function cliTenant(loaded: ApiConfig, env: NodeJS.ProcessEnv, localTenant: string): string {
  return loaded.auth.mode === 'off' ? loaded.auth.tenant : (env.ERRAND_LOCAL_TENANT ?? localTenant);
}

/**
 * The environment variable through which a caller hands the CLI its trace (a CI job's, a script's): a W3C
 * `traceparent`, sent with every API request the command makes, so its workflows join that trace.
 */
export const traceparentEnv = 'TRACEPARENT';

/** The headers every request of this invocation carries: the caller's trace, if `TRACEPARENT` is set. */
function traceHeadersOf(env: NodeJS.ProcessEnv): Record<string, string> {
  const value = env[traceparentEnv];
  if (value === undefined || value.trim() === '') return {};
  return { [traceparentHeader]: checkTraceparent(value, traceparentEnv), ...(env.TRACESTATE ? { tracestate: env.TRACESTATE } : {}) };
}

/** Builds the context of one CLI invocation. */
export function createCliContext(io: CliIo, env: NodeJS.ProcessEnv, cwd: string): CliContext {
  let chosen: Promise<ApiTransport> | undefined;
  let resolved: ApiTransport | undefined;
  let close: () => Promise<void> = () => Promise.resolve();

  const choose = async (): Promise<ApiTransport> => {
    const url = env.ERRAND_API_URL;
    if (url) return httpTransport(url, env.ERRAND_API_KEY);
    // Loaded here, not at start: commands that fail on their arguments, or talk HTTP, never pay for them.
    // client-config, not config: the full configuration loads the tool policy, stores and providers too.
    const [{ loadClientConfig }, { findDevStack, otherTemporalNote }, { readDevStackToken }] = await Promise.all([import('../settings/client-config.js'), import('./dev-stack-state.js'), import('./dev-stack-token.js')]);
    const config = loadClientConfig(env, cwd);
    const stack = await findDevStack(config.dataDir);
    // The stack's API wants its token (beside its state file) unless it was given API keys.
    if (stack.kind === 'alive') {
      const note = otherTemporalNote(stack, env);
      if (note) io.stderr(`errand: ${note}\n`);
      return httpTransport(stack.state.apiUrl, env.ERRAND_API_KEY ?? readDevStackToken(config.dataDir), `the errand dev stack found in ${stack.path}`);
    }
    if (stack.kind === 'ignored') io.stderr(`errand: ${stack.note}\n`);
    const inProcess = inProcessApiTransport(env, cwd, (closer) => (close = closer));
    const { httpUrl, namespace, connection } = config.temporal;
    if (httpUrl === undefined) return inProcess;
    const [{ loadApiConfig, localTenant }, { temporalHttpPeekTransport }, { temporalHttpHeaders }] = await Promise.all([
      import('../api/api-config.js'),
      import('./temporal-http-peek.js'),
      import('../temporal/temporal-http-url.js'),
    ]);
    const headers = temporalHttpHeaders(connection);
    return temporalHttpPeekTransport({ baseUrl: httpUrl, namespace, tenant: cliTenant(loadApiConfig(env, cwd, { localDefault: true }), env, localTenant), headers }, inProcess);
  };

  // Commands take the transport synchronously; which one it is is decided on the first request.
  const lazy: ApiTransport = {
    get describe() {
      return resolved?.describe ?? 'the errand API';
    },
    async request(method, path, options) {
      const trace = traceHeadersOf(env);
      chosen ??= choose().then((transport) => (resolved = transport));
      return (await chosen).request(method, path, { ...options, headers: { ...trace, ...options?.headers } });
    },
  };
  return {
    io,
    env,
    cwd,
    transport: () => lazy,
    close: () => close(),
  };
}

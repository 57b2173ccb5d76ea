import { loadApiConfig, localTenant } from '../api/api-config';
import { createApp } from '../api/app';
import { createApiDependencies } from '../api/default-dependencies';
import { loadConfig } from '../config';
import { httpTransport, inProcessTransport, type ApiTransport } from './api-transport';
import type { CliIo } from './cli-io';
import { findDevStack } from './dev-stack-state';

/**
 * What every client command gets: output streams and a lazily built API transport, chosen in this order:
 * 1. `ERRAND_API_URL` set: the CLI is an HTTP client of that API (key from `ERRAND_API_KEY`);
 * 2. a running `errand dev` of the same data directory (its state file, see dev-stack-state.ts): the CLI
 *    talks to that stack's API, so it uses the stack's configuration (demo model, example recipes);
 * 3. otherwise it runs the API app in process against the Temporal server of its own configuration, as
 *    tenant `local` (`ERRAND_LOCAL_TENANT` changes it).
 */
export interface CliContext {
  io: CliIo;
  env: NodeJS.ProcessEnv;
  cwd: string;
  transport(): ApiTransport;
  /** Closes the Temporal connection of the in-process mode, if one was made. */
  close(): Promise<void>;
}

/** Builds the context of one CLI invocation. */
export function createCliContext(io: CliIo, env: NodeJS.ProcessEnv, cwd: string): CliContext {
  let chosen: Promise<ApiTransport> | undefined;
  let resolved: ApiTransport | undefined;
  let close: () => Promise<void> = () => Promise.resolve();

  const inProcess = (): ApiTransport => {
    const loaded = loadApiConfig(env, cwd, { localDefault: true });
    const api = { ...loaded, auth: { mode: 'off' as const, tenant: loaded.auth.mode === 'off' ? loaded.auth.tenant : (env.ERRAND_LOCAL_TENANT ?? localTenant) } };
    const deps = createApiDependencies({ env, cwd, api, startedBy: 'errand CLI' });
    close = () => deps.temporal.close();
    return inProcessTransport(createApp(deps, { requestLog: false }), `Temporal at ${deps.config.temporal.address} (in process; set ERRAND_API_URL to use an API server)`);
  };

  const choose = async (): Promise<ApiTransport> => {
    const url = env.ERRAND_API_URL;
    if (url) return httpTransport(url, env.ERRAND_API_KEY);
    const stack = await findDevStack(loadConfig(env, cwd).dataDir);
    if (stack.kind === 'alive') return httpTransport(stack.state.apiUrl, env.ERRAND_API_KEY, `the errand dev stack found in ${stack.path}`);
    if (stack.kind === 'ignored') io.stderr(`errand: ${stack.note}\n`);
    return inProcess();
  };

  // Commands take the transport synchronously; which one it is is decided on the first request.
  const lazy: ApiTransport = {
    get describe() {
      return resolved?.describe ?? 'the errand API';
    },
    async request(method, path, options) {
      chosen ??= choose().then((transport) => (resolved = transport));
      return (await chosen).request(method, path, options);
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

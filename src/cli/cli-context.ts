import { loadApiConfig, localTenant } from '../api/api-config';
import { createApp } from '../api/app';
import { createApiDependencies } from '../api/default-dependencies';
import { httpTransport, inProcessTransport, type ApiTransport } from './api-transport';
import type { CliIo } from './cli-io';

/**
 * What every client command gets: output streams and a lazily built API transport. With
 * `ERRAND_API_URL` set the CLI is an HTTP client (key from `ERRAND_API_KEY`); otherwise it runs the API
 * app in process against the Temporal server of the configuration, as tenant `local`
 * (`ERRAND_LOCAL_TENANT` changes it).
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
  let transport: ApiTransport | undefined;
  let close: () => Promise<void> = () => Promise.resolve();
  return {
    io,
    env,
    cwd,
    transport() {
      if (transport) return transport;
      const url = env.ERRAND_API_URL;
      if (url) {
        transport = httpTransport(url, env.ERRAND_API_KEY);
        return transport;
      }
      const loaded = loadApiConfig(env, cwd, { localDefault: true });
      const api = { ...loaded, auth: { mode: 'off' as const, tenant: loaded.auth.mode === 'off' ? loaded.auth.tenant : (env.ERRAND_LOCAL_TENANT ?? localTenant) } };
      const deps = createApiDependencies({ env, cwd, api, startedBy: 'errand CLI' });
      close = () => deps.temporal.close();
      transport = inProcessTransport(createApp(deps, { requestLog: false }), `Temporal at ${deps.config.temporal.address} (in process; set ERRAND_API_URL to use an API server)`);
      return transport;
    },
    close: () => close(),
  };
}

import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Hono } from 'hono';
import { configureLogging, providerApiKeys } from '../observability/json-logger';
import { startTracing, stopTracing } from '../observability/tracing';
import type { ApiEnv } from './api-env';
import { createApp } from './app';
import { createApiDependencies } from './default-dependencies';
import { noProviderWarning } from './problem';

/**
 * The API as a Node HTTP server (`errand api`, `errand dev`, tests). The Temporal connection is made on
 * the first request and reused for the life of the process.
 */

/** A running API server. */
export interface RunningApiServer {
  /** Base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  /** Stops accepting connections and closes open ones. */
  close(): Promise<void>;
}

/** Serves the app on host:port (port 0 picks a free one). */
export async function startApiServer(app: Hono<ApiEnv>, options: { host: string; port: number }): Promise<RunningApiServer> {
  const server = createAdaptorServer({ fetch: app.fetch, hostname: options.host });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? (address satisfies AddressInfo).port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolveClose) => {
        if ('closeAllConnections' in server && typeof server.closeAllConnections === 'function') server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

/** Runs the API server from configuration until SIGINT or SIGTERM. */
export async function runApiServer(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const deps = createApiDependencies({ env });
  configureLogging({ secrets: [...providerApiKeys(deps.config.providers, env)] });
  const tracing = await startTracing('api', env);
  const server = await startApiServer(createApp(deps), { host: deps.api.host, port: deps.api.port });
  const auth = deps.api.auth.mode === 'keys' ? `${deps.api.auth.keys.length} API key(s)` : `auth OFF (every request runs as tenant "${deps.api.auth.tenant}")`;
  const { address, httpUrl, taskQueue } = deps.config.temporal;
  const starts = httpUrl === undefined ? '' : ` (starts through its HTTP API ${httpUrl})`;
  process.stdout.write(`errand api: listening on ${server.url} (${auth}); Temporal ${address}${starts}, task queue "${taskQueue}"\n`);
  if (deps.config.providers.length === 0) process.stderr.write(`errand api: warning: ${noProviderWarning}\n`);
  if (tracing) process.stdout.write(`errand api: exporting traces to ${tracing.settings.endpoint.url} (${tracing.settings.endpoint.setting}) as service "${tracing.settings.serviceName}"\n`);
  await new Promise<void>((resolveStop) => {
    const stop = () => resolveStop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  await deps.temporal.close();
  await stopTracing();
}

if (require.main === module) {
  runApiServer().catch((error: unknown) => {
    process.stderr.write(`errand api: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}

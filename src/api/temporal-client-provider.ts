import { Client, Connection } from '@temporalio/client';
import { traceHeaderInterceptor } from '../observability/start-options';
import type { TemporalConnectOptions } from '../temporal-connection';

/**
 * The Temporal client of an API process: connected on first use and then reused for every request (a
 * connection is expensive; a Lambda container keeps it between invocations). A failed connect is not
 * cached, so the next request tries again.
 */
export interface TemporalClientProvider {
  /** The shared client, connecting on first use. */
  get(): Promise<Client>;
  /** Closes the connection if one was made. */
  close(): Promise<void>;
}

/** Settings of the Temporal connection (address, TLS, API key: see src/temporal-connection.ts). */
export interface TemporalClientSettings {
  connection: TemporalConnectOptions;
  namespace: string;
}

/** A provider that connects lazily with the given settings. */
export function lazyTemporalClient(settings: TemporalClientSettings): TemporalClientProvider {
  let pending: Promise<{ client: Client; connection: Connection }> | undefined;
  const connect = async () => {
    const connection = await Connection.connect(settings.connection);
    return { client: new Client({ connection, namespace: settings.namespace, interceptors: { workflow: [traceHeaderInterceptor] } }), connection };
  };
  return {
    async get() {
      pending ??= connect().catch((error: unknown) => {
        pending = undefined;
        throw error;
      });
      return (await pending).client;
    },
    async close() {
      const current = pending;
      pending = undefined;
      if (current) await (await current).connection.close();
    },
  };
}

/**
 * The client as the API uses it: sending the active trace with every start, signal and update
 * (traceHeaderInterceptor). A client made elsewhere gets a twin on the same connection and settings, with
 * the interceptor in front of its own.
 */
export function withTraceHeaders(client: Client): Client {
  const { workflow } = client.options.interceptors;
  const existing = Array.isArray(workflow) ? workflow : [];
  if (existing.includes(traceHeaderInterceptor)) return client;
  // Left as it is: a client with the older object form of workflow interceptors (they cannot be combined),
  // or with plugins (a second client would apply them again).
  if (workflow !== undefined && !Array.isArray(workflow)) return client;
  if ((client.options.plugins ?? []).length > 0) return client;
  return new Client({ ...client.options, interceptors: { ...client.options.interceptors, workflow: [traceHeaderInterceptor, ...existing] } });
}

/** A provider around an existing client (tests, the CLI's in-process mode), with {@link withTraceHeaders}. */
export function fixedTemporalClient(client: Client): TemporalClientProvider {
  const traced = withTraceHeaders(client);
  return { get: () => Promise.resolve(traced), close: () => Promise.resolve() };
}

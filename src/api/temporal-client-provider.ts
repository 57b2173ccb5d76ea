import type { Client, Connection } from '@temporalio/client';
import type { TemporalClientSettings } from '../temporal/temporal-connection';

export type { TemporalClientSettings } from '../temporal/temporal-connection';

/**
 * The Temporal client of an API process: connected on first use and then reused for every request (a
 * connection is expensive; a long-running `errand api` keeps it). A failed connect is not cached, so the
 * next request tries again. The SDK is loaded with the first connect (`import()`), so a process that reaches
 * Temporal only over its HTTP API (decision 0026) never loads it.
 */
export interface TemporalClientProvider {
  /** The shared client, connecting on first use. */
  get(): Promise<Client>;
  /** Closes the connection if one was made. */
  close(): Promise<void>;
}

/** A provider that connects lazily with the given settings. */
export function lazyTemporalClient(settings: TemporalClientSettings): TemporalClientProvider {
  let pending: Promise<{ client: Client; connection: Connection }> | undefined;
  const connect = async () => (await import('./temporal-sdk-connect.js')).connectTemporalClient(settings);
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

/** A provider around an existing client (tests, the CLI's in-process mode), with the trace header (`withTraceHeaders` of temporal-sdk-connect.ts). */
export function fixedTemporalClient(client: Client): TemporalClientProvider {
  // withTraceHeaders makes a client: it lives with the SDK, loaded only by a process that uses the SDK.
  let traced: Promise<Client> | undefined;
  return { get: () => (traced ??= import('./temporal-sdk-connect.js').then(({ withTraceHeaders }) => withTraceHeaders(client))), close: () => Promise.resolve() };
}

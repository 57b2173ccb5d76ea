import type { TemporalGateway } from './temporal-gateway';
import type { TemporalClientProvider } from './temporal-client-provider';
import { TemporalHttpGateway } from './temporal-http-gateway';
import type { TemporalHttpStartTarget } from './temporal-http-start';

/**
 * The API's way to Temporal (decision 0026): its HTTP API when one is configured (`ERRAND_TEMPORAL_HTTP_URL`
 * or `temporal.httpUrl`; always in the Lambda, whose bundle is sized for it), otherwise the SDK's gRPC client.
 * The SDK gateway is reached through `import()`, so a process on the HTTP path never loads the SDK, gRPC or
 * Temporal's protobuf definitions (in the Lambda bundle they sit in chunks no request of that path reads).
 */

/** Where the HTTP gateway goes, or undefined for the SDK's client. */
export interface TemporalGatewaySettings {
  http: TemporalHttpStartTarget | undefined;
  namespace: string;
  /** The SDK's client, connected on first use (only the SDK gateway uses it). */
  temporal: TemporalClientProvider;
}

/** The gateway for these settings. */
export function createTemporalGateway(settings: TemporalGatewaySettings): TemporalGateway {
  if (settings.http) return new TemporalHttpGateway(settings.http);
  return lazySdkGateway(settings.temporal, settings.namespace);
}

/** The SDK's gateway, its module loaded at the first call (and kept). */
export function lazySdkGateway(temporal: TemporalClientProvider, namespace: string): TemporalGateway {
  let loaded: Promise<TemporalGateway> | undefined;
  const gateway = (): Promise<TemporalGateway> => {
    loaded ??= import('./temporal-sdk-gateway.js').then(({ TemporalSdkGateway }) => new TemporalSdkGateway(temporal, namespace));
    return loaded;
  };
  return {
    start: async (request) => (await gateway()).start(request),
    describe: async (workflowId) => (await gateway()).describe(workflowId),
    query: async (workflowId, name, args, timeoutMs) => (await gateway()).query(workflowId, name, args, timeoutMs),
    signal: async (workflowId, name, arg) => (await gateway()).signal(workflowId, name, arg),
    update: async (workflowId, name, arg, options) => (await gateway()).update(workflowId, name, arg, options),
    list: async (query, pageSize, pageToken) => (await gateway()).list(query, pageSize, pageToken),
    awaitEnd: async (workflowId, runId, waitMs) => (await gateway()).awaitEnd(workflowId, runId, waitMs),
    // Nothing loaded: nothing connected, nothing to close.
    close: async () => (loaded ? (await loaded).close() : temporal.close()),
  };
}

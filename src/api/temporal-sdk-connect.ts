import { Client, Connection } from '@temporalio/client';
import { traceHeaderInterceptor } from '../observability/start-options';
import { GrpcCode, grpcStatusOf } from '../temporal/grpc-status';
import type { TemporalClientSettings } from '../temporal/temporal-connection';
import { TemporalUnreachableError } from '../temporal/temporal-unreachable';

/**
 * Connects the SDK's client. A module of its own so that temporal-client-provider.ts reaches the SDK only
 * through `import()` of this file (an ES module of ours: the CommonJS SDK imported directly would come out
 * of an esbuild chunk with its exports only under `default`).
 */
export async function connectTemporalClient(settings: TemporalClientSettings): Promise<{ client: Client; connection: Connection }> {
  let connection: Connection;
  try {
    connection = await Connection.connect(settings.connection);
  } catch (error) {
    throw unreachable(error, settings.connection.address) ?? error;
  }
  return { client: new Client({ connection, namespace: settings.namespace, interceptors: { workflow: [traceHeaderInterceptor] } }), connection };
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

/**
 * The connect's failure as a {@link TemporalUnreachableError} when it means nothing answered (no gRPC status,
 * UNAVAILABLE or DEADLINE_EXCEEDED); undefined for a refusal by a server that did answer (a bad key, TLS).
 */
export function unreachable(error: unknown, address: string): TemporalUnreachableError | undefined {
  const code = grpcStatusOf(error)?.code;
  if (code !== undefined && code !== GrpcCode.unavailable && code !== GrpcCode.deadlineExceeded) return undefined;
  const reason = error instanceof Error ? error.message : String(error);
  return new TemporalUnreachableError(
    `Temporal at ${address} cannot be reached (${reason}): start it, or set the address (ERRAND_TEMPORAL_ADDRESS, TEMPORAL_ADDRESS or the Temporal config profile)`,
    address,
    { cause: error },
  );
}

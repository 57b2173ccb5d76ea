import { traceFlushTimeoutMs, traceServiceNamePrefix } from '../contracts/limits/observability';

/**
 * The tracing settings a process reads, the shape of its running trace export and the bound on a flush:
 * what tracing.ts and the SDK half it imports on demand (tracing-sdk.ts) share, so the SDK half needs
 * nothing from tracing.ts. tracing.ts re-exports them.
 */

/** The variable that turns tracing on: the OTLP/HTTP base URL (`/v1/traces` is appended). */
export const otlpEndpointEnv = 'OTEL_EXPORTER_OTLP_ENDPOINT';
/** The traces-only endpoint variable (a full URL, used as it is); wins over {@link otlpEndpointEnv}. */
export const otlpTracesEndpointEnv = 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT';

/** Tracing settings of a process. */
export interface TracingSettings {
  /** The variable that set the endpoint, and its value (checked to be an http(s) URL). */
  endpoint: { setting: string; url: string };
  /** `service.name` of the process's spans (`OTEL_SERVICE_NAME`, else `errand-<role>`). */
  serviceName: string;
}

/**
 * Reads the tracing settings: undefined when no endpoint is set (tracing off) or `OTEL_SDK_DISABLED=true`.
 * A value that is not an http(s) URL is an error naming the variable.
 */
export function tracingSettings(role: string, env: NodeJS.ProcessEnv = process.env): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const setting = [otlpTracesEndpointEnv, otlpEndpointEnv].find((name) => (env[name] ?? '').trim() !== '');
  if (setting === undefined) return undefined;
  const url = (env[setting] ?? '').trim();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`${setting} must be an http:// or https:// URL of an OTLP/HTTP receiver, e.g. http://localhost:4318 (got "${url}")`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new Error(`${setting} must be an http:// or https:// URL of an OTLP/HTTP receiver (errand exports OTLP over HTTP, not gRPC), e.g. http://localhost:4318 (got "${url}")`);
  }
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || `${traceServiceNamePrefix}-${role}`;
  return { endpoint: { setting, url }, serviceName };
}

/** A process's running trace export. */
export interface Tracing {
  settings: TracingSettings;
  /**
   * What a Temporal worker needs to export its workflows' spans (the interceptors' `makeWorkflowExporter`):
   * the SDK's span processor and resource, typed loosely so this file names no SDK type.
   */
  workflowExport: { spanProcessor: unknown; resource: unknown };
  /** Sends the spans held so far (a Lambda invocation's end, a test's check). */
  flush(): Promise<void>;
  /** Flushes and stops exporting, within {@link traceFlushTimeoutMs}. */
  shutdown(): Promise<void>;
}

/** Races `work` against {@link traceFlushTimeoutMs}: a receiver that is down must not hold a stop. */
export async function withinFlushTimeout(work: Promise<unknown>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work.then(() => undefined, () => undefined), new Promise<void>((resolveTimeout) => (timer = setTimeout(resolveTimeout, traceFlushTimeoutMs)))]);
  } finally {
    clearTimeout(timer);
  }
}

import { traceFlushTimeoutMs, traceServiceNamePrefix } from '../contracts/limits';

/**
 * Whether and where errand exports traces. Tracing is on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, and off otherwise: then nothing but `@opentelemetry/api`
 * (a no-op until a provider is registered) is loaded, and the SDK and the OTLP exporter
 * (src/observability/tracing-sdk.ts) are imported only when a process starts tracing. The other standard
 * variables (`OTEL_EXPORTER_OTLP_HEADERS` for a vendor's key, `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`) are read by the OpenTelemetry SDK itself; docs/observability.md.
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

let started: Promise<Tracing | undefined> | undefined;

/**
 * Starts exporting traces if the settings ask for it, once per process (later calls answer the first
 * call's result): registers the SDK's tracer provider, the W3C propagator and an async-local-storage
 * context manager globally. Answers undefined when tracing is off.
 */
export function startTracing(role: string, env: NodeJS.ProcessEnv = process.env): Promise<Tracing | undefined> {
  started ??= (async () => {
    const settings = tracingSettings(role, env);
    if (!settings) return undefined;
    // Imported here only: the SDK and the exporter must not load (nor be bundled into the API's Lambda
    // eagerly) when tracing is off.
    let sdk: { registerTracing(settings: TracingSettings): Tracing };
    try {
      sdk = await import('./tracing-sdk.js');
    } catch (error) {
      // The API's Lambda bundle leaves the SDK out (infra/lib/api-bundle.ts): it must come from a layer.
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`${settings.endpoint.setting} is set, but the OpenTelemetry SDK cannot be loaded (${reason}); install @opentelemetry/sdk-trace-node, @opentelemetry/exporter-trace-otlp-http and @opentelemetry/resources beside errand (in a Lambda: a layer's nodejs/node_modules), or unset ${settings.endpoint.setting}`);
    }
    return sdk.registerTracing(settings);
  })();
  return started;
}

/** The tracing this process started, if any (a worker made after `startTracing` exports its workflows' spans). */
export async function currentTracing(): Promise<Tracing | undefined> {
  return started ? await started : undefined;
}

/** Stops the process's tracing (flushing what it holds), if it was started. */
export async function stopTracing(): Promise<void> {
  const tracing = await currentTracing();
  started = undefined;
  await tracing?.shutdown();
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

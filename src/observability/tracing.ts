import { tracingSettings, type Tracing, type TracingSettings } from './tracing-settings';

export { otlpEndpointEnv, otlpTracesEndpointEnv, tracingSettings, withinFlushTimeout, type Tracing, type TracingSettings } from './tracing-settings';

/**
 * Whether and where errand exports traces. Tracing is on when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, and off otherwise: then nothing but `@opentelemetry/api`
 * (a no-op until a provider is registered) is loaded, and the SDK and the OTLP exporter
 * (src/observability/tracing-sdk.ts) are imported only when a process starts tracing. The other standard
 * variables (`OTEL_EXPORTER_OTLP_HEADERS` for a vendor's key, `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`) are read by the OpenTelemetry SDK itself; docs/observability.md.
 */

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

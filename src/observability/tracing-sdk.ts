import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { envDetectorSync, Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { otlpTracesEndpointEnv, withinFlushTimeout, type Tracing, type TracingSettings } from './tracing-settings';

/**
 * The heavy half of errand's tracing: the OpenTelemetry SDK and its OTLP/HTTP exporter. Only
 * `startTracing` (./tracing.ts) imports this file, by dynamic import, and only when an endpoint is set.
 */

/** The OTLP/HTTP URL spans are sent to: the traces endpoint as given, or `<endpoint>/v1/traces`. */
export function tracesUrl(settings: TracingSettings): string {
  if (settings.endpoint.setting === otlpTracesEndpointEnv) return settings.endpoint.url;
  return `${settings.endpoint.url.replace(/\/+$/, '')}/v1/traces`;
}

/** Registers the SDK's tracer provider globally, exporting in batches over OTLP/HTTP (JSON). */
export function registerTracing(settings: TracingSettings): Tracing {
  // OTEL_RESOURCE_ATTRIBUTES (deployment.environment, ...) come in through the env detector; the service
  // name is errand's own unless OTEL_SERVICE_NAME chose one (tracingSettings reads it).
  const resource = Resource.default().merge(envDetectorSync.detect()).merge(new Resource({ 'service.name': settings.serviceName }));
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(settings) }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // Global: @opentelemetry/api's tracer, the W3C propagator (traceparent) and an AsyncLocalStorage context
  // manager, so a span started in a request handler is the parent of what the handler awaits.
  provider.register();
  return {
    settings,
    workflowExport: { spanProcessor, resource },
    flush: () => withinFlushTimeout(provider.forceFlush()),
    shutdown: () => withinFlushTimeout(provider.shutdown()),
  };
}

import { context, defaultTextMapGetter, isSpanContextValid, propagation, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';

/**
 * The light half of errand's tracing: only `@opentelemetry/api`, which does nothing until a tracer provider
 * is registered (src/observability/tracing.ts registers one when `OTEL_EXPORTER_OTLP_ENDPOINT` is set). The
 * API's Lambda bundle and the CLI load this file; the SDK and the exporter stay out of them.
 */

/** Name of errand's tracer (its own spans: API requests, model calls, tool calls). */
export const errandTracerName = 'errand';

/** errand's tracer; a no-op one until a provider is registered. */
export function errandTracer(): Tracer {
  return trace.getTracer(errandTracerName);
}

/** The W3C trace context header an HTTP request brings (`traceparent`, with `tracestate`). */
export const traceparentHeader = 'traceparent';

/** `version-traceid-spanid-flags`, lower-case hex, as W3C Trace Context level 1 writes it. */
const traceparentPattern = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * Checks a `traceparent` value a user gave (the CLI's `TRACEPARENT`); throws an error naming `setting` and
 * the valid form.
 */
export function checkTraceparent(value: string, setting: string): string {
  const trimmed = value.trim();
  if (!traceparentPattern.test(trimmed) || /^0+$/.test(trimmed.slice(3, 35)) || /^0+$/.test(trimmed.slice(36, 52))) {
    throw new Error(`${setting} must be a W3C traceparent "00-<32 hex trace id>-<16 hex span id>-<2 hex flags>" with non-zero ids (got "${value}")`);
  }
  return trimmed;
}

/** The context a request's headers carry (`traceparent`, `tracestate`), on top of `base`. */
export function contextFromHeaders(headers: Record<string, string | undefined>, base: Context = context.active()): Context {
  return propagation.extract(base, headers, defaultTextMapGetter);
}

/** The trace and span ids of the active span, as JSON log lines carry them; undefined outside a span. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getSpan(context.active());
  const ids = span?.spanContext();
  if (!ids || !isSpanContextValid(ids)) return undefined;
  return { trace_id: ids.traceId, span_id: ids.spanId };
}

/** The W3C headers of the active context (empty without a registered propagator or an active span). */
export function activeTraceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** Records `error` on `span` as its exception, and marks the span failed with the error's message. */
export function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/**
 * Runs `fn` in a new active span and ends the span when `fn` settles; an exception sets the span's error
 * status. With no provider registered the span is a no-op. `kind` defaults to internal; a call to another
 * service (a model provider) is a client span.
 */
export async function inSpan<T>(name: string, attributes: Record<string, string | number | boolean>, fn: (span: Span) => Promise<T>, options: { parent?: Context; kind?: SpanKind } = {}): Promise<T> {
  return errandTracer().startActiveSpan(name, { attributes, kind: options.kind ?? SpanKind.INTERNAL }, options.parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

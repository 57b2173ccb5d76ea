import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { contextFromHeaders, errandTracer, failSpan, traceparentHeader } from '../observability/trace-context';
import type { ApiEnv } from './api-env';

/**
 * Each API request is a server span, the root of what it starts: the workflow a start creates is its child
 * (the start carries the trace, src/observability/start-options.ts), and so are the workflow's activities,
 * children, model calls and tool calls. A request that brings a W3C `traceparent` (with `tracestate`) joins
 * the caller's trace. With tracing off no provider is registered and this costs a no-op span.
 */
export function requestSpan(): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const incoming = c.req.header(traceparentHeader);
    const parent = incoming === undefined ? context.active() : contextFromHeaders({ traceparent: incoming, tracestate: c.req.header('tracestate') });
    const span = errandTracer().startSpan(`${c.req.method} ${c.req.path}`, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': c.req.method, 'url.path': c.req.path },
    }, parent);
    try {
      await context.with(trace.setSpan(parent, span), next);
      // The route's template names the span (low cardinality, as the HTTP conventions ask), once it is known.
      const route = c.req.routePath;
      if (route && route !== '*' && route !== '/*') {
        span.updateName(`${c.req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', c.res.status);
      const tenant = c.get('tenant');
      if (tenant) span.setAttribute('errand.tenant', tenant);
      if (c.res.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${c.res.status}` });
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  };
}

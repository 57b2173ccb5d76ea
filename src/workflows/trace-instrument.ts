import { ApplicationFailure, defaultPayloadConverter, type Payload } from '@temporalio/workflow';
import { activeContext, inboundContext, startActiveSpan, unreplayedRandom, validContext, withContext, type RandomSource, type SpanContext, type WorkflowSpan } from './trace-spans';

/*
 * How errand's workflow trace interceptors (trace-interceptors.ts, decision 0033) carry a trace through
 * headers and run a call in a span. Each `await` here is one of Temporal's OpenTelemetry interceptors'
 * (the order of microtasks decides the order of commands): change none without a patch and a replay history
 * on both sides.
 */

/** The Temporal header that carries the W3C trace context (the name Temporal's interceptors use). */
export const traceHeader = '_tracer-data';

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The context a header carries: `{ parent }` (undefined without a valid `traceparent`) when the header is
 * there, undefined when it is not — which decides the shape of {@link instrument}, as in Temporal's.
 */
export function contextFromHeaders(headers: Record<string, Payload>): { parent: SpanContext | undefined } | undefined {
  const encoded = headers[traceHeader];
  if (encoded === undefined) return undefined;
  const carrier: unknown = defaultPayloadConverter.fromPayload(encoded);
  const traceparent = typeof carrier === 'object' && carrier !== null ? (carrier as Record<string, unknown>).traceparent : undefined;
  const match = typeof traceparent === 'string' ? traceparentPattern.exec(traceparent.trim()) : null;
  if (!match) return { parent: inboundContext() };
  const [, traceId, spanId, flags] = match as unknown as [string, string, string, string];
  const tracestate = (carrier as Record<string, unknown>).tracestate;
  const parent: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
  if (typeof tracestate === 'string' && tracestate !== '') parent.traceState = tracestate;
  return { parent: validContext(parent) ? parent : inboundContext() };
}

/** The W3C text map of the active span (empty without one). */
function activeCarrier(): Record<string, string> {
  const carrier: Record<string, string> = {};
  const active = activeContext();
  if (validContext(active)) {
    carrier.traceparent = `00-${active.traceId}-${active.spanId}-0${active.traceFlags.toString(16)}`;
    if (active.traceState !== undefined) carrier.tracestate = active.traceState;
  }
  return carrier;
}

/** The headers with the active context added (the header is set even when there is no active span). */
export function headersWithContext(headers: Record<string, Payload>): Record<string, Payload> {
  return { ...headers, [traceHeader]: defaultPayloadConverter.toPayload(activeCarrier()) };
}

export function nexusHeadersWithContext(headers: Record<string, string>): Record<string, string> {
  return { ...headers, ...activeCarrier() };
}

export type AcceptableErrors = (error: unknown) => boolean;

function addErrorToSpan(error: unknown, span: WorkflowSpan, acceptableErrors: AcceptableErrors | undefined): void {
  if (acceptableErrors !== undefined && acceptableErrors(error)) {
    span.status = { code: 1 };
    return;
  }
  const benign = error instanceof ApplicationFailure && error.category === 'BENIGN';
  const message = error instanceof Error ? error.message : String(error);
  span.status = benign ? { code: 0, message } : { code: 2, message };
  span.recordException(error);
}

async function wrapWithSpan<T>(span: WorkflowSpan, fn: (span: WorkflowSpan) => Promise<T> | T, acceptableErrors?: AcceptableErrors): Promise<T> {
  try {
    const result = await fn(span);
    span.status = { code: 1 };
    return result;
  } catch (error) {
    addErrorToSpan(error, span, acceptableErrors);
    throw error;
  } finally {
    span.end();
  }
}

function wrapWithSpanSync<T>(span: WorkflowSpan, fn: (span: WorkflowSpan) => T): T {
  try {
    const result = fn(span);
    span.status = { code: 1 };
    return result;
  } catch (error) {
    addErrorToSpan(error, span, undefined);
    throw error;
  } finally {
    span.end();
  }
}

interface InstrumentOptions<T> {
  spanName: string;
  fn: (span: WorkflowSpan) => Promise<T> | T;
  context?: { parent: SpanContext | undefined } | undefined;
  acceptableErrors?: AcceptableErrors;
  /** A run or a handler starting (its parent is only what runs now), not an outbound call of the run. */
  inbound?: boolean;
  /** Where the span's ids come from: {@link unreplayedRandom} for code replay never runs (queries). */
  random?: RandomSource;
}

/** `fn` in a span that ends when it settles; the awaits are Temporal's `instrument`'s, one for one. */
export async function instrument<T>({ spanName, fn, context, acceptableErrors, inbound, random }: InstrumentOptions<T>): Promise<T> {
  const parentOf = inbound === true ? inboundContext : activeContext;
  if (context) {
    return await withContext(context.parent, async () => {
      return await startActiveSpan(spanName, async (span) => await wrapWithSpan(span, fn, acceptableErrors), parentOf, random);
    });
  }
  return await startActiveSpan(spanName, async (span) => await wrapWithSpan(span, fn, acceptableErrors), parentOf, random);
}

/** The synchronous {@link instrument}, for update validators (always inbound; replay never runs them). */
export function instrumentSync<T>({ spanName, fn, context }: { spanName: string; fn: (span: WorkflowSpan) => T; context?: { parent: SpanContext | undefined } | undefined }): T {
  const start = (): T => startActiveSpan(spanName, (span) => wrapWithSpanSync(span, fn), inboundContext, unreplayedRandom);
  return context ? withContext(context.parent, start) : start();
}

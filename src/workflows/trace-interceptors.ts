/**
 * errand's workflow trace interceptors (decision 0033). Not a workflow: the bundle's `workflowInterceptorModules`
 * (src/temporal/workflow-bundle-options.ts) loads this module into every workflow run.
 *
 * They do what `@temporalio/interceptors-opentelemetry`'s workflow interceptors do — a span per workflow run
 * (the child of the span in the start's `_tracer-data` header), per signal, update, query, activity start,
 * child workflow start, signal sent and continue-as-new; the trace carried into every activity, child
 * workflow and continue-as-new in the same header; trace and span ids on workflow log lines — without the
 * OpenTelemetry SDK in the sandbox. The SDK's modules are evaluated once per workflow run that the worker
 * holds in its cache: ~2.5 MB each, 1.2 GB for a cache of 500.
 *
 * Replay: histories recorded with Temporal's interceptors must replay here, and the other way round (a
 * rollback). So every method keeps their shape: the same `await`s (each one a microtask, and the order of
 * microtasks decides the order of commands), the same SDK flag checks in the same places (a flag checked is
 * a flag recorded in the history), and the same draws from the workflow's seeded `Math.random` for span and
 * trace ids (16 per span id, 32 per trace id, as OpenTelemetry's id generator draws them). Change none of
 * that without a patch and a replay history on both sides. One thing differs: no `AsyncLocalStorage` (see
 * `current` below).
 */
import {
  ApplicationFailure,
  ContinueAsNew,
  defaultPayloadConverter,
  inWorkflowContext,
  proxySinks,
  workflowInfo,
  type ActivityInput,
  type ContinueAsNewInput,
  type DisposeInput,
  type GetLogAttributesInput,
  type GetMetricTagsInput,
  type LocalActivityInput,
  type Next,
  type Payload,
  type QueryInput,
  type SignalInput,
  type SignalWorkflowInput,
  type StartChildWorkflowExecutionInput,
  type StartNexusOperationInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowInternalsInterceptor,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { SdkFlags } from '@temporalio/workflow/lib/flags';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';
import type { TraceSinks, WorkflowSpanAttribute, WorkflowSpanRecord } from '../contracts/trace-sinks';

/** The Temporal header that carries the W3C trace context (the name Temporal's interceptors use). */
export const traceHeader = '_tracer-data';

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const invalidTraceId = '00000000000000000000000000000000';
const invalidSpanId = '0000000000000000';
const sampled = 1;

/** A span's identity: a span of this run, or the remote parent a header named. */
interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: string;
}

/** A span this run started; recorded only when its trace is sampled. */
class WorkflowSpan {
  status: WorkflowSpanRecord['status'] = { code: 0 };
  readonly attributes: Record<string, WorkflowSpanAttribute> = {};
  readonly events: WorkflowSpanRecord['events'] = [];
  private readonly startMs = Date.now();
  private ended = false;

  constructor(
    readonly name: string,
    readonly context: SpanContext,
    private readonly parentSpanId: string | undefined,
  ) {}

  get recording(): boolean {
    return (this.context.traceFlags & sampled) === sampled;
  }

  setAttribute(key: string, value: WorkflowSpanAttribute): void {
    if (this.recording && !this.ended) this.attributes[key] = value;
  }

  /** As OpenTelemetry's `Span.recordException`: an `exception` event with the error's type and message. */
  recordException(error: unknown): void {
    if (!this.recording || this.ended) return;
    const attributes: Record<string, WorkflowSpanAttribute> = {};
    if (typeof error === 'string') attributes['exception.message'] = error;
    else if (error instanceof Error) {
      attributes['exception.type'] = error.name;
      attributes['exception.message'] = error.message;
      if (error.stack) attributes['exception.stacktrace'] = error.stack;
    }
    this.events.push({ name: 'exception', timeMs: Date.now(), attributes });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.recording) return;
    const record: WorkflowSpanRecord = {
      name: this.name,
      traceId: this.context.traceId,
      spanId: this.context.spanId,
      traceFlags: this.context.traceFlags,
      startMs: this.startMs,
      endMs: Date.now(),
      status: this.status,
      attributes: this.attributes,
      events: this.events,
    };
    if (this.parentSpanId !== undefined) record.parentSpanId = this.parentSpanId;
    if (this.context.traceState !== undefined) record.traceState = this.context.traceState;
    // Sent at once, one span per call, as OpenTelemetry's simple span processor does.
    proxySinks<TraceSinks>().errandTraces.export([record]);
  }
}

/** Where a span's ids are drawn from: `Math.random` is the run's seeded stream, which replay draws again. */
type RandomSource = () => number;

/**
 * The run's seeded stream, for spans of code that replay runs again (the run, handlers, outbound calls): the
 * same draws in the same order on every replay, so a span keeps its id.
 */
// eslint-disable-next-line no-restricted-properties -- the one draw from the seeded stream, as Temporal's interceptors draw it
const replayedRandom: RandomSource = () => Math.random();

/**
 * Fresh entropy for spans of code that replay never runs (queries, update validators). A draw from the seeded
 * stream there would move it on in a cached run and not in a replayed one, so the two would then draw
 * different ids — and any later `Math.random()` of the run's own code would no longer be deterministic.
 */
const unreplayedRandom: RandomSource = () => workflowInfo().unsafe.random.random();

/** An id of `bytes` random bytes as lower-case hex, drawn as OpenTelemetry's id generator draws it. */
function randomId(bytes: number, random: RandomSource): string {
  let id = '';
  for (let index = 0; index < bytes * 2; index += 1) id += Math.floor(random() * 16).toString(16);
  return id;
}

function validContext(context: SpanContext | undefined): context is SpanContext {
  return context !== undefined && context.traceId !== invalidTraceId && context.spanId !== invalidSpanId;
}

/**
 * The active span, without an `AsyncLocalStorage`: a Node one per run cost ~1 MB per cached run (measured
 * with the bench's memory figure: 634 MB for 1,000 waiting continuables without it, 1,125 MB with it).
 * `current` is the span whose synchronous code runs now (set around each call, as a context manager's
 * `with` is); code that runs after an `await` finds none there and takes this run's own span. So spans and
 * headers have the parent Temporal's interceptors give them, except for outbound calls an update or signal
 * handler makes after an `await` (their parent is the run's span, not the handler's) — a parent is not a
 * command, and the draws of ids are the same either way (an outbound call always has a parent).
 */
let current: SpanContext | undefined;
let runContext: SpanContext | undefined;

/** The active span for an outbound call or a log line: the one running now, else this run's. */
function activeContext(): SpanContext | undefined {
  return current ?? runContext;
}

/** The active span where an inbound call starts (a run, a handler): only what runs now, as Temporal's sees the root context there. */
function inboundContext(): SpanContext | undefined {
  return current;
}

function withContext<T>(context: SpanContext | undefined, fn: () => T): T {
  const saved = current;
  current = context;
  try {
    return fn();
  } finally {
    current = saved;
  }
}

/** Starts a span, the child of the active one (a new trace without one), and runs `fn` with it active. */
function startActiveSpan<T>(name: string, fn: (span: WorkflowSpan) => T, parentOf: () => SpanContext | undefined, random: RandomSource = replayedRandom): T {
  const parent = parentOf();
  const spanId = randomId(8, random);
  const span = validContext(parent)
    ? new WorkflowSpan(name, { traceId: parent.traceId, spanId, traceFlags: parent.traceFlags & sampled, ...(parent.traceState !== undefined ? { traceState: parent.traceState } : {}) }, parent.spanId)
    : new WorkflowSpan(name, { traceId: randomId(16, random), spanId, traceFlags: sampled }, undefined);
  return withContext(span.context, () => fn(span));
}

/**
 * The context a header carries: `{ parent }` (undefined without a valid `traceparent`) when the header is
 * there, undefined when it is not — which decides the shape of {@link instrument}, as in Temporal's.
 */
function contextFromHeaders(headers: Record<string, Payload>): { parent: SpanContext | undefined } | undefined {
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
function headersWithContext(headers: Record<string, Payload>): Record<string, Payload> {
  return { ...headers, [traceHeader]: defaultPayloadConverter.toPayload(activeCarrier()) };
}

function nexusHeadersWithContext(headers: Record<string, string>): Record<string, string> {
  return { ...headers, ...activeCarrier() };
}

type AcceptableErrors = (error: unknown) => boolean;

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
async function instrument<T>({ spanName, fn, context, acceptableErrors, inbound, random }: InstrumentOptions<T>): Promise<T> {
  const parentOf = inbound === true ? inboundContext : activeContext;
  if (context) {
    return await withContext(context.parent, async () => {
      return await startActiveSpan(spanName, async (span) => await wrapWithSpan(span, fn, acceptableErrors), parentOf, random);
    });
  }
  return await startActiveSpan(spanName, async (span) => await wrapWithSpan(span, fn, acceptableErrors), parentOf, random);
}

/** The synchronous {@link instrument}, for update validators (always inbound; replay never runs them). */
function instrumentSync<T>({ spanName, fn, context }: { spanName: string; fn: (span: WorkflowSpan) => T; context?: { parent: SpanContext | undefined } | undefined }): T {
  const start = (): T => startActiveSpan(spanName, (span) => wrapWithSpanSync(span, fn), inboundContext, unreplayedRandom);
  return context ? withContext(context.parent, start) : start();
}

const isContinueAsNew: AcceptableErrors = (error) => error instanceof ContinueAsNew;

function hasFlag(flag: (typeof SdkFlags)[keyof typeof SdkFlags]): boolean {
  return getActivator().hasFlag(flag);
}

class TraceInboundInterceptor implements WorkflowInboundCallsInterceptor {
  async execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const context = contextFromHeaders(input.headers);
    if (!hasFlag(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
    return await instrument({
      spanName: `RunWorkflow:${workflowInfo().workflowType}`,
      fn: (span) => {
        runContext = span.context;
        return next(input);
      },
      context,
      acceptableErrors: isContinueAsNew,
      inbound: true,
    });
  }

  async handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsTracesInboundSignals)) return next(input);
    const context = contextFromHeaders(input.headers);
    if (!hasFlag(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
    return await instrument({ spanName: `HandleSignal:${input.signalName}`, fn: () => next(input), context, inbound: true });
  }

  async handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>): Promise<unknown> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    const context = contextFromHeaders(input.headers);
    return await instrument({
      spanName: `HandleUpdate:${input.name}`,
      fn: (span) => {
        span.setAttribute('temporalUpdateId', input.updateId);
        return next(input);
      },
      context,
      inbound: true,
    });
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    const context = contextFromHeaders(input.headers);
    instrumentSync({
      spanName: `ValidateUpdate:${input.name}`,
      fn: (span) => {
        span.setAttribute('temporalUpdateId', input.updateId);
        return next(input);
      },
      context,
    });
  }

  async handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>): Promise<unknown> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    const context = contextFromHeaders(input.headers);
    return await instrument({ spanName: `HandleQuery:${input.queryName}`, fn: () => next(input), context, inbound: true, random: unreplayedRandom });
  }
}

/**
 * An outbound call in a span, its input's headers carrying that span — not `async` on purpose: each caller
 * `return await`s it, which is the one `await` Temporal's methods have around `instrument` (decision 0033).
 */
function startWithTrace<I extends { headers: Record<string, Payload> }, R>(spanName: string, input: I, next: (input: I) => Promise<R>, acceptableErrors?: AcceptableErrors): Promise<R> {
  return instrument({
    spanName,
    fn: async () => {
      const headers = headersWithContext(input.headers);
      if (!hasFlag(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
      return next({ ...input, headers });
    },
    ...(acceptableErrors ? { acceptableErrors } : {}),
  });
}

class TraceOutboundInterceptor implements WorkflowOutboundCallsInterceptor {
  async scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>): Promise<unknown> {
    return await startWithTrace(`StartActivity:${input.activityType}`, input, next);
  }

  async scheduleLocalActivity(input: LocalActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>): Promise<unknown> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsTracesLocalActivities)) return next(input);
    return await startWithTrace(`StartActivity:${input.activityType}`, input, next);
  }

  async startNexusOperation(input: StartNexusOperationInput, next: Next<WorkflowOutboundCallsInterceptor, 'startNexusOperation'>): ReturnType<Next<WorkflowOutboundCallsInterceptor, 'startNexusOperation'>> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    return await instrument({
      spanName: `StartNexusOperation:${input.service}/${input.operation}`,
      fn: async (span) => {
        span.setAttribute('temporalNexusService', input.service);
        span.setAttribute('temporalNexusOperation', input.operation);
        span.setAttribute('temporalNexusEndpoint', input.endpoint);
        const headers = nexusHeadersWithContext(input.headers);
        return await next({ ...input, headers });
      },
    });
  }

  async startChildWorkflowExecution(input: StartChildWorkflowExecutionInput, next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>): ReturnType<Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>> {
    return await startWithTrace(`StartChildWorkflow:${input.workflowType}`, input, next);
  }

  async continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>): Promise<never> {
    return await startWithTrace(`ContinueAsNew:${input.options.workflowType ?? workflowInfo().workflowType}`, input, next, isContinueAsNew);
  }

  async signalWorkflow(input: SignalWorkflowInput, next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>): Promise<void> {
    return await startWithTrace(`SignalWorkflow:${input.signalName}`, input, next);
  }

  getLogAttributes(input: GetLogAttributesInput, next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>): Record<string, unknown> {
    const active = inWorkflowContext() ? activeContext() : undefined;
    if (!validContext(active)) return next(input);
    return next({ trace_id: active.traceId, span_id: active.spanId, trace_flags: `0${active.traceFlags.toString(16)}`, ...input });
  }

  getMetricTags(input: GetMetricTagsInput, next: Next<WorkflowOutboundCallsInterceptor, 'getMetricTags'>): GetMetricTagsInput {
    return next(input);
  }
}

class TraceInternalsInterceptor implements WorkflowInternalsInterceptor {
  // Temporal's is `async` and disables its context storage; nothing awaits it and it schedules nothing.
  dispose(input: DisposeInput, next: Next<WorkflowInternalsInterceptor, 'dispose'>): void {
    current = undefined;
    runContext = undefined;
    next(input);
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new TraceInboundInterceptor()],
  outbound: [new TraceOutboundInterceptor()],
  internals: [new TraceInternalsInterceptor()],
});

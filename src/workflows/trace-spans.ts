import { proxySinks, workflowInfo } from '@temporalio/workflow';
import type { TraceSinks, WorkflowSpanAttribute, WorkflowSpanRecord } from '../contracts/trace-sinks';

/*
 * The spans of errand's workflow trace interceptors (trace-interceptors.ts, decision 0033): a span's
 * identity and record, where its ids are drawn from, and which span is active. Their draws and their shape
 * are Temporal's OpenTelemetry interceptors' (see trace-interceptors.ts): change none of that without a
 * patch and a replay history on both sides.
 */

const invalidTraceId = '00000000000000000000000000000000';
const invalidSpanId = '0000000000000000';
const sampled = 1;

/** A span's identity: a span of this run, or the remote parent a header named. */
export interface SpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: string;
}

/** A span this run started; recorded only when its trace is sampled. */
export class WorkflowSpan {
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
export type RandomSource = () => number;

/**
 * The run's seeded stream, for spans of code that replay runs again (the run, handlers, outbound calls): the
 * same draws in the same order on every replay, so a span keeps its id.
 */
// eslint-disable-next-line no-restricted-properties -- the one draw from the seeded stream, as Temporal's interceptors draw it
export const replayedRandom: RandomSource = () => Math.random();

/**
 * Fresh entropy for spans of code that replay never runs (queries, update validators). A draw from the seeded
 * stream there would move it on in a cached run and not in a replayed one, so the two would then draw
 * different ids — and any later `Math.random()` of the run's own code would no longer be deterministic.
 */
export const unreplayedRandom: RandomSource = () => workflowInfo().unsafe.random.random();

/** An id of `bytes` random bytes as lower-case hex, drawn as OpenTelemetry's id generator draws it. */
function randomId(bytes: number, random: RandomSource): string {
  let id = '';
  for (let index = 0; index < bytes * 2; index += 1) id += Math.floor(random() * 16).toString(16);
  return id;
}

export function validContext(context: SpanContext | undefined): context is SpanContext {
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
export function activeContext(): SpanContext | undefined {
  return current ?? runContext;
}

/** The active span where an inbound call starts (a run, a handler): only what runs now, as Temporal's sees the root context there. */
export function inboundContext(): SpanContext | undefined {
  return current;
}

export function withContext<T>(context: SpanContext | undefined, fn: () => T): T {
  const saved = current;
  current = context;
  try {
    return fn();
  } finally {
    current = saved;
  }
}

/** Starts a span, the child of the active one (a new trace without one), and runs `fn` with it active. */
export function startActiveSpan<T>(name: string, fn: (span: WorkflowSpan) => T, parentOf: () => SpanContext | undefined, random: RandomSource = replayedRandom): T {
  const parent = parentOf();
  const spanId = randomId(8, random);
  const span = validContext(parent)
    ? new WorkflowSpan(name, { traceId: parent.traceId, spanId, traceFlags: parent.traceFlags & sampled, ...(parent.traceState !== undefined ? { traceState: parent.traceState } : {}) }, parent.spanId)
    : new WorkflowSpan(name, { traceId: randomId(16, random), spanId, traceFlags: sampled }, undefined);
  return withContext(span.context, () => fn(span));
}

/** A run's span is the active one after its awaits (see `current`). */
export function enterRun(context: SpanContext): void {
  runContext = context;
}

/** The run is gone from the cache: no span is active any more. */
export function leaveRun(): void {
  current = undefined;
  runContext = undefined;
}

import type { Sinks } from '@temporalio/workflow';

/** An attribute value a workflow span carries (plain JSON: it crosses the sandbox boundary). */
export type WorkflowSpanAttribute = string | number | boolean;

/**
 * One finished span of a workflow (src/workflows/trace-interceptors.ts), as the sandbox hands it to the
 * worker: plain JSON, times in epoch milliseconds of the workflow's clock (the time of the activation that
 * started or ended it). The worker turns it into an OpenTelemetry span (src/observability/workflow-spans.ts).
 */
export interface WorkflowSpanRecord {
  name: string;
  /** 32 lower-case hex digits. */
  traceId: string;
  /** 16 lower-case hex digits. */
  spanId: string;
  /** The parent's span id; absent for a root span. */
  parentSpanId?: string;
  /** W3C trace flags (1 = sampled). */
  traceFlags: number;
  /** The W3C `tracestate` the trace carried, serialised. */
  traceState?: string;
  startMs: number;
  endMs: number;
  /** OpenTelemetry's status codes: 0 unset, 1 ok, 2 error. */
  status: { code: 0 | 1 | 2; message?: string };
  attributes: Record<string, WorkflowSpanAttribute>;
  events: { name: string; timeMs: number; attributes: Record<string, WorkflowSpanAttribute> }[];
}

/**
 * The sink through which workflow spans leave the sandbox. Like every sink it runs on the worker that
 * processes the workflow task, is not called on replay and adds nothing to history. A worker with tracing
 * off registers one that drops them.
 */
export interface TraceSinks extends Sinks {
  errandTraces: {
    export(spans: WorkflowSpanRecord[]): void;
  };
}

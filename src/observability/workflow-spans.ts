import type { HrTime, SpanContext } from '@opentelemetry/api';
import { createTraceState, SpanKind } from '@opentelemetry/api';
import type { InjectedSinks } from '@temporalio/worker';
import type { WorkflowInfo } from '@temporalio/workflow';
import type { TraceSinks, WorkflowSpanRecord } from '../contracts/trace-sinks';

/**
 * The worker's end of the workflow trace interceptors (src/workflows/trace-interceptors.ts): their span
 * records become OpenTelemetry spans, with the workflow's identity as attributes, and go to the process's
 * span processor. Types are structural, so this file loads no OpenTelemetry SDK module.
 */

/** What the SDK's span processors take at a span's end (OpenTelemetry 1.x `ReadableSpan`). */
export interface FinishedSpan {
  name: string;
  kind: SpanKind;
  spanContext(): SpanContext;
  parentSpanId?: string;
  startTime: HrTime;
  endTime: HrTime;
  duration: HrTime;
  status: { code: number; message?: string };
  attributes: Record<string, string | number | boolean>;
  links: [];
  events: { name: string; time: HrTime; attributes: Record<string, string | number | boolean> }[];
  ended: true;
  resource: unknown;
  instrumentationLibrary: { name: string };
  droppedAttributesCount: 0;
  droppedEventsCount: 0;
  droppedLinksCount: 0;
}

/** The span processor's part the worker uses. */
export interface SpanSink {
  onEnd(span: FinishedSpan): void;
}

/** Name of the instrumentation that made workflow spans (what Temporal's interceptors call theirs). */
export const workflowInstrumentationName = '@temporalio/interceptor-workflow';

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/** A workflow's span record as an OpenTelemetry span of `resource`, with the workflow's identity. */
export function finishedSpan(record: WorkflowSpanRecord, info: Pick<WorkflowInfo, 'workflowId' | 'runId' | 'workflowType' | 'taskQueue' | 'namespace'>, resource: unknown): FinishedSpan {
  const context: SpanContext = { traceId: record.traceId, spanId: record.spanId, traceFlags: record.traceFlags, ...(record.traceState ? { traceState: createTraceState(record.traceState) } : {}) };
  const endMs = Math.max(record.endMs, record.startMs);
  return {
    name: record.name,
    kind: SpanKind.INTERNAL,
    spanContext: () => context,
    ...(record.parentSpanId !== undefined ? { parentSpanId: record.parentSpanId } : {}),
    startTime: hrTime(record.startMs),
    endTime: hrTime(endMs),
    duration: hrTime(endMs - record.startMs),
    status: record.status,
    attributes: {
      ...record.attributes,
      temporalWorkflowId: info.workflowId,
      run_id: info.runId,
      'temporal.workflow.type': info.workflowType,
      'temporal.task_queue': info.taskQueue,
      'temporal.namespace': info.namespace,
    },
    links: [],
    events: record.events.map((event) => ({ name: event.name, time: hrTime(event.timeMs), attributes: event.attributes })),
    ended: true,
    resource,
    instrumentationLibrary: { name: workflowInstrumentationName },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** The `errandTraces` sink: to `processor` when tracing is on, dropped when it is off. */
export function traceSinks(exporting: { spanProcessor: SpanSink; resource: unknown } | undefined): InjectedSinks<TraceSinks> {
  if (!exporting) return { errandTraces: { export: { fn: () => undefined } } };
  return {
    errandTraces: {
      export: {
        fn: (info, spans) => {
          for (const record of spans) exporting.spanProcessor.onEnd(finishedSpan(record, info, exporting.resource));
        },
      },
    },
  };
}

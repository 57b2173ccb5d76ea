import { z } from 'zod';

/**
 * Converts a trace as Jaeger's query API answers it (`/api/traces/<id>`) into Zipkin's v2 JSON model
 * (`POST /api/v2/spans`), so a trace errand exported to Jaeger over OTLP can be shown in Zipkin's UI
 * (scripts/trace-screenshot.ts). Only what Zipkin's model holds is carried over: ids, parent, name, start and
 * duration in microseconds, kind, the process's service name, tags (as strings) and span logs (as annotations).
 */

const jaegerKeyValueSchema = z.object({ key: z.string(), value: z.unknown() });

const jaegerSpanSchema = z.object({
  traceID: z.string().regex(/^[0-9a-f]{1,32}$/, 'a trace id of up to 32 lowercase hex digits'),
  spanID: z.string().regex(/^[0-9a-f]{1,16}$/, 'a span id of up to 16 lowercase hex digits'),
  operationName: z.string(),
  references: z.array(z.object({ refType: z.string(), traceID: z.string(), spanID: z.string() })).nullish(),
  startTime: z.number().int().nonnegative(),
  duration: z.number().int().nonnegative(),
  tags: z.array(jaegerKeyValueSchema).nullish(),
  logs: z.array(z.object({ timestamp: z.number().int().nonnegative(), fields: z.array(jaegerKeyValueSchema) })).nullish(),
  processID: z.string(),
});

const jaegerTraceSchema = z.object({
  traceID: z.string(),
  spans: z.array(jaegerSpanSchema).min(1, 'a trace with at least one span'),
  processes: z.record(z.string(), z.object({ serviceName: z.string() })),
});

/** One span in Zipkin's v2 model. */
export interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  /** Start, microseconds since the epoch. */
  timestamp: number;
  /** Microseconds; absent when Jaeger says 0 (Zipkin's model has no zero duration). */
  duration?: number;
  kind?: 'CLIENT' | 'SERVER' | 'PRODUCER' | 'CONSUMER';
  localEndpoint: { serviceName: string };
  tags: Record<string, string>;
  annotations?: { timestamp: number; value: string }[];
}

/** OpenTelemetry's span kinds as Jaeger tags them (`span.kind`); `internal` has no Zipkin kind. */
const zipkinKinds: Record<string, ZipkinSpan['kind']> = { server: 'SERVER', client: 'CLIENT', producer: 'PRODUCER', consumer: 'CONSUMER' };

/** A tag's value as Zipkin wants it: a string (numbers, booleans and arrays in their JSON form). */
function tagText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A span log's text: its `event` field, else its fields as `key=value`. */
function annotationText(fields: z.infer<typeof jaegerKeyValueSchema>[]): string {
  const event = fields.find((field) => field.key === 'event');
  if (event) return tagText(event.value);
  return fields.map((field) => `${field.key}=${tagText(field.value)}`).join(' ');
}

/**
 * The Zipkin v2 spans of a Jaeger trace. Throws, naming the field, when `trace` is not a Jaeger trace (one
 * element of the query API's `data`), or when a span names a process the trace does not list.
 */
export function jaegerTraceToZipkin(trace: unknown): ZipkinSpan[] {
  const parsed = jaegerTraceSchema.safeParse(trace);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(trace)'}: ${issue.message}`).join('; ');
    throw new Error(`not a trace of Jaeger's query API (/api/traces/<id> data[0]): ${issues}`);
  }
  return parsed.data.spans.map((span) => {
    const process = parsed.data.processes[span.processID];
    if (!process) throw new Error(`span ${span.spanID} (${span.operationName}) names process "${span.processID}", which the trace's processes do not hold (${Object.keys(parsed.data.processes).join(', ')})`);
    const references = (span.references ?? []).filter((reference) => reference.traceID === span.traceID);
    const parent = references.find((reference) => reference.refType === 'CHILD_OF') ?? references[0];
    const tags: Record<string, string> = {};
    let kind: ZipkinSpan['kind'];
    for (const tag of span.tags ?? []) {
      if (tag.key === 'span.kind') kind = zipkinKinds[tagText(tag.value)];
      else tags[tag.key] = tagText(tag.value);
    }
    const annotations = (span.logs ?? []).map((log) => ({ timestamp: log.timestamp, value: annotationText(log.fields) }));
    return {
      traceId: span.traceID.padStart(32, '0'),
      id: span.spanID.padStart(16, '0'),
      ...(parent ? { parentId: parent.spanID.padStart(16, '0') } : {}),
      name: span.operationName,
      timestamp: span.startTime,
      ...(span.duration > 0 ? { duration: span.duration } : {}),
      ...(kind ? { kind } : {}),
      localEndpoint: { serviceName: process.serviceName },
      tags,
      ...(annotations.length > 0 ? { annotations } : {}),
    };
  });
}

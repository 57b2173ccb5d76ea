import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * A plain OTLP/HTTP trace receiver, as any backend's front door is: `POST /v1/traces` with an
 * `ExportTraceServiceRequest` in OTLP JSON (what errand's exporter sends) or protobuf
 * (`application/x-protobuf`, what most other exporters send), gzip or not; answers 200 with an empty
 * `ExportTraceServiceResponse`. It keeps every span, flattened: ids in hex, attributes as plain values,
 * the resource's `service.name` beside each span. Nothing of errand or of the OpenTelemetry SDK reads
 * them back, so a test sees what left the process.
 */

/** An attribute value as OTLP carries it (one of the `*Value` fields). */
interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
}

interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  attributes?: OtlpKeyValue[];
  status?: { code?: number; message?: string };
}

interface OtlpTraceRequest {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[] }[];
}

/** A received span. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId?: string;
  name: string;
  kind: number;
  /** The resource's `service.name`. */
  service: string;
  /** The instrumentation scope's name. */
  scope: string;
  attributes: Record<string, AttributeValue>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export type AttributeValue = string | number | boolean | AttributeValue[] | undefined;

/** A running receiver. */
export interface OtlpReceiver {
  /** The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` is appended by exporters). */
  url: string;
  /** Every span received so far (live). */
  readonly spans: ReceivedSpan[];
  /** Export requests received, by content type (`application/json`, `application/x-protobuf`). */
  readonly requests: { contentType: string; spans: number }[];
  close(): Promise<void>;
}

function plain(value: OtlpAnyValue | undefined): AttributeValue {
  if (value === undefined) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  return undefined;
}

function attributes(list: OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, plain(entry.value)]));
}

/** OTLP JSON gives ids in hex; protobuf decoded to an object gives them in base64. */
function hexId(id: string | undefined, base64: boolean): string | undefined {
  if (id === undefined || id === '') return undefined;
  return base64 ? Buffer.from(id, 'base64').toString('hex') : id.toLowerCase();
}

/** Decodes a protobuf export with the OTLP message types the exporter package ships (generated protobufjs code). */
function decodeProtobuf(body: Buffer): OtlpTraceRequest {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- generated CommonJS code, no types of its own
  const root = require('@opentelemetry/otlp-transformer/build/src/generated/root') as { opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: { decode(bytes: Uint8Array): unknown; toObject(message: unknown, options: object): unknown } } } } } } };
  const type = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
  return type.toObject(type.decode(body), { longs: String, bytes: String, defaults: false }) as OtlpTraceRequest;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

/** Starts the receiver on a free loopback port. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: { contentType: string; spans: number }[] = [];
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    if (request.method !== 'POST' || request.url?.split('?')[0] !== '/v1/traces') {
      response.writeHead(404).end();
      return;
    }
    const contentType = (request.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    const body = await readBody(request);
    const protobuf = contentType === 'application/x-protobuf';
    if (!protobuf && contentType !== 'application/json') {
      response.writeHead(415, { 'content-type': 'text/plain' }).end(`unsupported content type "${contentType}"`);
      return;
    }
    const parsed = protobuf ? decodeProtobuf(body) : (JSON.parse(body.toString('utf8')) as OtlpTraceRequest);
    let count = 0;
    for (const resourceSpans of parsed.resourceSpans ?? []) {
      const resource = attributes(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          const parent = hexId(span.parentSpanId, protobuf);
          spans.push({
            traceId: hexId(span.traceId, protobuf) ?? '',
            spanId: hexId(span.spanId, protobuf) ?? '',
            ...(parent ? { parentSpanId: parent } : {}),
            name: span.name,
            kind: span.kind ?? 0,
            service: String(resource['service.name'] ?? ''),
            scope: scopeSpans.scope?.name ?? '',
            attributes: attributes(span.attributes),
            statusCode: span.status?.code ?? 0,
          });
          count += 1;
        }
      }
    }
    requests.push({ contentType, spans: count });
    // An empty ExportTraceServiceResponse: everything accepted.
    if (protobuf) response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    else response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  };
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(400, { 'content-type': 'text/plain' });
      response.end(error instanceof Error ? error.message : String(error));
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise<void>((closed) => {
        server.closeAllConnections();
        server.close(() => closed());
      }),
  };
}

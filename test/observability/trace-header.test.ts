import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { TRACE_HEADER } from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { withTraceHeaders } from '../../src/api/temporal-client-provider';
import { startRequestJson } from '../../src/api/temporal-http-start';
import { createCliContext, traceparentEnv } from '../../src/cli/cli-context';
import { formatLogLine } from '../../src/observability/json-logger';
import { subagentStartOptions, traceHeader, traceHeaderInterceptor, traceHeaderKey } from '../../src/observability/start-options';
import { checkTraceparent, errandTracer } from '../../src/observability/trace-context';
import { tracingSettings } from '../../src/observability/tracing';

/**
 * How trace context crosses errand's edges without a receiver: the start header both start paths send (in
 * the interceptors' key and payload format), the CLI's `TRACEPARENT`, the ids on log lines, and the checks
 * of the tracing settings. The whole path through a real receiver is traces.test.ts.
 */

// The SDK's provider registered for this file (its own process): W3C propagator and context manager.
const provider = new NodeTracerProvider();
beforeAll(() => {
  provider.register();
});
afterAll(async () => {
  await provider.shutdown();
});

/** Runs `fn` inside a fresh active span; answers what it answers and the span's ids. */
function inActiveSpan<T>(fn: () => T): { value: T; traceId: string; spanId: string } {
  const span = errandTracer().startSpan('test');
  try {
    const value = context.with(trace.setSpan(context.active(), span), fn);
    const { traceId, spanId } = span.spanContext();
    return { value, traceId, spanId };
  } finally {
    span.end();
  }
}

function carrierOf(payload: Payload | undefined): Record<string, string> {
  expect(payload).toBeDefined();
  return defaultPayloadConverter.fromPayload(payload as Payload);
}

describe('the start header', () => {
  it('uses the OpenTelemetry interceptors\' header key', () => {
    expect(traceHeaderKey).toBe(TRACE_HEADER);
  });

  it('is empty outside a span and carries the active span as a W3C traceparent inside one', () => {
    expect(traceHeader()).toEqual({});
    const { value, traceId, spanId } = inActiveSpan(() => traceHeader());
    expect(carrierOf(value[traceHeaderKey]).traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });

  it('goes into a start through Temporal\'s HTTP API and through the SDK client alike', async () => {
    const input = { label: 'traced', prompt: 'hello', system: {}, route: { provider: 'p', model: 'm' }, toolsets: [], workingDir: '/srv/work', maxTurns: 3, depth: 0, maxDepth: 1 } as unknown as Parameters<typeof subagentStartOptions>[0];
    const visible = subagentStartOptions(input, { workflowId: 'errand-trace-1' });
    const request = { workflowType: 'subagentWorkflow', workflowId: 'errand-trace-1', taskQueue: 'q', args: [input], visible };
    // Outside a span the HTTP request's header stays empty, as the SDK's is.
    expect((JSON.parse(startRequestJson({ namespace: 'default' }, request, 'r-1')) as { header: unknown }).header).toEqual({});
    const http = inActiveSpan(() => JSON.parse(startRequestJson({ namespace: 'default' }, request, 'r-2')) as { header: { fields: Record<string, { metadata: Record<string, string>; data: string }> } });
    const field = http.value.header.fields[traceHeaderKey];
    expect(field).toBeDefined();
    const decoded = JSON.parse(Buffer.from(field?.data ?? '', 'base64').toString('utf8')) as Record<string, string>;
    expect(decoded.traceparent).toBe(`00-${http.traceId}-${http.spanId}-01`);
    expect(Buffer.from(field?.metadata.encoding ?? '', 'base64').toString('utf8')).toBe('json/plain');

    // The SDK client's interceptor: what reaches the next step of the chain.
    let seen: Record<string, Payload> = {};
    const start = traceHeaderInterceptor.start;
    expect(start).toBeDefined();
    const sdk = inActiveSpan(() =>
      start?.({ workflowType: 'subagentWorkflow', headers: {}, options: { taskQueue: 'q', workflowId: 'errand-trace-2', args: [] } }, (next) => {
        seen = next.headers;
        return Promise.resolve('run');
      }),
    );
    await sdk.value;
    expect(carrierOf(seen[traceHeaderKey]).traceparent).toBe(`00-${sdk.traceId}-${sdk.spanId}-01`);
  });
});

describe('the API\'s client', () => {
  it('gets the trace header interceptor in front of its own, once', async () => {
    const own: WorkflowClientInterceptor = { start: (input, next) => next(input) };
    const client = new Client({ interceptors: { workflow: [own] } });
    try {
      const traced = withTraceHeaders(client);
      expect(traced).not.toBe(client);
      expect(traced.options.interceptors.workflow).toEqual([traceHeaderInterceptor, own]);
      expect(traced.options.namespace).toBe(client.options.namespace);
      expect(withTraceHeaders(traced)).toBe(traced);
    } finally {
      await client.connection.close();
    }
  });
});

describe('log lines', () => {
  it('carry the active span\'s trace and span ids, and none outside a span', () => {
    const outside = JSON.parse(formatLogLine('INFO', 'plain', undefined, [])) as Record<string, unknown>;
    expect(outside.trace_id).toBeUndefined();
    const inside = inActiveSpan(() => JSON.parse(formatLogLine('INFO', 'traced', { workflowId: 'w' }, [])) as Record<string, unknown>);
    expect(inside.value).toMatchObject({ message: 'traced', trace_id: inside.traceId, span_id: inside.spanId, workflowId: 'w' });
  });
});

describe('the CLI', () => {
  it('sends TRACEPARENT with its API requests, and names TRACEPARENT when it is malformed', async () => {
    const received: IncomingHttpHeaders[] = [];
    const server = createServer((request, response) => {
      received.push(request.headers);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const io = { stdout: () => undefined, stderr: () => undefined, interactive: false };
    try {
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const traced = createCliContext(io, { ERRAND_API_URL: url, [traceparentEnv]: traceparent }, process.cwd());
      expect((await traced.transport().request('GET', '/healthz')).status).toBe(200);
      expect(received[0]?.traceparent).toBe(traceparent);

      const plain = createCliContext(io, { ERRAND_API_URL: url }, process.cwd());
      await plain.transport().request('GET', '/healthz');
      expect(received[1]?.traceparent).toBeUndefined();

      const broken = createCliContext(io, { ERRAND_API_URL: url, [traceparentEnv]: 'not-a-trace' }, process.cwd());
      await expect(broken.transport().request('GET', '/healthz')).rejects.toThrow(/TRACEPARENT must be a W3C traceparent .* \(got "not-a-trace"\)/);
      expect(received).toHaveLength(2);
    } finally {
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
    }
  });

  it('refuses an all-zero trace or span id', () => {
    expect(() => checkTraceparent('00-00000000000000000000000000000000-b7ad6b7169203331-01', 'TRACEPARENT')).toThrow(/non-zero ids/);
    expect(() => checkTraceparent('00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01', 'TRACEPARENT')).toThrow(/non-zero ids/);
  });
});

describe('tracing settings', () => {
  it('are off without an endpoint, or with OTEL_SDK_DISABLED=true', () => {
    expect(tracingSettings('api', {})).toBeUndefined();
    expect(tracingSettings('api', { OTEL_EXPORTER_OTLP_ENDPOINT: '  ' })).toBeUndefined();
    expect(tracingSettings('api', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
  });

  it('take the endpoint, the traces endpoint first, and name the service after the role unless OTEL_SERVICE_NAME is set', () => {
    expect(tracingSettings('worker', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318' })).toEqual({ endpoint: { setting: 'OTEL_EXPORTER_OTLP_ENDPOINT', url: 'http://localhost:4318' }, serviceName: 'errand-worker' });
    expect(tracingSettings('api', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/v1/traces', OTEL_SERVICE_NAME: 'billing-agents' })).toEqual({
      endpoint: { setting: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', url: 'https://b/v1/traces' },
      serviceName: 'billing-agents',
    });
  });

  it('name the variable and the valid form when the endpoint is not an http(s) URL', () => {
    expect(() => tracingSettings('api', { OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL .*not gRPC.*got "localhost:4318"/);
    expect(() => tracingSettings('api', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'not a url' })).toThrow(/OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http:\/\/ or https:\/\/ URL .*got "not a url"/);
  });
});

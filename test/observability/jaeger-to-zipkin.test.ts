import { describe, expect, it } from 'vitest';
import { jaegerTraceToZipkin } from '../support/jaeger-to-zipkin';

/** A trace as Jaeger v2's query API answers it: a server span, an internal child with a log, a client grandchild. */
const jaegerTrace = {
  traceID: '4bf92f3577b34da6a3ce929d0e0e4736',
  spans: [
    {
      traceID: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanID: '00f067aa0ba902b7',
      operationName: 'POST /v1/sessions',
      references: [],
      startTime: 1_796_227_803_000_000,
      duration: 41_250,
      tags: [
        { key: 'span.kind', type: 'string', value: 'server' },
        { key: 'http.response.status_code', type: 'int64', value: 201 },
        { key: 'http.route', type: 'string', value: '/v1/sessions' },
      ],
      logs: [],
      processID: 'p1',
    },
    {
      traceID: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanID: '1a2b3c4d5e6f7081',
      operationName: 'RunWorkflow:sessionWorkflow',
      references: [{ refType: 'CHILD_OF', traceID: '4bf92f3577b34da6a3ce929d0e0e4736', spanID: '00f067aa0ba902b7' }],
      startTime: 1_796_227_803_020_000,
      duration: 0,
      tags: [
        { key: 'span.kind', type: 'string', value: 'internal' },
        { key: 'error', type: 'bool', value: true },
      ],
      logs: [{ timestamp: 1_796_227_803_030_000, fields: [{ key: 'event', type: 'string', value: 'exception' }] }],
      processID: 'p2',
    },
    {
      traceID: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanID: '2b3c4d5e6f708192',
      operationName: 'chat scripted-model',
      references: [{ refType: 'CHILD_OF', traceID: '4bf92f3577b34da6a3ce929d0e0e4736', spanID: '1a2b3c4d5e6f7081' }],
      startTime: 1_796_227_803_025_000,
      duration: 1_500,
      tags: [
        { key: 'span.kind', type: 'string', value: 'client' },
        { key: 'gen_ai.response.finish_reasons', type: 'string', value: '["stop"]' },
        { key: 'errand.cost_usd', type: 'float64', value: 0.000123 },
      ],
      processID: 'p1',
    },
  ],
  processes: { p1: { serviceName: 'errand-api', tags: [] }, p2: { serviceName: 'errand-worker' } },
};

describe("Jaeger's query API trace to Zipkin's v2 spans", () => {
  it('keeps ids, parents, names, times and services; moves span.kind to kind; makes every tag a string; turns logs into annotations', () => {
    expect(jaegerTraceToZipkin(jaegerTrace)).toEqual([
      {
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        id: '00f067aa0ba902b7',
        name: 'POST /v1/sessions',
        timestamp: 1_796_227_803_000_000,
        duration: 41_250,
        kind: 'SERVER',
        localEndpoint: { serviceName: 'errand-api' },
        tags: { 'http.response.status_code': '201', 'http.route': '/v1/sessions' },
      },
      {
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        id: '1a2b3c4d5e6f7081',
        parentId: '00f067aa0ba902b7',
        name: 'RunWorkflow:sessionWorkflow',
        timestamp: 1_796_227_803_020_000,
        localEndpoint: { serviceName: 'errand-worker' },
        tags: { error: 'true' },
        annotations: [{ timestamp: 1_796_227_803_030_000, value: 'exception' }],
      },
      {
        traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
        id: '2b3c4d5e6f708192',
        parentId: '1a2b3c4d5e6f7081',
        name: 'chat scripted-model',
        timestamp: 1_796_227_803_025_000,
        duration: 1_500,
        kind: 'CLIENT',
        localEndpoint: { serviceName: 'errand-api' },
        tags: { 'gen_ai.response.finish_reasons': '["stop"]', 'errand.cost_usd': '0.000123' },
      },
    ]);
  });

  it('pads short ids to the lengths Zipkin requires', () => {
    const [span] = jaegerTraceToZipkin({
      traceID: 'abc',
      spans: [{ traceID: 'abc', spanID: 'f1', operationName: 'x', startTime: 1, duration: 2, processID: 'p' }],
      processes: { p: { serviceName: 's' } },
    });
    expect(span?.traceId).toBe('00000000000000000000000000000abc');
    expect(span?.id).toBe('00000000000000f1');
  });

  it('refuses what is not a Jaeger trace, naming the field', () => {
    expect(() => jaegerTraceToZipkin({ traceID: 't', spans: [{ ...jaegerTrace.spans[0], startTime: 'soon' }], processes: {} })).toThrow(/spans\.0\.startTime/);
    expect(() => jaegerTraceToZipkin({ traceID: 't', spans: [], processes: {} })).toThrow(/spans: a trace with at least one span/);
    expect(() => jaegerTraceToZipkin({ ...jaegerTrace, processes: { p1: { serviceName: 'errand-api' } } })).toThrow(/names process "p2"/);
  });
});

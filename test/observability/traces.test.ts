import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pricedUsage } from '../../src/domain/model-cost';
import { configureLogging } from '../../src/observability/json-logger';
import { startTracing, stopTracing, type Tracing } from '../../src/observability/tracing';
import { eventually, json, postJson, startApiStack, type ApiStack } from '../api/api-harness';
import { jaegerTrace, startJaeger, tagOf, type JaegerSpan, type JaegerTrace, type RunningJaeger } from '../support/jaeger';
import { temporalHttpUrl } from '../support/temporal';
import { traceScenarioAnswer as answer, traceScenarioChildAnswer, traceScenarioPrices as prices, traceScenarioSessionMessage } from './trace-scenario';

/**
 * Traces end to end, against a real Jaeger (OTLP/HTTP in, its query API out) and the run's dev server:
 * an API request that brings a `traceparent` starts a session (through Temporal's HTTP API), the session
 * delegates a child, the child calls the (scripted) model and a tool; a delegation started with an
 * Idempotency-Key goes the SDK client's way. Each must come out as one trace whose spans descend from the
 * request's, with the GenAI attributes on the model span and the tool's name on the tool span.
 */

/** A W3C traceparent of a fresh trace, as a caller's own span would send it. */
function callerTraceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

function parentOf(span: JaegerSpan): string | undefined {
  return span.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID;
}

/** The operation names from `span` up to the trace's root (the span itself first). */
function ancestry(trace: JaegerTrace, span: JaegerSpan): string[] {
  const byId = new Map(trace.spans.map((candidate) => [candidate.spanID, candidate]));
  const names: string[] = [];
  // Bounded by the number of spans: each step goes one parent up.
  for (let current: JaegerSpan | undefined = span; current && names.length <= trace.spans.length; current = byId.get(parentOf(current) ?? '')) names.push(current.operationName);
  return names;
}

function only(trace: JaegerTrace, name: string, filter: (span: JaegerSpan) => boolean = () => true): JaegerSpan {
  const spans = trace.spans.filter((span) => span.operationName === name && filter(span));
  expect(spans.map((span) => span.operationName), `spans named ${name} in ${trace.spans.map((span) => span.operationName).join(', ')}`).toHaveLength(1);
  return spans[0] as JaegerSpan;
}

/** Waits until Jaeger holds the trace with every named span. */
async function traceWith(queryUrl: string, traceId: string, names: string[]): Promise<JaegerTrace> {
  return eventually(async () => {
    await tracing?.flush();
    const trace = await jaegerTrace(queryUrl, traceId);
    const present = new Set(trace?.spans.map((span) => span.operationName));
    return trace && names.every((name) => present.has(name)) ? trace : undefined;
  }, 60_000);
}

let jaeger: RunningJaeger;
let tracing: Tracing | undefined;
let stack: ApiStack;
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  jaeger = await startJaeger();
  tracing = await startTracing('api', { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl });
  configureLogging({ level: 'INFO', destination: (line) => logLines.push(JSON.parse(line) as Record<string, unknown>) });
  stack = await startApiStack({
    answer,
    extraEnv: {
      // Plain starts through Temporal's HTTP API; a start with an Idempotency-Key still takes the SDK client.
      ERRAND_TEMPORAL_HTTP_URL: temporalHttpUrl(),
      ERRAND_PROVIDERS: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: [{ id: 'scripted-model', prices }] }]),
      ERRAND_DEFAULT_MODEL: 'scripted/scripted-model',
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await stopTracing();
  await jaeger?.stop();
  configureLogging({});
});

describe('one trace per delegation tree, in Jaeger', () => {
  it('holds API request → session → child → model call → tool call, with the GenAI attributes, for a start through Temporal\'s HTTP API', async () => {
    const caller = callerTraceparent();
    const started = await stack.request('/v1/sessions', postJson({ label: 'traced session', message: traceScenarioSessionMessage }, { headers: { traceparent: caller.header } }));
    expect(started.status).toBe(201);
    const { id } = (await json(started)) as { id: string };
    await eventually(async () => {
      const body = await json(await stack.request(`/v1/sessions/${encodeURIComponent(id)}`));
      const entries = (body.transcript as { entries: { role: string; text: string }[] }).entries;
      return entries.some((entry) => entry.role === 'assistant' && entry.text.includes(traceScenarioChildAnswer)) ? true : undefined;
    }, 45_000);
    // The session's own span ends with the session.
    expect((await stack.request(`/v1/sessions/${encodeURIComponent(id)}/cancel`, postJson({ reason: 'trace test done' }, { headers: { traceparent: caller.header } }))).status).toBe(202);
    await stack.client.workflow.getHandle(id).result();

    const toolName = 'developer__list_directory';
    const trace = await traceWith(jaeger.queryUrl, caller.traceId, ['POST /v1/sessions', 'RunWorkflow:sessionWorkflow', 'RunWorkflow:subagentWorkflow', `execute_tool ${toolName}`]);

    // The request's span is the child of the caller's span, and the root of everything else.
    const request = only(trace, 'POST /v1/sessions');
    expect(parentOf(request)).toBe(caller.spanId);
    expect(tagOf(request, 'http.route')).toBe('/v1/sessions');
    expect(tagOf(request, 'http.response.status_code')).toBe(201);
    expect(tagOf(request, 'errand.tenant')).toBe('acme');
    const session = only(trace, 'RunWorkflow:sessionWorkflow');
    expect(parentOf(session)).toBe(request.spanID);

    // The child's tool call descends from the child workflow, which descends from the session and the request.
    const tool = only(trace, `execute_tool ${toolName}`);
    expect(tagOf(tool, 'gen_ai.tool.name')).toBe(toolName);
    expect(tagOf(tool, 'gen_ai.operation.name')).toBe('execute_tool');
    expect(tagOf(tool, 'gen_ai.tool.call.id')).toBe('ls-1');
    expect(tagOf(tool, 'span.kind')).toBe('internal');
    const toolPath = ancestry(trace, tool);
    expect(toolPath[0]).toBe(`execute_tool ${toolName}`);
    expect(toolPath).toContain('RunWorkflow:subagentWorkflow');
    expect(toolPath, toolPath.join(' <- ')).toContain('StartChildWorkflow:subagentWorkflow');
    expect(toolPath.indexOf('RunWorkflow:subagentWorkflow')).toBeLessThan(toolPath.indexOf('RunWorkflow:sessionWorkflow'));
    expect(toolPath.slice(-2)).toEqual(['RunWorkflow:sessionWorkflow', 'POST /v1/sessions']);

    // Every model call is a GenAI span; the child's first one sits under the child workflow.
    const models = trace.spans.filter((span) => span.operationName === 'chat scripted-model');
    expect(models.length).toBeGreaterThanOrEqual(4);
    expect(models.some((span) => ancestry(trace, span).includes('RunWorkflow:subagentWorkflow'))).toBe(true);
    expect(models.some((span) => !ancestry(trace, span).includes('RunWorkflow:subagentWorkflow'))).toBe(true);
    for (const span of models) {
      // A call to a provider is a client span (GenAI conventions); tool spans stay internal.
      expect(tagOf(span, 'span.kind')).toBe('client');
      expect(tagOf(span, 'gen_ai.operation.name')).toBe('chat');
      expect(tagOf(span, 'gen_ai.request.model')).toBe('scripted-model');
      expect(tagOf(span, 'gen_ai.system')).toBe('scripted');
      expect(tagOf(span, 'errand.provider')).toBe('scripted');
      const inputTokens = tagOf(span, 'gen_ai.usage.input_tokens');
      const outputTokens = tagOf(span, 'gen_ai.usage.output_tokens');
      expect(typeof inputTokens).toBe('number');
      expect(inputTokens as number).toBeGreaterThan(0);
      expect(typeof outputTokens).toBe('number');
      // The cost is the entry's prices applied to the call's own usage.
      const expected = pricedUsage({ inputTokens: inputTokens as number, outputTokens: outputTokens as number }, prices).costMicroUsd;
      expect(tagOf(span, 'errand.cost_micro_usd')).toBe(expected);
      expect(tagOf(span, 'errand.cost_usd')).toBeCloseTo((expected ?? 0) / 1_000_000, 12);
    }
    const finishReasons = models.map((span) => String(tagOf(span, 'gen_ai.response.finish_reasons')));
    expect(finishReasons.some((reason) => reason.includes('tool-calls'))).toBe(true);
    expect(finishReasons.some((reason) => reason.includes('stop'))).toBe(true);

    // The cancel request joined the same trace; the services are the API's and the worker's (one process here).
    expect(trace.spans.some((span) => span.operationName.startsWith('POST /v1/sessions/') && span.operationName.endsWith('/cancel'))).toBe(true);
    expect(new Set(Object.values(trace.processes).map((process) => process.serviceName))).toEqual(new Set(['errand-api']));

    // The API's request log line carries the request span's ids.
    expect(logLines.some((line) => line.message === 'request' && line.trace_id === caller.traceId && line.span_id === request.spanID)).toBe(true);
  }, 150_000);

  it('holds API request → delegation → model call → tool call for a start through the SDK client (Idempotency-Key)', async () => {
    const caller = callerTraceparent();
    const started = await stack.request('/v1/delegations?wait=20s', postJson({ instructions: 'List the folder [trace-delegation]' }, { headers: { traceparent: caller.header, 'idempotency-key': `trace-${caller.spanId}` } }));
    expect([200, 201]).toContain(started.status);
    const body = (await json(started)) as { id: string; result?: { status: string } };
    const result = (await json(await stack.request(`/v1/delegations/${encodeURIComponent(body.id)}/result?wait=20s`))) as { result?: { status: string } };
    expect(result.result?.status).toBe('completed');

    const trace = await traceWith(jaeger.queryUrl, caller.traceId, ['POST /v1/delegations', 'RunWorkflow:subagentWorkflow', 'execute_tool developer__list_directory', 'chat scripted-model']);
    const request = only(trace, 'POST /v1/delegations');
    expect(parentOf(request)).toBe(caller.spanId);
    expect(parentOf(only(trace, 'RunWorkflow:subagentWorkflow'))).toBe(request.spanID);
    const toolPath = ancestry(trace, only(trace, 'execute_tool developer__list_directory'));
    expect(toolPath.slice(-2)).toEqual(['RunWorkflow:subagentWorkflow', 'POST /v1/delegations']);
  }, 120_000);
});

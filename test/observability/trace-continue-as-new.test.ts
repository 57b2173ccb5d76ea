import { afterAll, beforeAll, expect, test } from 'vitest';
import { cancelSignal, peekQuery, sendMessageUpdate } from '../../src/contracts/subagent-messages';
import type { SubagentPeek } from '../../src/contracts/subagent-result';
import { inSpan } from '../../src/observability/trace-context';
import { startTracing, stopTracing, type Tracing } from '../../src/observability/tracing';
import { subagentStartOptions, traceHeaderInterceptor } from '../../src/observability/start-options';
import { sendUpdateAcrossRunChange } from '../../src/temporal/temporal-update-retry';
import { ConversationScripts } from '../support/conversation-scripts';
import { jaegerTrace, startJaeger, type JaegerSpan, type JaegerTrace, type RunningJaeger } from '../support/jaeger';
import { ownTemporalServer, type OwnServer } from '../support/own-temporal-server';
import { subagentInput } from '../support/temporal';
import { useWorkerStack } from '../support/worker-stack';

/**
 * The trace crosses continue-as-new (SEMANTICS §6 "Traces"): a continuable subagent started inside a
 * caller's span, on a server of its own whose continue-as-new threshold is low, takes messages until its
 * run continues as new, then one more. In a real Jaeger, both runs are spans of the caller's trace: the
 * second run's span descends from the first run's through the continue-as-new span, and the model call the
 * last message caused is a child of the second run.
 */

let server: OwnServer;
let jaeger: RunningJaeger;
let tracing: Tracing | undefined;
const scripts = new ConversationScripts();

beforeAll(async () => {
  jaeger = await startJaeger();
  tracing = await startTracing('worker', { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl });
  server = await ownTemporalServer({ label: 'trace-can', dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 40 } })();
}, 240_000);

// Registered before the stack, so it runs after the worker has stopped.
afterAll(async () => {
  await server?.stop();
  await stopTracing();
  await jaeger?.stop();
});

const stack = useWorkerStack(() => ({
  label: 'trace-can',
  address: server.address,
  scripted: { scripted: { model: scripts.model } },
  // As errand's API and CLI make their clients: the active trace goes into every start, signal and update.
  interceptors: { workflow: [traceHeaderInterceptor] },
}));

function parentOf(span: JaegerSpan): string | undefined {
  return span.references.find((reference) => reference.refType === 'CHILD_OF')?.spanID;
}

function ancestry(trace: JaegerTrace, span: JaegerSpan): JaegerSpan[] {
  const byId = new Map(trace.spans.map((candidate) => [candidate.spanID, candidate]));
  const path: JaegerSpan[] = [];
  // Bounded by the number of spans: each step goes one parent up.
  for (let current: JaegerSpan | undefined = span; current && path.length <= trace.spans.length; current = byId.get(parentOf(current) ?? '')) path.push(current);
  return path;
}

async function until<T>(read: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}

test('a continuable that continues as new stays in its starter\'s trace, the second run under the first', async () => {
  const marker = scripts.add('trace-can', (request) => {
    const last = [...request.messages].reverse().find((message) => message.role === 'user');
    return { text: `noted: ${last?.role === 'user' ? last.content.slice(0, 40) : ''}` };
  });
  const { client, taskQueue, workingDir } = stack;
  const workflowId = stack.nextId('trace-can');
  const input = subagentInput({ prompt: `Take notes ${marker}`, workingDir, continuable: true, maxTurns: 100, toolsets: [] });
  const caller = await inSpan('caller', {}, async (span) => {
    await client.workflow.start('subagentWorkflow', { taskQueue, workflowId, args: [input], ...subagentStartOptions(input, { workflowId, startedBy: 'test' }) });
    return span.spanContext();
  });
  const handle = client.workflow.getHandle(workflowId);
  const firstRun = (await handle.describe()).runId;
  const waiting = () => until(async () => ((await handle.query(peekQuery)) as SubagentPeek).state === 'waiting' || undefined, 'the subagent to wait');
  await waiting();

  // Messages until the server's suggestion (40 events) makes the waiting run continue as new.
  let sent = 0;
  for (; sent < 20 && (await handle.describe()).runId === firstRun; sent += 1) {
    await sendUpdateAcrossRunChange(() => client.workflow.getHandle(workflowId).executeUpdate(sendMessageUpdate, { args: [{ message: `note ${sent}` }], updateId: `note-${sent}` }));
    await waiting();
  }
  const secondRun = (await handle.describe()).runId;
  expect(secondRun, `the run continued as new within ${sent} messages`).not.toBe(firstRun);
  await sendUpdateAcrossRunChange(() => client.workflow.getHandle(workflowId).executeUpdate(sendMessageUpdate, { args: [{ message: 'after the new run' }], updateId: 'after' }));
  await until(async () => scripts.of('trace-can').some((request) => JSON.stringify(request.messages).includes('after the new run')) || undefined, 'the model call of the last message');
  await waiting();
  await handle.signal(cancelSignal, { reason: 'trace test done' });
  await handle.result().catch(() => undefined);

  const trace = await until(async () => {
    await tracing?.flush();
    const found = await jaegerTrace(jaeger.queryUrl, caller.traceId);
    const runs = found?.spans.filter((span) => span.operationName === 'RunWorkflow:subagentWorkflow') ?? [];
    return found && runs.length >= 2 ? found : undefined;
  }, 'both runs in Jaeger');

  const runs = trace.spans.filter((span) => span.operationName === 'RunWorkflow:subagentWorkflow');
  const runOf = (span: JaegerSpan) => span.tags.find((tag) => tag.key === 'run_id')?.value;
  const first = runs.find((span) => runOf(span) === firstRun);
  const second = runs.find((span) => runOf(span) === secondRun);
  expect(first, runs.map((span) => String(runOf(span))).join(', ')).toBeDefined();
  expect(second).toBeDefined();
  expect(parentOf(first as JaegerSpan)).toBe(caller.spanId);
  // The second run descends from the first through its continue-as-new span.
  const path = ancestry(trace, second as JaegerSpan).map((span) => span.operationName);
  expect(path.slice(1, 3)).toEqual(['ContinueAsNew:subagentWorkflow', 'RunWorkflow:subagentWorkflow']);
  expect(ancestry(trace, second as JaegerSpan)[2]?.spanID).toBe(first?.spanID);
  // The last message's model call is in the second run.
  const secondRunCalls = trace.spans.filter((span) => span.operationName === 'StartActivity:modelTurn' && parentOf(span) === second?.spanID);
  expect(secondRunCalls.length).toBeGreaterThanOrEqual(1);
}, 240_000);

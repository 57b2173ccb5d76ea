import { tsToMs } from '@temporalio/common/lib/time';
import { cancelSignal } from '../../src/contracts/subagent';
import { benchModel, benchProviders, benchSubagentInput, sleep, startErrandWorker, startErrandWorkerWith, uniqueId, type Bench, type InProcessWorker } from '../harness';
import type { FigureResult } from '../figure';
import { benchMarker, markerOf, openAIMessages } from '../scripted-answers';
import { percentile, round, summarize } from '../stats';

/**
 * Figure 5, cancel latency: a subagent whose model call (openai-compatible provider → the scripted HTTP
 * server) is held open; from sending the cancel signal to the server seeing that request aborted. The
 * signal is sent at staggered moments after the request arrived, so samples see different phases of the
 * activity's heartbeat cycle.
 */
async function sample(bench: Bench, taskQueue: string, index: number): Promise<{ latencyMs: number; toRequestedMs: number | undefined }> {
  const id = uniqueId('bench-cancel');
  const handle = await bench.client.workflow.start('subagentWorkflow', {
    taskQueue,
    workflowId: id,
    args: [benchSubagentInput(bench, `Take your time. ${benchMarker({ cancel: id, delay: 120_000 })}`, { route: { provider: benchProviders.http, model: benchModel } })],
  });
  const mine = () => bench.http.requests.find((record) => markerOf(openAIMessages(record.body))?.cancel === id);
  await bench.http.waitFor(() => mine() !== undefined, 30_000, `the model request of ${id}`);
  // Staggered: 0 .. 2.9 s after the request arrived, in steps that do not divide the 1 s heartbeat interval.
  await sleep((index * 370) % 3_000);
  const signalledAt = Date.now();
  await handle.signal(cancelSignal, { reason: 'bench cancel' });
  await bench.http.waitFor(() => mine()?.aborted === true, 60_000, `the model request of ${id} to be aborted`);
  const latencyMs = (mine()?.finishedAt ?? Date.now()) - signalledAt;
  await handle.result();
  const history = await handle.fetchHistory();
  const requested = history.events?.find((event) => event.activityTaskCancelRequestedEventAttributes);
  return { latencyMs, toRequestedMs: requested ? tsToMs(requested.eventTime) - signalledAt : undefined };
}

async function samples(bench: Bench, start: (taskQueue: string) => Promise<InProcessWorker>, count: number): Promise<{ latencies: number[]; toRequested: number[] }> {
  const taskQueue = uniqueId('bench-cancel');
  const worker = await start(taskQueue);
  const latencies: number[] = [];
  const toRequested: number[] = [];
  try {
    for (let index = 0; index < count; index += 1) {
      const result = await sample(bench, taskQueue, index);
      latencies.push(result.latencyMs);
      if (result.toRequestedMs !== undefined) toRequested.push(result.toRequestedMs);
    }
  } finally {
    await worker.stop();
  }
  return { latencies, toRequested };
}

export async function measureCancelLatency(bench: Bench, count: number, whatIfCount: number): Promise<FigureResult> {
  const { latencies, toRequested: toCancelRequested } = await samples(bench, (queue) => startErrandWorker(bench, queue), count);
  // What-if: the same worker with heartbeats sent at most 1 s apart (Temporal otherwise throttles them to 0.8 x the heartbeat timeout).
  const whatIf = await samples(bench, (queue) => startErrandWorkerWith(bench, queue, { maxHeartbeatThrottleInterval: '1s' }), whatIfCount);
  const whatIfP99 = percentile(whatIf.latencies, 99);
  const p99 = percentile(latencies, 99);
  const all = summarize(latencies);
  const requested = toCancelRequested.length > 0 ? summarize(toCancelRequested) : undefined;
  const heartbeatTimeout = bench.config.subagent.activity.modelHeartbeatTimeoutMs;
  const notes = [
    `${count} sequential samples; median ${round(all.median)} ms. Heartbeat timeout ${heartbeatTimeout} ms (configuration default); the activity heartbeats every 1 s.`,
    requested
      ? `signal → ActivityTaskCancelRequested in history: median ${round(requested.median)} ms, max ${round(requested.max)} ms; the rest is the cancellation reaching the activity, which happens only on a heartbeat response.`
      : 'no ActivityTaskCancelRequested event found.',
    `what-if, same code with worker option maxHeartbeatThrottleInterval '1s': p99 ${round(whatIfP99)} ms, median ${round(summarize(whatIf.latencies).median)} ms over ${whatIfCount} samples.`,
  ];
  return {
    id: 'cancel-latency-p99',
    description: 'Cancel signal → in-flight model HTTP request aborted (openai-compatible → scripted server), p99',
    value: round(p99),
    unit: 'ms',
    min: round(all.min),
    max: round(all.max),
    target: 'p99 <= 1000 ms',
    met: p99 <= 1000,
    runs: count,
    notes,
  };
}

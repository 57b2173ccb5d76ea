import { tsToMs } from '@temporalio/common/lib/time';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { heartbeatThrottleMs } from '../../src/contracts/limits/workflow';
import { benchModel, benchProviders, benchSubagentInput, sleep, startErrandWorker, uniqueId, type Bench, type InProcessWorker } from '../harness';
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
  // Staggered: 0 .. 1 s after the request arrived, in steps that do not divide the heartbeat interval.
  await sleep((index * 137) % 1_000);
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

export async function measureCancelLatency(bench: Bench, count: number): Promise<FigureResult> {
  const { latencies, toRequested: toCancelRequested } = await samples(bench, (queue) => startErrandWorker(bench, queue), count);
  const p99 = percentile(latencies, 99);
  const all = summarize(latencies);
  const requested = toCancelRequested.length > 0 ? summarize(toCancelRequested) : undefined;
  const heartbeatTimeout = bench.config.subagent.activity.modelHeartbeatTimeoutMs;
  const notes = [
    `${count} sequential samples; median ${round(all.median)} ms. Heartbeat timeout ${heartbeatTimeout} ms (configuration default); live text goes with a heartbeat at most every ${bench.config.model.liveTextIntervalMs} ms and a keep-alive within the heartbeat timeout. The call runs on the worker of its workflow, so the cancel handler's in-flight sink aborts it at once, without waiting for a heartbeat; the activity then heartbeats (at most every ${heartbeatThrottleMs} ms) until the server confirms the cancellation (decision 0022).`,
    requested
      ? `signal → ActivityTaskCancelRequested in history: median ${round(requested.median)} ms, max ${round(requested.max)} ms; the abort itself does not wait for it: the sink runs on the worker right after the workflow task that took the signal.`
      : 'no ActivityTaskCancelRequested event found.',
  ];
  return {
    id: 'cancel-latency-p99',
    description: 'Cancel signal → in-flight model HTTP request aborted (openai-compatible → scripted server), p99',
    value: round(p99),
    unit: 'ms',
    min: round(all.min),
    max: round(all.max),
    target: 'p99 <= 500 ms',
    met: p99 <= 500,
    runs: count,
    notes,
  };
}

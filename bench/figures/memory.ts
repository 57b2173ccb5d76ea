import { join } from 'node:path';
import { defaultMaxCachedWorkflows, defaultWorkflowThreads } from '../../src/contracts/limits/workflow';
import { sendMessageUpdate } from '../../src/contracts/subagent-messages';
import { subagentStartOptions } from '../../src/observability/start-options';
import { benchModel, benchProviders, benchSubagentInput, mapLimit, sleep, spawnWorkerChild, uniqueId, workerStopSignal, waitUntil, type Bench } from '../harness';
import type { FigureResult } from '../figure';
import { answerPosition } from '../restart-accounting';
import { benchMarker, markerOf, openAIMessages } from '../scripted-answers';
import { percentile, round, summarize } from '../stats';

/**
 * Figure 7, scale: resident memory (VmRSS) of one worker child process holding `count` continuable
 * subagents that answered once and now wait for a message, with errand's default workflow cache
 * (`defaultMaxCachedWorkflows`): most of them are evicted and replay from their history when woken.
 * Then the wake-up latency of `wakeSamples` of the earliest-started ones (evicted first: the cache is LRU),
 * woken one at a time: from sending the sendMessage update (what the API's send_message does) to the model
 * server receiving that subagent's next model request ("asked"), and to the server having written the
 * whole answer ("answered").
 */
const answerChars = 200;
const startConcurrency = 50;

export async function measureMemory(bench: Bench, count: number, wakeSamples: number): Promise<FigureResult[]> {
  const taskQueue = uniqueId('bench-memory');
  const worker = await spawnWorkerChild(bench, { name: 'memory-worker', taskQueue, dataDir: join(bench.tempDir, 'data-memory'), modelHeartbeatTimeoutMs: bench.config.subagent.activity.modelHeartbeatTimeoutMs });
  const samples: number[] = [];
  const asked: number[] = [];
  const answered: number[] = [];
  let idleMb = 0;
  let peakMb = 0;
  let startCallsS = 0;
  let allWaitingS = 0;
  const prefix = uniqueId('bench-memory');
  const tagOf = (index: number) => `${prefix}-${index}`;
  try {
    await worker.ready;
    await sleep(2_000);
    idleMb = worker.rssBytes() / 1024 / 1024;
    const started = Date.now();
    const peak = setInterval(() => {
      try {
        peakMb = Math.max(peakMb, worker.rssBytes() / 1024 / 1024);
      } catch {
        // The worker is gone (it died, or the bench is stopping): a timer must not crash the run; what
        // needs the worker next reports it.
        clearInterval(peak);
      }
    }, 500);
    try {
      await mapLimit(Array.from({ length: count }, (_, index) => index), startConcurrency, (index) => {
        const workflowId = tagOf(index);
        const input = benchSubagentInput(bench, `Wait for my messages. ${benchMarker({ memory: workflowId, answer: answerChars })}`, {
          route: { provider: benchProviders.http, model: benchModel },
          continuable: true,
          maxTurns: 10,
        });
        return bench.client.workflow.start('subagentWorkflow', { taskQueue, workflowId, args: [input], ...subagentStartOptions(input, { workflowId, startedBy: 'bench' }) });
      });
      startCallsS = (Date.now() - started) / 1000;
      await waitUntil(async () => {
        const { count: waiting } = await bench.client.workflow.count(`TaskQueue = '${taskQueue}' AND ErrandStatus = 'waiting'`);
        return waiting >= count;
      }, 20 * 60_000, `${count} subagents to wait for a message`, 2_000);
      allWaitingS = (Date.now() - started) / 1000;
      await sleep(2_000);
      for (let index = 0; index < 5; index += 1) {
        samples.push(worker.rssBytes() / 1024 / 1024);
        await sleep(1_000);
      }
    } finally {
      clearInterval(peak);
    }

    // Wake-ups, one at a time, of the earliest-started subagents (the least recently used: evicted).
    const requestOf = (workflowId: string, position: number) => bench.http.requests.find((record) => markerOf(openAIMessages(record.body))?.memory === workflowId && answerPosition(record) === position);
    for (let index = 0; index < Math.min(wakeSamples, count); index += 1) {
      const workflowId = tagOf(index);
      const sentAt = Date.now();
      await bench.client.workflow.getHandle(workflowId).executeUpdate(sendMessageUpdate, { args: [{ message: `Wake up ${index}.`, messageId: `wake-${index}` }] });
      await bench.http.waitFor(() => requestOf(workflowId, 1)?.finishedAt !== undefined, 60_000, `the woken model call of ${workflowId}`);
      const record = requestOf(workflowId, 1);
      if (record?.finishedAt === undefined) throw new Error(`no answered model call for ${workflowId}`);
      asked.push(record.receivedAt - sentAt);
      answered.push(record.finishedAt - sentAt);
    }
  } finally {
    worker.kill(workerStopSignal());
    await worker.exited;
  }
  const rss = summarize(samples);
  const limitMb = 1024;
  const askedP50 = percentile(asked, 50);
  const askedP99 = percentile(asked, 99);
  const answeredSummary = `answered (server wrote the whole ${answerChars}-character answer): p50 ${round(percentile(answered, 50))} ms, p99 ${round(percentile(answered, 99))} ms`;
  const wakeNotes = [
    `wake = from the client sending the sendMessage update (as the API's send_message does) to a waiting continuable subagent, to the scripted model server receiving its next model request; ${wakeSamples} subagents woken one after another, the earliest started (least recently used, so evicted from the worker's cache of ${defaultMaxCachedWorkflows}: each wake replays the workflow from its history before it calls the model).`,
    `${answeredSummary}; the update returns once the message is accepted, then the workflow runs the model call (a normal activity).`,
  ];
  return [
    {
      id: 'worker-memory',
      description: `Worker child RSS with ${count} waiting continuable subagents (default workflow cache of ${defaultMaxCachedWorkflows})`,
      value: round(rss.median, 1),
      unit: 'MB',
      min: round(rss.min, 1),
      max: round(rss.max, 1),
      target: `<= ${limitMb} MB`,
      met: rss.median <= limitMb,
      runs: samples.length,
      notes: [
        `5 samples of /proc/<pid>/status VmRSS, 1 s apart, once all ${count} were waiting. Idle worker before any workflow: ${round(idleMb, 1)} MB; peak while starting them: ${round(peakMb, 1)} MB.`,
        `starting: ${count} start calls (${startConcurrency} at a time) took ${round(startCallsS, 1)} s; all ${count} were waiting (answered once, ErrandStatus = waiting) ${round(allWaitingS, 1)} s after the first start.`,
        `the worker is \`errand worker\` from the bundled CLI with errand's default worker options: at most ${defaultMaxCachedWorkflows} workflows cached (\`ERRAND_WORKER_MAX_CACHED_WORKFLOWS\`), so memory stays flat however many subagents wait, and ${defaultWorkflowThreads} workflow threads (\`ERRAND_WORKER_WORKFLOW_THREADS\`).`,
      ],
    },
    {
      id: 'wake-latency-p50',
      description: `A waiting continuable subagent (evicted from the cache, ${count} waiting on the worker): sendMessage update → its model call asked, p50`,
      value: round(askedP50),
      unit: 'ms',
      min: round(Math.min(...asked)),
      max: round(Math.max(...asked)),
      target: 'reported (no target)',
      met: null,
      runs: asked.length,
      notes: wakeNotes,
    },
    {
      id: 'wake-latency-p99',
      description: 'The same wake-ups, p99',
      value: round(askedP99),
      unit: 'ms',
      min: round(Math.min(...asked)),
      max: round(Math.max(...asked)),
      target: 'reported (no target)',
      met: null,
      runs: asked.length,
      notes: [`with ${asked.length} samples, p99 is the largest.`],
    },
  ];
}

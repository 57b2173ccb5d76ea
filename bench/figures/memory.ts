import { join } from 'node:path';
import { benchModel, benchProviders, benchSubagentInput, mapLimit, sleep, spawnWorkerChild, uniqueId, waitUntil, type Bench } from '../harness';
import type { FigureResult } from '../figure';
import { benchMarker } from '../scripted-answers';
import { round, summarize } from '../stats';

/**
 * Figure 7, memory: resident memory (VmRSS) of a worker child process holding `count` continuable
 * subagents that answered once and now wait for a message (all in the worker's workflow cache).
 */
export async function measureMemory(bench: Bench, count: number): Promise<FigureResult> {
  const taskQueue = uniqueId('bench-memory');
  const worker = spawnWorkerChild(bench, { name: 'memory-worker', taskQueue, dataDir: join(bench.tempDir, 'data-memory'), modelHeartbeatTimeoutMs: bench.config.subagent.activity.modelHeartbeatTimeoutMs });
  const samples: number[] = [];
  let idleMb = 0;
  let startedIn = 0;
  try {
    await worker.ready;
    await sleep(2_000);
    idleMb = worker.rssBytes() / 1024 / 1024;
    const prefix = uniqueId('bench-memory');
    const started = Date.now();
    await mapLimit(Array.from({ length: count }, (_, index) => index), 25, (index) => bench.client.workflow.start('subagentWorkflow', {
      taskQueue,
      workflowId: `${prefix}-${index}`,
      args: [benchSubagentInput(bench, `Wait for my messages. ${benchMarker({ memory: index, answer: 200 })}`, {
        route: { provider: benchProviders.http, model: benchModel },
        continuable: true,
        maxTurns: 10,
      })],
    }));
    await waitUntil(async () => {
      const { count: waiting } = await bench.client.workflow.count(`TaskQueue = '${taskQueue}' AND ErrandStatus = 'waiting'`);
      return waiting >= count;
    }, 300_000, `${count} subagents to wait for a message`, 1_000);
    startedIn = (Date.now() - started) / 1000;
    await sleep(2_000);
    for (let index = 0; index < 5; index += 1) {
      samples.push(worker.rssBytes() / 1024 / 1024);
      await sleep(1_000);
    }
  } finally {
    worker.kill('SIGKILL');
    await worker.exited;
  }
  const rss = summarize(samples);
  return {
    id: 'worker-memory',
    description: `Worker child RSS with ${count} waiting continuable subagents`,
    value: round(rss.median, 1),
    unit: 'MB',
    min: round(rss.min, 1),
    max: round(rss.max, 1),
    target: '<= 600 MB',
    met: rss.median <= 600,
    runs: samples.length,
    notes: [
      `5 samples of /proc/<pid>/status VmRSS, 1 s apart, once all ${count} were waiting (${round(startedIn, 1)} s after the first start). Idle worker before any workflow: ${round(idleMb, 1)} MB, so about ${round(((rss.median - idleMb) * 1024) / count, 1)} KB per waiting subagent.`,
      'the worker runs from TypeScript through tsx (as `npm start` does); default worker tuning, so all waiting workflows stay in the sticky cache.',
    ],
  };
}

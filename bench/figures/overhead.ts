import { benchSubagentInput, startBaselineWorker, startErrandWorker, uniqueId, type Bench } from '../harness';
import type { FigureResult } from '../figure';
import { formatCounts, profileHistory } from '../history-profile';
import { benchMarker } from '../scripted-answers';
import { round, summarize } from '../stats';

/**
 * Figure 1, overhead per turn: one subagent of 50 turns (model call + one list_directory call each, the
 * 50th model call being the final answer) against a bare workflow of 100 sequential no-op activities.
 * Both have 100 activities: errand's are 50 modelTurn + 49 runTool + 1 appendMessages.
 */
const turns = 50;
const baselineActivities = 100;
/** Issue target: errand's orchestration cost per turn on the dev server with durable on-disk state. */
const targetMsPerTurn = 30;

export async function measureOverhead(bench: Bench, repetitions: number): Promise<FigureResult> {
  const errandQueue = uniqueId('bench-overhead-errand');
  const baselineQueue = uniqueId('bench-overhead-baseline');
  const errandWorker = await startErrandWorker(bench, errandQueue);
  const baselineWorker = await startBaselineWorker(bench, baselineQueue);
  const errandMs: number[] = [];
  const baselineMs: number[] = [];
  let lastErrandId = '';
  let lastBaselineId = '';
  try {
    const runErrand = async () => {
      const workflowId = uniqueId('bench-overhead');
      const started = performance.now();
      const result = await bench.client.workflow.execute('subagentWorkflow', {
        taskQueue: errandQueue,
        workflowId,
        args: [benchSubagentInput(bench, `List the folder, ${turns} times. ${benchMarker({ turns })}`, { maxTurns: turns })],
      });
      const elapsed = performance.now() - started;
      if (typeof result !== 'object' || result === null || !('status' in result) || result.status !== 'completed') {
        throw new Error(`overhead run ${workflowId} did not complete: ${JSON.stringify(result)}`);
      }
      lastErrandId = workflowId;
      return elapsed;
    };
    const runBaseline = async () => {
      const workflowId = uniqueId('bench-overhead-bare');
      const started = performance.now();
      await bench.client.workflow.execute('baselineSequentialWorkflow', { taskQueue: baselineQueue, workflowId, args: [baselineActivities] });
      lastBaselineId = workflowId;
      return performance.now() - started;
    };
    // One warm-up each (worker caches, JIT, connection), then interleaved runs so both see the same noise.
    await runErrand();
    await runBaseline();
    for (let index = 0; index < repetitions; index += 1) {
      baselineMs.push(await runBaseline());
      errandMs.push(await runErrand());
    }
  } finally {
    await errandWorker.stop();
    await baselineWorker.stop();
  }
  const errand = summarize(errandMs.map((ms) => ms / turns));
  const baseline = summarize(baselineMs.map((ms) => ms / turns));
  const ratio = errand.median / baseline.median;
  const errandProfile = await profileHistory(bench.client, lastErrandId);
  const baselineProfile = await profileHistory(bench.client, lastBaselineId);
  const notes = [
    `${repetitions} interleaved runs after one warm-up each; value = wall time from start to result / ${turns} turns.`,
    `errand: ${errandProfile.events} history events (${(errandProfile.events / turns).toFixed(1)} per turn), ${errandProfile.workflowTasks} workflow tasks; activities: ${formatCounts(errandProfile.activityCounts)}.`,
    `baseline: ${baselineProfile.events} history events (${(baselineProfile.events / turns).toFixed(1)} per turn), ${baselineProfile.workflowTasks} workflow tasks, ${baselineActivities} noop activities.`,
    `errand events per turn by type: ${formatCounts(errandProfile.eventCounts, turns)}.`,
    `errand time (last run): activities ${formatCounts(Object.fromEntries(Object.entries(errandProfile.activityMs).map(([k, v]) => [k, Math.round(v)])))} ms (scheduled→completed), queueing ${Math.round(errandProfile.activityQueueMs)} ms, workflow tasks ${Math.round(errandProfile.workflowTaskMs)} ms; baseline activities ${Math.round(baselineProfile.activityMs.noop ?? 0)} ms, workflow tasks ${Math.round(baselineProfile.workflowTaskMs)} ms.`,
    `history payload bytes: errand ${errandProfile.payloadBytes}, baseline ${baselineProfile.payloadBytes}.`,
  ];
  return {
    id: 'overhead-per-turn',
    description: `Time per turn of a ${turns}-turn subagent (model call + list_directory) vs a bare workflow of ${baselineActivities} sequential no-op activities`,
    value: round(errand.median),
    unit: 'ms/turn',
    min: round(errand.min),
    max: round(errand.max),
    baseline: round(baseline.median),
    ratio: round(ratio, 3),
    // The target is errand's own orchestration cost per turn: the model answers at once and the tool
    // takes a millisecond, so the wall time per turn is that cost. The ratio to the bare turn is reported.
    target: `<= ${targetMsPerTurn} ms/turn (ratio to bare reported)`,
    met: errand.median <= targetMsPerTurn,
    runs: repetitions,
    notes,
  };
}

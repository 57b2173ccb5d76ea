import { benchSubagentInput, startBaselineWorker, startErrandWorker, uniqueId, type Bench } from '../harness';
import type { FigureResult } from '../figure';
import { fetchHistories, formatCounts, profileHistory, timeoutProfile } from '../history-profile';
import { benchMarker } from '../scripted-answers';
import { round, summarize } from '../stats';

/**
 * Figure 2, throughput: `count` delegations of 3 turns (2 with a list_directory call, then the answer: 3
 * modelTurn + 2 runTool + 1 appendMessages = 6 activities) started at once, completed per second, against
 * the same number of bare workflows of 6 sequential no-op activities.
 */
const turns = 3;
const baselineActivities = 6;

async function burst(count: number, start: (index: number) => Promise<{ result(): Promise<unknown> }>): Promise<{ perSecond: number; lastId: number }> {
  const started = performance.now();
  const handles = await Promise.all(Array.from({ length: count }, (_, index) => start(index)));
  await Promise.all(handles.map((handle) => handle.result()));
  return { perSecond: count / ((performance.now() - started) / 1000), lastId: count - 1 };
}

export async function measureThroughput(bench: Bench, count: number, repetitions: number): Promise<FigureResult> {
  const errandQueue = uniqueId('bench-throughput-errand');
  const baselineQueue = uniqueId('bench-throughput-baseline');
  const errandWorker = await startErrandWorker(bench, errandQueue);
  const baselineWorker = await startBaselineWorker(bench, baselineQueue);
  const errandRates: number[] = [];
  const baselineRates: number[] = [];
  /** Every measured burst as `<kind> <rate>`, in the order run. */
  const measuredOrder: string[] = [];
  const warmUp = Math.max(1, Math.round(count / 4));
  let sampleErrandId = '';
  const errandBursts: Array<{ prefix: string; size: number }> = [];
  let sampleBaselineId = '';
  try {
    const runErrand = async (size: number) => {
      const prefix = uniqueId('bench-tp');
      sampleErrandId = `${prefix}-0`;
      errandBursts.push({ prefix, size });
      const { perSecond } = await burst(size, (index) => bench.client.workflow.start('subagentWorkflow', {
        taskQueue: errandQueue,
        workflowId: `${prefix}-${index}`,
        args: [benchSubagentInput(bench, `Three turns. ${benchMarker({ turns })}`, { maxTurns: turns })],
      }));
      return perSecond;
    };
    const runBaseline = async (size: number) => {
      const prefix = uniqueId('bench-tp-bare');
      sampleBaselineId = `${prefix}-0`;
      const { perSecond } = await burst(size, (index) => bench.client.workflow.start('baselineSequentialWorkflow', {
        taskQueue: baselineQueue,
        workflowId: `${prefix}-${index}`,
        args: [baselineActivities],
      }));
      return perSecond;
    };
    // One unmeasured burst of each first (a quarter of the size): both workers start cold (their workflow
    // threads load and compile the bundle), and errand's bigger code took longer to warm up, which made its
    // first burst up to a third slower than its second in the same run.
    await runBaseline(warmUp);
    await runErrand(warmUp);
    // Counterbalanced order (bare, errand, errand, bare, bare, errand, …): the server slows down as its store
    // fills (both kinds' bursts do, by up to a fifth over a run), so a fixed order would always measure
    // errand on the fuller store. With an even number of pairs both sit at the same mean position.
    for (let index = 0; index < repetitions; index += 1) {
      const order = index % 2 === 0 ? (['bare', 'errand'] as const) : (['errand', 'bare'] as const);
      for (const kind of order) {
        const rate = kind === 'bare' ? await runBaseline(count) : await runErrand(count);
        (kind === 'bare' ? baselineRates : errandRates).push(rate);
        measuredOrder.push(`${kind} ${round(rate)}`);
      }
    }
  } finally {
    await errandWorker.stop();
    await baselineWorker.stop();
  }
  const errand = summarize(errandRates);
  const baseline = summarize(baselineRates);
  const ratio = errand.median / baseline.median;
  const errandProfile = await profileHistory(bench.client, sampleErrandId);
  const baselineProfile = await profileHistory(bench.client, sampleBaselineId);
  // What the measured bursts' histories show: a workflow task that failed (and was replayed) or timed out.
  const burstTrouble = await Promise.all(errandBursts.slice(1).map(async ({ prefix, size }, index) => {
    const profile = timeoutProfile((await fetchHistories(bench.client, Array.from({ length: size }, (_, at) => `${prefix}-${at}`))).values());
    return `burst ${index + 1} (${round(errandRates[index] ?? 0)}/s): workflow task failures ${profile.workflowTaskFailures}, timeouts ${profile.workflowTaskTimeouts}${profile.workflowTaskTimeouts > 0 ? ` (${formatCounts(profile.workflowTaskTimeoutKinds)})` : ''}, activity retries ${formatCounts(profile.activityRetries) || 'none'}`;
  }));
  return {
    id: 'throughput',
    description: `${count} delegations of ${turns} turns started at once, completed per second, vs ${count} bare workflows of ${baselineActivities} no-op activities`,
    value: round(errand.median),
    unit: 'delegations/s',
    min: round(errand.min),
    max: round(errand.max),
    baseline: round(baseline.median),
    ratio: round(ratio, 3),
    target: 'ratio >= 0.9',
    met: ratio >= 0.9,
    runs: repetitions,
    notes: [
      `${repetitions} bursts each in counterbalanced order (bare, errand, errand, bare, …: the server slows down as its store fills, so neither kind is always measured later), after one unmeasured burst of ${warmUp} of each (both workers start cold); rate = ${count} / (time from the first start call to the last result).`,
      `per delegation: ${errandProfile.events} events, ${errandProfile.workflowTasks} workflow tasks, activities ${formatCounts(errandProfile.activityCounts)}; per bare workflow: ${baselineProfile.events} events, ${baselineProfile.workflowTasks} workflow tasks.`,
      `rates in the order measured (delegations/s): ${measuredOrder.join(', ')}; errand/bare per pair ${baselineRates.map((rate, index) => round((errandRates[index] ?? 0) / rate, 2)).join(', ')}.`,
      `errand's measured bursts, all histories: ${burstTrouble.join('; ')}.`,
      `one delegation's history: events ${formatCounts(errandProfile.eventCounts)}; payload bytes ${errandProfile.payloadBytes} (bare: ${baselineProfile.payloadBytes}).`,
    ],
  };
}

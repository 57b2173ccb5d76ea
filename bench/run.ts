import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { analysis } from './analysis';
import { cleanupAll, installCleanupHandlers } from './cleanup';
import { notMeasured, type FigureResult } from './figure';
import { measureActions } from './figures/actions';
import { measureApiLatency } from './figures/api-latency';
import { measureCancelLatency } from './figures/cancel-latency';
import { measureCli } from './figures/cli';
import { measureFloor } from './figures/floor';
import { measureHistoryGrowth, type HistorySeries } from './figures/history-growth';
import { measureLambdaColdStart } from './figures/lambda-cold-start';
import { measureMemory } from './figures/memory';
import { measureOverhead } from './figures/overhead';
import { measureRecovery } from './figures/recovery';
import { measureSourceMemory } from './figures/source-memory';
import { measureThroughput } from './figures/throughput';
import { measureWorkflowFanOut } from './figures/workflow-fanout';
import { measureBareFanOut } from './figures/workflow-fanout-bare';
import { measureWorkflowOverhead } from './figures/workflow-overhead';
import { benchTempRoot, projectRoot, startBench, type Bench } from './harness';
import { renderHistoryChart } from './history-chart';
import { loadAverages, machineFacts, markdownReport, markdownTable, type BenchResults } from './report';

/**
 * `npm run bench`: starts its own dev server and workers, measures the seven figures of issue 10, and
 * writes bench/results.json, bench/results.md and bench/history-growth.svg. Repetition counts are chosen
 * so the whole run stays near 15 minutes on a 2-core machine (starting 5,000 subagents for the memory figure
 * is a few of them). `tsx bench/run.ts overhead cancel` runs only the named figures (and writes nothing),
 * for working on one of them; `BENCH_QUICK=1` runs everything with few repetitions and writes nothing.
 */

const fullPlan = {
  overheadRuns: 4,
  throughputDelegations: 200,
  throughputRuns: 4,
  historyTurns: 500,
  apiSamples: 300,
  cancelSamples: 20,
  recoveryRuns: 2,
  recoveryDelegations: 50,
  recoveryHeartbeatTimeoutMs: 5_000,
  memorySubagents: 5_000,
  memoryWakeSamples: 20,
  cliSamples: 15,
  floorRuns: 5,
  sourceDelegations: 1_000,
  sourceDirectories: 200,
  sourceFirst: 100,
  actions: { turns: 10, messages: 5, streamMs: 30_000, idleMs: 300_000 },
  lambdaColdStarts: 10,
  workflowOverhead: { agents: 64, concurrency: 8, delayMs: 200, repetitions: 3 },
  workflowFanOut: { agents: 500, concurrency: 16, delayMs: 500, slowDelayMs: 2_000 },
};

/** `BENCH_QUICK=1`: a smoke run with few repetitions, to check the bench works end to end (figures mean little). */
const quickPlan: typeof fullPlan = {
  overheadRuns: 1,
  throughputDelegations: 20,
  throughputRuns: 1,
  historyTurns: 30,
  apiSamples: 10,
  cancelSamples: 3,
  recoveryRuns: 1,
  recoveryDelegations: 5,
  recoveryHeartbeatTimeoutMs: 5_000,
  memorySubagents: 100,
  memoryWakeSamples: 3,
  cliSamples: 2,
  floorRuns: 1,
  sourceDelegations: 100,
  sourceDirectories: 40,
  sourceFirst: 20,
  actions: { turns: 3, messages: 2, streamMs: 30_000, idleMs: 65_000 },
  lambdaColdStarts: 2,
  workflowOverhead: { agents: 16, concurrency: 4, delayMs: 200, repetitions: 1 },
  workflowFanOut: { agents: 64, concurrency: 16, delayMs: 500, slowDelayMs: 1_000 },
};

const quick = process.env.BENCH_QUICK === '1';
const plan = quick ? quickPlan : fullPlan;

/** An error's message with its causes ("Workflow Update failed: <why>"), for a figure that failed. */
function errorChain(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth += 1) {
    parts.push(current instanceof Error ? current.message : String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(': ');
}

const repetitionText = [
  `overhead: ${plan.overheadRuns} interleaved runs each after a warm-up`,
  `throughput: ${plan.throughputRuns} bursts of ${plan.throughputDelegations} each`,
  `history: one subagent of ${plan.historyTurns} turns, 10-turn windows`,
  `API: ${plan.apiSamples} requests each`,
  `cancel: ${plan.cancelSamples} samples`,
  `recovery: ${plan.recoveryRuns} kills of ${plan.recoveryDelegations} delegations`,
  `memory: 5 RSS samples with ${plan.memorySubagents} waiting subagents, ${plan.memoryWakeSamples} wake-ups`,
  `CLI: ${plan.cliSamples} runs of each command`,
  `floor: ${plan.floorRuns} alternating runs per variant`,
  `sources: ${plan.sourceDelegations} delegations across ${plan.sourceDirectories} working directories, RSS after ${plan.sourceFirst} and after all, and the same in 1 directory`,
  `actions: ${plan.actions.turns} extra subagent turns, ${plan.actions.messages} continuable messages, one ${plan.actions.streamMs / 1000} s stream, ${plan.actions.idleMs / 1000} s of an idle session`,
  `Lambda: ${plan.lambdaColdStarts} cold starts each of the API and a minimal Hono Lambda, alternating`,
  `workflows: ${plan.workflowOverhead.repetitions} interleaved pairs of a ${plan.workflowOverhead.agents}-agent run and ${plan.workflowOverhead.agents} plain delegations (${plan.workflowOverhead.concurrency} at once, answers held ${plan.workflowOverhead.delayMs} ms); one run of ${plan.workflowFanOut.agents} agents at ${plan.workflowFanOut.concurrency} at once (answers held ${plan.workflowFanOut.delayMs} ms) on a worker child`,
];

interface Collected {
  figures: FigureResult[];
  series?: HistorySeries;
}

type FigureRunner = (bench: Bench, collected: Collected) => Promise<void>;

const figureRunners: Record<string, FigureRunner> = {
  floor: async (bench, collected) => {
    collected.figures.push(...(await measureFloor(bench, plan.floorRuns)));
  },
  overhead: async (bench, collected) => {
    collected.figures.push(await measureOverhead(bench, plan.overheadRuns));
  },
  throughput: async (bench, collected) => {
    collected.figures.push(await measureThroughput(bench, plan.throughputDelegations, plan.throughputRuns));
  },
  history: async (bench, collected) => {
    const { figures, series } = await measureHistoryGrowth(bench, plan.historyTurns);
    collected.figures.push(...figures);
    collected.series = series;
  },
  api: async (bench, collected) => {
    try {
      collected.figures.push(...(await measureApiLatency(bench, plan.apiSamples)));
    } catch (error) {
      // The API is written in parallel; a failure here is reported as "not measured", with the reason.
      const reason = errorChain(error);
      collected.figures.push(notMeasured('api-start-latency-p50', 'POST /v1/delegations latency on loopback, p50, vs bare client.workflow.start', 'ms', 'p50 ratio <= 1.5', reason));
    }
  },
  cancel: async (bench, collected) => {
    collected.figures.push(await measureCancelLatency(bench, plan.cancelSamples));
  },
  recovery: async (bench, collected) => {
    collected.figures.push(...(await measureRecovery(bench, plan.recoveryRuns, plan.recoveryDelegations, plan.recoveryHeartbeatTimeoutMs)));
  },
  memory: async (bench, collected) => {
    collected.figures.push(...(await measureMemory(bench, plan.memorySubagents, plan.memoryWakeSamples)));
  },
  cli: async (bench, collected) => {
    collected.figures.push(...(await measureCli(bench, plan.cliSamples)));
  },
  sources: async (bench, collected) => {
    collected.figures.push(...(await measureSourceMemory(bench, plan.sourceDelegations, plan.sourceDirectories, plan.sourceFirst)));
  },
  actions: async (bench, collected) => {
    collected.figures.push(...(await measureActions(bench, plan.actions)));
  },
  lambda: async (bench, collected) => {
    collected.figures.push(...(await measureLambdaColdStart(bench, plan.lambdaColdStarts)));
  },
  workflows: async (bench, collected) => {
    // Two parts on workers of their own: one that fails is reported as not measured and costs not the other.
    try {
      collected.figures.push(await measureWorkflowOverhead(bench, plan.workflowOverhead));
    } catch (error) {
      collected.figures.push(notMeasured('workflow-overhead-per-agent', 'Wall time per agent of a workflow run vs plain delegations', 'ms/agent', 'ratio <= 1.2', errorChain(error)));
    }
    try {
      collected.figures.push(...(await measureWorkflowFanOut(bench, plan.workflowFanOut)));
    } catch (error) {
      collected.figures.push(notMeasured('workflow-fanout-wall-time', `A workflow run of ${plan.workflowFanOut.agents} agents at ${plan.workflowFanOut.concurrency} at once vs the ideal`, 's', 'ratio <= 1.3', errorChain(error)));
    }
    try {
      collected.figures.push(await measureBareFanOut(bench, plan.workflowFanOut));
    } catch (error) {
      collected.figures.push(notMeasured('workflow-fanout-bare-temporal', `The same fan-out on bare Temporal (${plan.workflowFanOut.agents} child workflows at ${plan.workflowFanOut.concurrency} at once) vs the ideal`, 's', 'reported (no target)', errorChain(error)));
    }
  },
};

async function main(): Promise<void> {
  installCleanupHandlers();
  const selected = process.argv.slice(2);
  const unknown = selected.filter((name) => !(name in figureRunners));
  if (unknown.length > 0) throw new Error(`unknown figure(s) ${unknown.join(', ')}; known: ${Object.keys(figureRunners).join(', ')}`);
  const loadBefore = loadAverages();
  const started = Date.now();
  const bench = await startBench();
  process.stdout.write(`bench: dev server on ${bench.server.address}, ready in ${((Date.now() - started) / 1000).toFixed(1)} s; scratch in ${bench.workDir}\n`);
  const collected: Collected = { figures: [] };
  for (const [name, runner] of Object.entries(figureRunners)) {
    if (selected.length > 0 && !selected.includes(name)) continue;
    const figureStart = Date.now();
    process.stdout.write(`bench: ${name}…\n`);
    try {
      await runner(bench, collected);
    } catch (error) {
      // One broken figure must not cost the others: it is reported as not measured, with the reason.
      const reason = errorChain(error);
      process.stderr.write(`bench: ${name} failed: ${reason}\n`);
      collected.figures.push(notMeasured(name, `figure "${name}"`, '', 'see issue 10', reason));
    }
    process.stdout.write(`bench: ${name} done in ${((Date.now() - figureStart) / 1000).toFixed(1)} s\n`);
  }
  const results: BenchResults = { date: new Date().toISOString(), machine: machineFacts(), figures: collected.figures };
  const table = markdownTable(results.figures);
  if (selected.length > 0 || quick) {
    process.stdout.write(`\n${table}\n\n${JSON.stringify(results.figures, null, 2)}\n(${quick ? 'quick' : 'partial'} run: nothing written)\n`);
    return;
  }
  const benchDir = join(projectRoot, 'bench');
  const conditions = { durationS: (Date.now() - started) / 1000, loadBefore, loadAfter: loadAverages(), repetitions: repetitionText, tempRoot: benchTempRoot() };
  writeFileSync(join(benchDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(benchDir, 'results.md'), markdownReport(results, conditions, analysis));
  if (collected.series) writeFileSync(join(benchDir, 'history-growth.svg'), renderHistoryChart(collected.series));
  process.stdout.write(`\n${table}\n\nbench: wrote bench/results.json, bench/results.md, bench/history-growth.svg in ${Math.round(conditions.durationS)} s\n`);
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => cleanupAll());

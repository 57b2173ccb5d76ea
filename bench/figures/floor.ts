import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { NativeConnection, Worker } from '@temporalio/worker';
import { devServerDynamicConfig, devServerSqlitePragmas, startDevServer, type DevServer } from '../../src/dev/temporal-dev-server';
import { createBaselineActivities } from '../baseline-activities';
import { onCleanup } from '../cleanup';
import type { FigureResult } from '../figure';
import { uniqueId, type Bench } from '../harness';
import { round, summarize } from '../stats';

/**
 * The floor: what Temporal itself costs per activity and per turn on this machine's dev server, with its
 * state in a SQLite file on disk (durable, as `errand dev` keeps it), with Temporal's stock settings and
 * with the settings errand starts its dev servers with (src/dev/temporal-dev-server.ts). Bare workflows
 * only (bench/baseline-workflows.ts), so nothing of errand is in these numbers: they are the ground under
 * the overhead figure.
 *
 * Each server gets its own SQLite file in the OS temp folder (on disk, not tmpfs). Runs alternate between
 * the servers so load hits both alike. A run's value is its steady state: the time per activity over the
 * second half of its history, because the stock server's task-loading limiter has a burst of 20 that an
 * idle server refills (the first ~30 activities after a pause run at full speed).
 */

const activitiesPerRun = 100;
const turnsPerRun = 50;

interface ServerUnderTest {
  name: string;
  server: DevServer;
  client: Client;
  connection: Connection;
  worker: { taskQueue: string; stop(): Promise<void> };
}

/** CPU time (user + system) a process has used, in ms, from /proc (clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const afterName = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '';
  const fields = afterName.split(' ');
  // utime and stime are fields 14 and 15 of the line, i.e. 12th and 13th after "pid (comm) ".
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Milliseconds per workflow task over the second half of a run's history (its steady state). */
async function steadyMsPerTask(client: Client, workflowId: string): Promise<number> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const completed = (history.events ?? []).filter((event) => event.workflowTaskCompletedEventAttributes).map((event) => tsToMs(event.eventTime));
  const half = Math.floor(completed.length / 2);
  const first = completed[half];
  const last = completed[completed.length - 1];
  if (first === undefined || last === undefined || completed.length - 1 === half) throw new Error(`history of ${workflowId} has too few workflow tasks`);
  return (last - first) / (completed.length - 1 - half);
}

/** Mean time between two event kinds across a history (e.g. workflow task scheduled → started). */
async function phases(client: Client, workflowId: string): Promise<Record<string, number>> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const sums: Record<string, { total: number; count: number }> = {};
  let previous: { kind: string; at: number } | undefined;
  for (const event of history.events ?? []) {
    const kind = Object.keys(event).find((key) => key.endsWith('EventAttributes'))?.replace('EventAttributes', '') ?? 'unknown';
    const at = tsToMs(event.eventTime);
    if (previous) {
      const key = `${previous.kind} → ${kind}`;
      const entry = (sums[key] ??= { total: 0, count: 0 });
      entry.total += at - previous.at;
      entry.count += 1;
    }
    previous = { kind, at };
  }
  return Object.fromEntries(Object.entries(sums).filter(([, entry]) => entry.count >= 10).map(([key, entry]) => [key, round(entry.total / entry.count, 1)]));
}

async function startServer(bench: Bench, name: string, directory: string, stock: boolean): Promise<ServerUnderTest> {
  const server = await startDevServer({ dbFile: join(directory, `${name}.sqlite`), logFile: join(bench.workDir, `floor-${name}.log`), headless: true, stock });
  onCleanup(`floor dev server ${name}`, () => server.stop());
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = uniqueId(`bench-floor-${name}`);
  // The same worker settings as the bench's baseline worker (SDK defaults).
  const worker = await Worker.create({ connection: native, taskQueue, workflowBundle: { codePath: bench.baselineBundle }, activities: createBaselineActivities(), shutdownGraceTime: '2s' });
  const running = worker.run();
  const stop = async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await native.close();
    await connection.close();
    await server.stop();
  };
  return { name, server, client: new Client({ connection }), connection, worker: { taskQueue, stop } };
}

interface Sample {
  ms: number;
  serverCpuMs: number;
  workerCpuMs: number;
  workflowId: string;
}

async function runOnce(target: ServerUnderTest, workflowType: string, args: unknown[], units: number): Promise<Sample> {
  const workflowId = uniqueId('bench-floor');
  const serverCpu = processCpuMs(target.server.pid);
  const ownCpu = process.cpuUsage();
  await target.client.workflow.execute(workflowType, { taskQueue: target.worker.taskQueue, workflowId, args });
  const own = process.cpuUsage(ownCpu);
  const steady = await steadyMsPerTask(target.client, workflowId);
  // A turn of the turns workflow has two workflow tasks when the tool is a normal activity, one when local.
  const tasksPerUnit = workflowType === 'baselineTurnsWorkflow' && args[1] === false ? 2 : 1;
  return { ms: steady * tasksPerUnit, serverCpuMs: (processCpuMs(target.server.pid) - serverCpu) / units, workerCpuMs: (own.user + own.system) / 1000 / units, workflowId };
}

/** Measures the floor; `runs` alternating runs per variant after one warm-up each. */
export async function measureFloor(bench: Bench, runs: number): Promise<FigureResult[]> {
  // On disk on purpose: the target is durable state, and the disk is where stock settings lose most.
  const directory = mkdtempSync(join(tmpdir(), 'errand-bench-floor-'));
  onCleanup('floor temp folder', async () => rmSync(directory, { recursive: true, force: true }));
  const stock = await startServer(bench, 'stock', directory, true);
  const errand = await startServer(bench, 'errand', directory, false);
  const variants = [
    { key: 'stock-activity', target: stock, type: 'baselineSequentialWorkflow', args: [activitiesPerRun], units: activitiesPerRun },
    { key: 'errand-activity', target: errand, type: 'baselineSequentialWorkflow', args: [activitiesPerRun], units: activitiesPerRun },
    { key: 'errand-turn', target: errand, type: 'baselineTurnsWorkflow', args: [turnsPerRun, false], units: turnsPerRun },
    { key: 'errand-turn-local-tool', target: errand, type: 'baselineTurnsWorkflow', args: [turnsPerRun, true], units: turnsPerRun },
    { key: 'stock-turn', target: stock, type: 'baselineTurnsWorkflow', args: [turnsPerRun, false], units: turnsPerRun },
  ] as const;
  const samples = new Map<string, Sample[]>(variants.map((variant) => [variant.key, []]));
  let errandPhases: Record<string, number> = {};
  let stockPhases: Record<string, number> = {};
  try {
    for (let pass = -1; pass < runs; pass += 1) {
      for (const variant of variants) {
        const sample = await runOnce(variant.target, variant.type, [...variant.args], variant.units);
        if (pass >= 0) samples.get(variant.key)?.push(sample);
      }
    }
    errandPhases = await phases(errand.client, samples.get('errand-activity')?.at(-1)?.workflowId ?? '');
    stockPhases = await phases(stock.client, samples.get('stock-activity')?.at(-1)?.workflowId ?? '');
  } finally {
    await stock.worker.stop();
    await errand.worker.stop();
  }
  const of = (key: string) => samples.get(key) ?? [];
  const stat = (key: string) => summarize(of(key).map((sample) => sample.ms));
  const cpu = (key: string) => `server ${round(summarize(of(key).map((sample) => sample.serverCpuMs)).median, 1)} ms + worker and client ${round(summarize(of(key).map((sample) => sample.workerCpuMs)).median, 1)} ms`;
  const phaseText = (entries: Record<string, number>) => Object.entries(entries).map(([key, ms]) => `${key} ${ms} ms`).join(', ');
  const stockActivity = stat('stock-activity');
  const errandActivity = stat('errand-activity');
  const errandTurn = stat('errand-turn');
  const localTurn = stat('errand-turn-local-tool');
  const stockTurn = stat('stock-turn');
  const settings = `errand's settings: dynamic config ${JSON.stringify(devServerDynamicConfig)}, SQLite pragmas ${JSON.stringify(devServerSqlitePragmas)}; stock: Temporal's defaults (rollback journal, synchronous=full, 20 task loads/s per history shard).`;
  const common = [
    `${runs} alternating runs per variant after one warm-up each; two dev servers side by side, each with its SQLite file on disk (the OS temp folder); SDK default worker options; value = steady state (second half of each run's history).`,
    settings,
  ];
  return [
    {
      id: 'floor-activity',
      description: 'Bare no-op activity in sequence (one workflow task + one activity), errand\'s dev server settings vs Temporal\'s stock ones, state on disk',
      value: round(errandActivity.median, 1),
      unit: 'ms/activity',
      min: round(errandActivity.min, 1),
      max: round(errandActivity.max, 1),
      baseline: round(stockActivity.median, 1),
      ratio: round(errandActivity.median / stockActivity.median, 3),
      target: 'reported (the ground under errand\'s turn)',
      met: null,
      runs,
      notes: [
        ...common,
        `CPU per activity, errand settings: ${cpu('errand-activity')}; stock: ${cpu('stock-activity')}. With errand's settings the chain runs at the speed of the CPU: the CPU time of server and worker per activity is about the wall time per activity.`,
        `phases (last run, errand settings): ${phaseText(errandPhases)}.`,
        `phases (last run, stock): ${phaseText(stockPhases)}.`,
      ],
    },
    {
      id: 'floor-turn',
      description: 'Bare turn (a no-op activity for the model call, another for the tool call), errand\'s dev server settings vs stock, state on disk',
      value: round(errandTurn.median, 1),
      unit: 'ms/turn',
      min: round(errandTurn.min, 1),
      max: round(errandTurn.max, 1),
      baseline: round(stockTurn.median, 1),
      ratio: round(errandTurn.median / stockTurn.median, 3),
      // The 30 ms is errand's own orchestration cost per turn: the overhead figure measures it. This
      // bare turn of two normal activities is the shape errand's turn had before the tool call became a local
      // activity; it stays as the ground under the old shape and the new one (the local-tool variant below).
      target: 'reported (errand\'s own turn is figure overhead-per-turn, <= 30 ms)',
      met: null,
      runs,
      notes: [
        ...common,
        `the same turn with the tool as a local activity (run inside the workflow task, recorded as a marker): ${round(localTurn.median, 1)} ms/turn (min ${round(localTurn.min, 1)}, max ${round(localTurn.max, 1)}); CPU per turn ${cpu('errand-turn-local-tool')}.`,
        `CPU per turn with two normal activities: ${cpu('errand-turn')}.`,
      ],
    },
  ];
}

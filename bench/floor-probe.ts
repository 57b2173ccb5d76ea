import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import { devServerDynamicConfig, devServerSqlitePragmas, startDevServer, type DevServer, type DevServerOptions } from '../src/dev/temporal-dev-server';
import { createBaselineActivities } from './baseline-activities';
import { uniqueId } from './harness';
import { round, summarize } from './stats';

/**
 * The experiment behind the floor section of bench/results.md: bare no-op workflows (bench/baseline-
 * workflows.ts) on dev servers that differ in one setting each, and workers that differ in one option each,
 * all run in one process, alternating run by run so load hits every variant alike. Prints a Markdown table:
 * per variant the steady-state time per activity (second half of each run's history, past the burst of the
 * stock task-loading limiter), min–max over the runs, and the CPU time of server and worker per activity.
 *
 * Usage: `tsx bench/floor-probe.ts [runs]` (default 4; about 10 minutes on 2 cores). Not part of
 * `npm run bench`, whose floor figure measures the two settings that matter.
 */

type ServerSpec = Pick<DevServerOptions, 'dynamicConfig' | 'sqlitePragmas' | 'stock'> & { storage: 'disk' | 'tmpfs' | 'memory'; env?: Record<string, string> };

const stockRps = { 'history.transferProcessorMaxPollRPS': 20 };
const servers: Record<string, ServerSpec> = {
  'stock (Temporal defaults), disk': { stock: true, storage: 'disk' },
  'stock + WAL, synchronous=normal, disk': { stock: true, storage: 'disk', sqlitePragmas: { ...devServerSqlitePragmas } },
  'stock + transfer poll RPS 1000, disk': { stock: true, storage: 'disk', dynamicConfig: { ...devServerDynamicConfig } },
  'stock, in memory': { stock: true, storage: 'memory' },
  'errand (both), disk': { storage: 'disk' },
  'errand (both), tmpfs': { storage: 'tmpfs' },
  'errand (both), in memory': { storage: 'memory' },
  'errand + 1 task-queue partition': { storage: 'disk', dynamicConfig: { 'matching.numTaskqueueReadPartitions': 1, 'matching.numTaskqueueWritePartitions': 1 } },
  'errand + GOMAXPROCS=1': { storage: 'disk', env: { GOMAXPROCS: '1' } },
  'errand + WAL, synchronous=full': { storage: 'disk', sqlitePragmas: { journal_mode: 'wal', synchronous: 'full' } },
  'errand, transfer poll RPS back to 20': { storage: 'disk', dynamicConfig: stockRps },
};

const workers: Record<string, Partial<WorkerOptions>> = {
  'SDK defaults': {},
  'no eager activities': { maxEagerActivityReservationsPerWorkflowTask: 0 },
  'autoscaling pollers': { workflowTaskPollerBehavior: { type: 'autoscaling' }, activityTaskPollerBehavior: { type: 'autoscaling' } },
  '1 workflow + 1 activity poller': { workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: 2 }, activityTaskPollerBehavior: { type: 'simple-maximum', maximum: 1 } },
  'no workflow cache (no sticky queue)': { maxCachedWorkflows: 0 },
  'sticky schedule-to-start 3 s': { stickyQueueScheduleToStartTimeout: '3s' },
};

interface Workload {
  type: string;
  args: unknown[];
  /** Activities (or turns) per run, the unit of the result. */
  units: number;
  /** Workflow tasks per unit, to turn the per-task steady state into a per-unit time. */
  tasksPerUnit: number;
}

const workloads: Record<string, Workload> = {
  activity: { type: 'baselineSequentialWorkflow', args: [100], units: 100, tasksPerUnit: 1 },
  'turn (2 activities)': { type: 'baselineTurnsWorkflow', args: [50, false], units: 50, tasksPerUnit: 2 },
  'turn (tool as local activity)': { type: 'baselineTurnsWorkflow', args: [50, true], units: 50, tasksPerUnit: 1 },
};

/** The cells of the table: every server with the default worker; every worker on errand's server; turns. */
const cells: { server: string; worker: string; workload: string }[] = [
  ...Object.keys(servers).map((server) => ({ server, worker: 'SDK defaults', workload: 'activity' })),
  ...Object.keys(workers).filter((worker) => worker !== 'SDK defaults').map((worker) => ({ server: 'errand (both), disk', worker, workload: 'activity' })),
  { server: 'stock (Temporal defaults), disk', worker: 'SDK defaults', workload: 'turn (2 activities)' },
  { server: 'errand (both), disk', worker: 'SDK defaults', workload: 'turn (2 activities)' },
  { server: 'errand (both), disk', worker: 'SDK defaults', workload: 'turn (tool as local activity)' },
];

function processCpuMs(pid: number): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 4);
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const disk = mkdtempSync(join(tmpdir(), 'errand-floor-probe-'));
  const shm = mkdtempSync(join('/dev/shm', 'errand-floor-probe-'));
  const stops: (() => Promise<void>)[] = [];
  try {
    const { code } = await bundleWorkflowCode({ workflowsPath: join(__dirname, 'baseline-workflows.ts'), logger: new DefaultLogger('WARN') });
    const started = new Map<string, { server: DevServer; client: Client }>();
    for (const name of new Set(cells.map((cell) => cell.server))) {
      const spec = servers[name];
      if (!spec) throw new Error(`no server ${name}`);
      const options: DevServerOptions = { logFile: join(disk, `${started.size}.log`), headless: true, ...spec };
      if (spec.storage !== 'memory') options.dbFile = join(spec.storage === 'disk' ? disk : shm, `${started.size}.sqlite`);
      const saved = { ...process.env };
      Object.assign(process.env, spec.env ?? {});
      const server = await startDevServer(options);
      process.env = saved;
      stops.push(() => server.stop());
      const connection = await Connection.connect({ address: server.address });
      stops.push(() => connection.close());
      started.set(name, { server, client: new Client({ connection }) });
    }
    const queues = new Map<string, string>();
    for (const cell of cells) {
      const key = `${cell.server}|${cell.worker}`;
      if (queues.has(key)) continue;
      const target = started.get(cell.server);
      if (!target) throw new Error(`no server ${cell.server}`);
      const native = await NativeConnection.connect({ address: target.server.address });
      const taskQueue = uniqueId('floor-probe');
      const worker = await Worker.create({ connection: native, taskQueue, workflowBundle: { code }, activities: createBaselineActivities(), shutdownGraceTime: '2s', ...workers[cell.worker] });
      const running = worker.run();
      stops.push(async () => {
        worker.shutdown();
        await running;
        await native.close();
      });
      queues.set(key, taskQueue);
    }
    const results = cells.map(() => ({ ms: [] as number[], serverCpu: [] as number[], workerCpu: [] as number[] }));
    for (let pass = -1; pass < runs; pass += 1) {
      for (const [index, cell] of cells.entries()) {
        const target = started.get(cell.server);
        const workload = workloads[cell.workload];
        const taskQueue = queues.get(`${cell.server}|${cell.worker}`);
        if (!target || !workload || !taskQueue) throw new Error('bad cell');
        const workflowId = uniqueId('floor-probe');
        const serverCpu = processCpuMs(target.server.pid);
        const ownCpu = process.cpuUsage();
        await target.client.workflow.execute(workload.type, { taskQueue, workflowId, args: workload.args });
        const own = process.cpuUsage(ownCpu);
        if (pass < 0) continue;
        const history = await target.client.workflow.getHandle(workflowId).fetchHistory();
        const completed = (history.events ?? []).filter((event) => event.workflowTaskCompletedEventAttributes).map((event) => tsToMs(event.eventTime));
        const half = Math.floor(completed.length / 2);
        const perTask = ((completed.at(-1) ?? 0) - (completed[half] ?? 0)) / (completed.length - 1 - half);
        results[index]?.ms.push(perTask * workload.tasksPerUnit);
        results[index]?.serverCpu.push((processCpuMs(target.server.pid) - serverCpu) / workload.units);
        results[index]?.workerCpu.push((own.user + own.system) / 1000 / workload.units);
      }
      process.stderr.write(`floor-probe: pass ${pass + 1} of ${runs + 1} done\n`);
    }
    const lines = ['| Server | Worker | Workload | Steady ms per unit | Min – max | CPU server / worker per unit (ms) |', '|---|---|---|---|---|---|'];
    for (const [index, cell] of cells.entries()) {
      const result = results[index];
      if (!result) continue;
      const ms = summarize(result.ms);
      lines.push(`| ${cell.server} | ${cell.worker} | ${cell.workload} | ${round(ms.median, 1)} | ${round(ms.min, 1)} – ${round(ms.max, 1)} | ${round(summarize(result.serverCpu).median, 1)} / ${round(summarize(result.workerCpu).median, 1)} |`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    rmSync(disk, { recursive: true, force: true });
    rmSync(shm, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`floor-probe: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});

import type { FigureResult } from '../figure';
import { readCpuMs, startBaselineWorker, uniqueId, type Bench } from '../harness';
import { round } from '../stats';
import { idealMsOf, type WorkflowFanOutPlan } from './workflow-fanout';

/**
 * The fan-out's shape on bare Temporal (bench/baseline-workflows.ts `baselineFanOutWorkflow`): the same
 * number of child workflows at the same concurrency, each one activity held the same time, on the same dev
 * server. What Temporal itself takes for such a fan-out on this machine: the ground under
 * `workflow-fanout-wall-time`.
 */
export async function measureBareFanOut(bench: Bench, plan: WorkflowFanOutPlan): Promise<FigureResult> {
  const taskQueue = uniqueId('bench-bare-fanout');
  const worker = await startBaselineWorker(bench, taskQueue);
  const fanOut = async (count: number): Promise<number> => {
    const started = performance.now();
    await bench.client.workflow.execute('baselineFanOutWorkflow', { taskQueue, workflowId: uniqueId('bench-bare-fanout'), args: [count, plan.concurrency, plan.delayMs] });
    return performance.now() - started;
  };
  let ms = 0;
  const cpu = { server: 0, bench: 0 };
  try {
    await fanOut(plan.concurrency); // warm: the bundle loaded, the task queue's pollers up
    const before = { server: readCpuMs(bench.server.pid), bench: process.cpuUsage() };
    ms = await fanOut(plan.agents);
    const usage = process.cpuUsage(before.bench);
    cpu.server = readCpuMs(bench.server.pid) - before.server;
    cpu.bench = (usage.user + usage.system) / 1000;
  } finally {
    await worker.stop();
  }
  const idealMs = idealMsOf(plan, plan.delayMs);
  const seconds = round(ms / 1000, 2);
  return {
    id: 'workflow-fanout-bare-temporal',
    description: `The same fan-out on bare Temporal: ${plan.agents} child workflows at ${plan.concurrency} at once, each one activity held ${plan.delayMs} ms: wall time vs the ideal`,
    value: seconds,
    unit: 's',
    min: seconds,
    max: seconds,
    baseline: round(idealMs / 1000, 2),
    ratio: round(ms / idealMs, 3),
    target: 'reported (no target): the ground under workflow-fanout-wall-time',
    met: null,
    runs: 1,
    notes: [
      `a parent workflow with ${plan.concurrency} lanes, each starting the next child (executeChild) as soon as its child ends; each child runs one activity that waits ${plan.delayMs} ms. No script, journal, planning, blobs, search attributes or patch markers, no continue-as-new; the worker runs in the bench process with the SDK's default options, after an unmeasured run of ${plan.concurrency} children.`,
      `CPU while it ran: the dev server ${round(cpu.server / 1000, 1)} s (${round(cpu.server / plan.agents, 1)} ms per child), the bench process (client and worker) ${round(cpu.bench / 1000, 1)} s (${round(cpu.bench / plan.agents, 1)} ms per child); ${round((cpu.server + cpu.bench) / ms, 2)} cores busy on average.`,
    ],
  };
}

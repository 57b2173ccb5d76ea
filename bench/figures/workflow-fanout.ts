import { join } from 'node:path';
import { workflowAgentsBeforeContinueAsNew, workflowRoundsBeforeContinueAsNew } from '../../src/contracts/limits';
import { subagentStartOptions } from '../../src/observability/start-options';
import { historyActions, metricActions, scrapeMetrics, totalActions } from '../billable-actions';
import type { FigureResult } from '../figure';
import { cpus } from 'node:os';
import { benchModel, benchProviders, benchSubagentInput, readCpuMs, sleep, spawnWorkerChild, uniqueId, workerStopSignal, type Bench } from '../harness';
import { formatCounts, historySize } from '../history-profile';
import { benchMarker } from '../scripted-answers';
import { percentile, round, summarize } from '../stats';
import { activityTimes, agentDelegations, chainActions, roundSamples, runChain } from '../workflow-run-history';
import { fanOutInput, runFanOut } from './workflow-overhead';

/**
 * Workflow runs (issue 42), scale and what it costs: one run of `agents` agents (a `parallel`) at
 * `concurrency` on a worker child process (`errand worker` as users run it), each agent one model call of
 * the scripted HTTP model held `delayMs`. Wall time against the ideal ceil(agents / concurrency) × delay;
 * and from the same run, the worker's memory, the history bytes per agent over all of the run's
 * continue-as-new runs, the time of each script round (QuickJS, activity `runWorkflowRound`) as the journal
 * grows, and the billable Temporal actions per agent against one plain delegation's.
 */

/** How the figure runs. */
export interface WorkflowFanOutPlan {
  agents: number;
  concurrency: number;
  delayMs: number;
  /**
   * A second run of the same agents with answers held this long (a model's usual latency rather than the
   * target's 500 ms): shows whether what the run adds is a fixed cost per agent. Omitted: not run.
   */
  slowDelayMs?: number;
}

function reported(id: string, description: string, value: number, unit: string, extra: Partial<FigureResult>, notes: string[]): FigureResult {
  return { id, description, value, unit, min: value, max: value, target: 'reported (no target)', met: null, runs: 1, notes, ...extra };
}

/** The ideal wall time of a fan-out of the plan's agents whose model calls take `delayMs`: every lane busy with a call all the time. */
export function idealMsOf(plan: WorkflowFanOutPlan, delayMs: number): number {
  return Math.ceil(plan.agents / plan.concurrency) * delayMs;
}

/** The same fan-out with a slower model: the wall time against its ideal, and the CPU it took. */
function slowFigure(plan: WorkflowFanOutPlan, slow: { ms: number; delayMs: number; serverMs: number; workerMs: number }, fastCpu: { server: number; worker: number }, fastMs: number): FigureResult {
  const idealMs = idealMsOf(plan, slow.delayMs);
  const seconds = round(slow.ms / 1000, 2);
  return reported('workflow-fanout-wall-time-slow-model', `The same run of ${plan.agents} agents at ${plan.concurrency} at once, each model call held ${slow.delayMs} ms: wall time vs the ideal`, seconds, 's', { min: seconds, max: seconds, baseline: round(idealMs / 1000, 2), ratio: round(slow.ms / idealMs, 3) }, [
    `ideal = ceil(${plan.agents} / ${plan.concurrency}) × ${slow.delayMs} ms = ${round(idealMs / 1000, 2)} s; run on the same worker child right after the ${plan.delayMs} ms run. It took ${round((slow.ms - idealMs) / 1000, 2)} s more than its ideal, ${round((slow.ms - idealMs) / plan.agents, 1)} ms per agent.`,
    `the ${plan.delayMs} ms run took ${round((fastMs - idealMsOf(plan, plan.delayMs)) / plan.agents, 1)} ms per agent more than its ideal: a time per agent that stays about the same whatever the model's delay is what the run adds to each agent's lane, not a share of the model's time.`,
    `CPU while it ran: the dev server ${round(slow.serverMs / 1000, 1)} s, the worker ${round(slow.workerMs / 1000, 1)} s (per agent ${round(slow.serverMs / plan.agents, 1)} and ${round(slow.workerMs / plan.agents, 1)} ms; the ${plan.delayMs} ms run: ${round(fastCpu.server / plan.agents, 1)} and ${round(fastCpu.worker / plan.agents, 1)} ms), ${round((slow.serverMs + slow.workerMs) / slow.ms, 2)} of the cores busy on average.`,
  ]);
}

/** Measures the fan-out figures. */
export async function measureWorkflowFanOut(bench: Bench, plan: WorkflowFanOutPlan): Promise<FigureResult[]> {
  const taskQueue = uniqueId('bench-wf-fanout');
  const worker = await spawnWorkerChild(bench, { name: 'workflow-fanout-worker', taskQueue, dataDir: join(bench.tempDir, 'data-workflow-fanout'), modelHeartbeatTimeoutMs: bench.config.subagent.activity.modelHeartbeatTimeoutMs });
  const rss: number[] = [];
  let idleMb = 0;
  let run: Awaited<ReturnType<typeof runFanOut>>;
  let plainId = '';
  const metrics: { heartbeats: number; queries: number } = { heartbeats: 0, queries: 0 };
  /** CPU ms each process used during the measured run: the dev server, the worker child, the bench (client and scripted model). */
  const cpu = { server: 0, worker: 0, bench: 0 };
  let slow: { ms: number; delayMs: number; serverMs: number; workerMs: number } | undefined;
  try {
    await worker.ready;
    await sleep(2_000);
    idleMb = worker.rssBytes() / 1024 / 1024;
    const input = (count: number, delayMs = plan.delayMs) => fanOutInput(bench, { count, concurrency: plan.concurrency, delayMs, provider: benchProviders.http, tag: uniqueId('fan') });
    // The worker starts cold (bundle, QuickJS module, round threads): one small unmeasured run first.
    await runFanOut(bench, taskQueue, input(plan.concurrency));
    const before = await scrapeMetrics(bench.server.metricsUrl);
    const sampler = setInterval(() => {
      try {
        rss.push(worker.rssBytes() / 1024 / 1024);
      } catch {
        clearInterval(sampler);
      }
    }, 500);
    const cpuBefore = { server: readCpuMs(bench.server.pid), worker: readCpuMs(worker.pid), bench: process.cpuUsage() };
    try {
      run = await runFanOut(bench, taskQueue, input(plan.agents));
    } finally {
      clearInterval(sampler);
    }
    const benchUsage = process.cpuUsage(cpuBefore.bench);
    cpu.server = readCpuMs(bench.server.pid) - cpuBefore.server;
    cpu.worker = readCpuMs(worker.pid) - cpuBefore.worker;
    cpu.bench = (benchUsage.user + benchUsage.system) / 1000;
    Object.assign(metrics, metricActions(before, await scrapeMetrics(bench.server.metricsUrl)));
    if (plan.slowDelayMs !== undefined) {
      const cpuAtStart = { server: readCpuMs(bench.server.pid), worker: readCpuMs(worker.pid) };
      const slowRun = await runFanOut(bench, taskQueue, input(plan.agents, plan.slowDelayMs));
      slow = { ms: slowRun.ms, delayMs: plan.slowDelayMs, serverMs: readCpuMs(bench.server.pid) - cpuAtStart.server, workerMs: readCpuMs(worker.pid) - cpuAtStart.worker };
    }
    // One plain delegation with the same answer, on the same worker: what an agent's delegation costs alone.
    plainId = uniqueId('bench-wf-plain');
    const plainInput = benchSubagentInput(bench, `Agent 0 of ${plainId}. ${benchMarker({ delay: plan.delayMs })}`, { label: 'bench agent', route: { provider: benchProviders.http, model: benchModel } });
    await (await bench.client.workflow.start('subagentWorkflow', { taskQueue, workflowId: plainId, args: [plainInput], ...subagentStartOptions(plainInput, { workflowId: plainId, startedBy: 'bench' }) })).result();
  } finally {
    worker.kill(workerStopSignal());
    await worker.exited;
  }

  const chain = await runChain(bench.client, run.workflowId, run.firstRunId);
  const children = await agentDelegations(bench.client, run.workflowId, plan.agents);
  const rounds = roundSamples(chain);
  const plainActions = historyActions(await bench.client.workflow.getHandle(plainId).fetchHistory());
  const plainBytes = (await historySize(bench.client, plainId)).bytes;

  const idealMs = idealMsOf(plan, plan.delayMs);
  const wallRatio = run.ms / idealMs;
  const runBytes = chain.reduce((sum, part) => sum + part.bytes, 0);
  const childBytes = summarize(children.bytes);
  const runActions = chainActions(chain);
  const heartbeatsAndQueries = metrics.heartbeats + metrics.queries;
  const actionsPerAgent = (totalActions(runActions) + totalActions(children.actions) + heartbeatsAndQueries) / plan.agents;
  const plainTotal = totalActions(plainActions);
  const roundMs = rounds.map((sample) => sample.ms);
  const tenth = Math.max(1, Math.floor(rounds.length / 10));
  const early = rounds.slice(0, tenth);
  const late = rounds.slice(-tenth);
  const journalRange = (samples: typeof rounds) => `${Math.min(...samples.map((sample) => sample.journalSize))} – ${Math.max(...samples.map((sample) => sample.journalSize))}`;
  const memory = summarize(rss.length > 0 ? rss : [idleMb]);
  const runText = `${plan.agents} agents at ${plan.concurrency} at once`;
  const activities = Object.entries(activityTimes(chain)).map(([type, time]) => `${type} ×${time.count}, mean ${round(time.ms / time.count)} ms running, ${round(time.queuedMs / time.count)} ms queued`).join('; ');
  const childSpan = summarize(children.spansMs);
  const cpuTotal = cpu.server + cpu.worker + cpu.bench;
  const cpuText = `CPU while it ran: the Temporal dev server ${round(cpu.server / 1000, 1)} s, the worker ${round(cpu.worker / 1000, 1)} s, the bench process (client and scripted model) ${round(cpu.bench / 1000, 1)} s: ${round(cpuTotal / run.ms, 2)} of the machine's ${cpus().length} cores busy on average; per agent ${round(cpu.server / plan.agents, 1)} ms of server and ${round(cpu.worker / plan.agents, 1)} ms of worker CPU.`;

  return [
    {
      id: 'workflow-fanout-wall-time',
      description: `A workflow run of ${runText} (a parallel), each one scripted model call held ${plan.delayMs} ms: wall time vs the ideal`,
      value: round(run.ms / 1000, 2),
      unit: 's',
      min: round(run.ms / 1000, 2),
      max: round(run.ms / 1000, 2),
      baseline: round(idealMs / 1000, 2),
      ratio: round(wallRatio, 3),
      target: 'ratio <= 1.3',
      met: wallRatio <= 1.3,
      runs: 1,
      notes: [
        `ideal = ceil(${plan.agents} / ${plan.concurrency}) × ${plan.delayMs} ms = ${round(idealMs / 1000, 2)} s: every lane busy with a model call all the time. Measured from startWorkflowRun to the run's result on one worker child (\`errand worker\` from the bundled CLI, default options), the scripted OpenAI-compatible server as the model, after an unmeasured run of ${plan.concurrency} agents.`,
        `the run made ${rounds.length} script rounds over ${chain.length} run(s) of its workflow (continue-as-new after ${workflowRoundsBeforeContinueAsNew} rounds, ${workflowAgentsBeforeContinueAsNew} agents or when Temporal suggests it, once no agent runs: the lanes drain at each one and refill from the carried queue). The run's activities: ${activities}. An agent's delegation from its start to its end: median ${round(childSpan.median)} ms (${round(childSpan.min)} – ${round(childSpan.max)}) against the ${plan.delayMs} ms of its model call.`,
        cpuText,
      ],
    },
    ...(slow === undefined ? [] : [slowFigure(plan, slow, cpu, run.ms)]),
    {
      id: 'workflow-fanout-worker-memory',
      description: `Worker child RSS during the run of ${runText}, peak`,
      value: round(memory.max, 1),
      unit: 'MB',
      min: round(memory.min, 1),
      max: round(memory.max, 1),
      target: '<= 1024 MB (the worker-memory bound)',
      met: memory.max <= 1024,
      runs: rss.length,
      notes: [`VmRSS every 500 ms while the run ran (${rss.length} samples, median ${round(memory.median, 1)} MB); the idle worker before any run: ${round(idleMb, 1)} MB. Up to 4 rounds run at once in threads of their own (128 MB heap each at most).`],
    },
    reported('workflow-history-bytes-per-agent', `History bytes of the run itself per agent (all its continue-as-new runs; ${runText})`, round(runBytes / plan.agents), 'B/agent', {}, [
      `${runBytes} bytes over ${chain.length} run(s) (${chain.map((part) => `${part.bytes} B, ${part.events} events`).join('; ')}), server's historySizeBytes of each; the journal goes by reference, so this is the run's bookkeeping: a share of a planWorkflowAgents activity (up to 16 plans each), a child start and its completion per agent, and the rounds and journal writes.`,
      `each agent's own delegation (a child workflow, one model call) has a history of its own: median ${round(childBytes.median)} B (${round(childBytes.min)} – ${round(childBytes.max)}); a plain delegation with the same answer started by a client: ${plainBytes} B. Run plus its agents: ${round((runBytes + children.bytes.reduce((sum, bytes) => sum + bytes, 0)) / plan.agents)} B per agent.`,
    ]),
    reported('workflow-round-p50', `Time of one script round (QuickJS, activity runWorkflowRound), p50, over the run of ${runText}`, round(percentile(roundMs, 50)), 'ms', { min: round(Math.min(...roundMs)), max: round(Math.max(...roundMs)), runs: rounds.length }, [
      `from the activity's start to its completion in history (a round runs the whole script again against the journal, in a thread: load the journal and the script from errand's store, run, store the requests of the agents it starts); ${rounds.length} rounds.`,
      `as the journal grows: first ${early.length} rounds (journal ${journalRange(early)} entries) p50 ${round(percentile(early.map((sample) => sample.ms), 50))} ms, last ${late.length} (journal ${journalRange(late)}) p50 ${round(percentile(late.map((sample) => sample.ms), 50))} ms.`,
    ]),
    reported('workflow-round-p95', 'The same rounds, p95', round(percentile(roundMs, 95)), 'ms', { min: round(Math.min(...roundMs)), max: round(Math.max(...roundMs)), runs: rounds.length }, [
      `first ${early.length} rounds p95 ${round(percentile(early.map((sample) => sample.ms), 95))} ms, last ${late.length} p95 ${round(percentile(late.map((sample) => sample.ms), 95))} ms.`,
    ]),
    reported('workflow-actions-per-agent', `Billable Temporal actions per agent of the run of ${runText} (the run's own and its agents' delegations)`, round(actionsPerAgent, 2), 'actions', { baseline: plainTotal, ratio: round(actionsPerAgent / plainTotal, 3) }, [
      `counted from history (bench/billable-actions.ts) plus heartbeats and queries from the server's metrics during the run (${metrics.heartbeats} heartbeats, ${metrics.queries} queries); baseline: one plain delegation with the same answer, ${formatCounts(plainActions)}.`,
      `the run's own histories: ${formatCounts(runActions, plan.agents)} per agent; its agents' delegations: ${formatCounts(children.actions, plan.agents)} per agent.`,
    ]),
  ];
}

import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import type { WorkflowRunInput } from '../../src/contracts/workflow-run';
import { subagentStartOptions } from '../../src/observability/start-options';
import { startWorkflowRun } from '../../src/workflow-runs/workflow-run-start';
import type { FigureResult } from '../figure';
import { benchModel, benchProviders, benchSubagentInput, mapLimit, startErrandWorker, uniqueId, type Bench } from '../harness';
import { benchMarker } from '../scripted-answers';
import { round, summarize } from '../stats';

/**
 * Workflow runs (issue 42), overhead per agent: `agents` agents of one workflow run (a `parallel` over them,
 * at most `concurrency` at once) against the same number of plain delegations started by a client at the
 * same concurrency (each waits for its result before the next starts in its lane), every model answer the
 * same scripted `ok` held `delayMs`. Wall time per agent, interleaved repetitions after a warm-up of each.
 */

/** How the figure runs. */
export interface WorkflowOverheadPlan {
  agents: number;
  concurrency: number;
  delayMs: number;
  repetitions: number;
}

/** The workflow script of the bench: a `parallel` over `args.count` agents, each a one-turn delegation. */
export const fanOutScript = `
const tasks = Array.from({ length: args.count }, (_, index) => () => agent('Agent ' + index + ' of ' + args.tag + '. ' + args.marker, { label: 'bench agent', model: args.model }));
const results = await parallel(tasks);
return results.filter((result) => result !== null).length;
`;

/** The input of a fan-out run of `count` agents answered by `provider`'s scripted model after `delayMs`. */
export function fanOutInput(bench: Bench, options: { count: number; concurrency: number; delayMs: number; provider: string; tag: string }): WorkflowRunInput {
  return {
    script: fanOutScript,
    scriptName: 'bench-fan-out.js',
    args: { count: options.count, tag: options.tag, marker: benchMarker({ delay: options.delayMs }), model: `${options.provider}/${benchModel}` },
    workingDir: bench.workingDir,
    caps: {},
    concurrency: options.concurrency,
    maxAgents: options.count,
    startedBy: 'bench',
  };
}

/** Runs one fan-out and checks every agent finished; resolves to its wall time (ms) and ids. */
export async function runFanOut(bench: Bench, taskQueue: string, input: WorkflowRunInput): Promise<{ ms: number; workflowId: string; firstRunId: string }> {
  const workflowId = uniqueId('bench-wfrun');
  const started = performance.now();
  const handle = await startWorkflowRun(bench.client, { workflowId, taskQueue, input });
  // The client's start returns the first run's id; startWorkflowRun's declared type leaves it out.
  const firstRunId = (handle as Partial<WorkflowHandleWithFirstExecutionRunId>).firstExecutionRunId;
  if (firstRunId === undefined) throw new Error(`startWorkflowRun returned no first run id for ${workflowId}`);
  const result = await handle.result();
  const ms = performance.now() - started;
  const count = (input.args as { count: number }).count;
  if (result.status !== 'completed' || result.result !== count) {
    throw new Error(`workflow run ${workflowId} ended ${result.status} with ${JSON.stringify(result.result ?? result.diagnostic ?? null)}, agents ${JSON.stringify(result.agents)}; expected ${count} agents done`);
  }
  return { ms, workflowId, firstRunId };
}

async function plainDelegations(bench: Bench, taskQueue: string, plan: WorkflowOverheadPlan, count: number): Promise<number> {
  const prefix = uniqueId('bench-wfplain');
  const started = performance.now();
  await mapLimit(Array.from({ length: count }, (_, index) => index), plan.concurrency, async (index) => {
    const workflowId = `${prefix}-${index}`;
    const input = benchSubagentInput(bench, `Agent ${index} of ${prefix}. ${benchMarker({ delay: plan.delayMs })}`, { label: 'bench agent' });
    const handle = await bench.client.workflow.start('subagentWorkflow', { taskQueue, workflowId, args: [input], ...subagentStartOptions(input, { workflowId, startedBy: 'bench' }) });
    const result = (await handle.result()) as { status: string };
    if (result.status !== 'completed') throw new Error(`plain delegation ${workflowId} ended ${result.status}`);
  });
  return performance.now() - started;
}

/** Measures the figure `workflow-overhead-per-agent`. */
export async function measureWorkflowOverhead(bench: Bench, plan: WorkflowOverheadPlan): Promise<FigureResult> {
  const taskQueue = uniqueId('bench-wf-overhead');
  const worker = await startErrandWorker(bench, taskQueue);
  const runPerAgent: number[] = [];
  const plainPerAgent: number[] = [];
  const order: string[] = [];
  const warmUp = Math.max(2, Math.round(plan.agents / 4));
  const runOnce = async (count: number) => (await runFanOut(bench, taskQueue, fanOutInput(bench, { count, concurrency: plan.concurrency, delayMs: plan.delayMs, provider: benchProviders.inProcess, tag: uniqueId('run') }))).ms;
  try {
    await plainDelegations(bench, taskQueue, plan, warmUp);
    await runOnce(warmUp);
    // Counterbalanced (plain, run, run, plain, …): the server slows down as its store fills.
    for (let index = 0; index < plan.repetitions; index += 1) {
      const kinds = index % 2 === 0 ? (['plain', 'run'] as const) : (['run', 'plain'] as const);
      for (const kind of kinds) {
        const perAgent = (kind === 'run' ? await runOnce(plan.agents) : await plainDelegations(bench, taskQueue, plan, plan.agents)) / plan.agents;
        (kind === 'run' ? runPerAgent : plainPerAgent).push(perAgent);
        order.push(`${kind} ${round(perAgent, 1)}`);
      }
    }
  } finally {
    await worker.stop();
  }
  const run = summarize(runPerAgent);
  const plain = summarize(plainPerAgent);
  const ratio = run.median / plain.median;
  const ideal = (Math.ceil(plan.agents / plan.concurrency) * plan.delayMs) / plan.agents;
  return {
    id: 'workflow-overhead-per-agent',
    description: `Wall time per agent of a workflow run (${plan.agents} agents in a parallel, ${plan.concurrency} at once) vs ${plan.agents} plain delegations started by a client ${plan.concurrency} at a time`,
    value: round(run.median, 1),
    unit: 'ms/agent',
    min: round(run.min, 1),
    max: round(run.max, 1),
    baseline: round(plain.median, 1),
    ratio: round(ratio, 3),
    target: 'ratio <= 1.2',
    met: ratio <= 1.2,
    runs: plan.repetitions,
    notes: [
      `every agent and every plain delegation is one model call answered \`ok\` by the in-process scripted model after ${plan.delayMs} ms, on one in-process errand worker; the ideal at this concurrency is ${round(ideal, 1)} ms/agent (ceil(${plan.agents}/${plan.concurrency}) × ${plan.delayMs} ms / ${plan.agents}).`,
      `run: from startWorkflowRun to its result (script rounds in the QuickJS sandbox, planWorkflowAgents activities planning up to 16 agents each, ahead of their lanes, and a child delegation per agent, the journal written as agents finish); plain: from the first client start to the last result, ${plan.concurrency} lanes each starting the next delegation when its last one ended.`,
      `${plan.repetitions} repetitions of each in counterbalanced order after one unmeasured warm-up of ${warmUp} agents each; per agent in the order measured (ms): ${order.join(', ')}.`,
    ],
  };
}

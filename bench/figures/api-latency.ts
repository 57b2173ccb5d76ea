import { createApp } from '../../src/api/app';
import { createApiDependencies } from '../../src/api/default-dependencies';
import { startApiServer } from '../../src/api/server';
import { onCleanup } from '../cleanup';
import { benchSubagentInput, benchProviders, uniqueId, type Bench } from '../harness';
import type { FigureResult } from '../figure';
import { percentile, round } from '../stats';

/**
 * Figure 4, API start latency: `POST /v1/delegations` on loopback (the Hono app served by @hono/node-server,
 * auth off, its own lazily made Temporal connection, as `errand api` runs it) against a bare
 * `client.workflow.start` of the same workflow type, interleaved in the same run. No worker polls the task
 * queue, so only the start path is measured.
 */
export async function measureApiLatency(bench: Bench, samples: number): Promise<FigureResult[]> {
  const taskQueue = uniqueId('bench-api-idle');
  const deps = createApiDependencies({
    env: {
      ERRAND_API_AUTH: 'off',
      ERRAND_TEMPORAL_ADDRESS: bench.server.address,
      ERRAND_TASK_QUEUE: taskQueue,
      ERRAND_PROVIDERS: JSON.stringify(bench.providers),
      ERRAND_DEFAULT_MODEL: `${benchProviders.inProcess}/bench-model`,
      ERRAND_DATA_DIR: bench.config.dataDir,
      ERRAND_WORKING_DIR: bench.workingDir,
    },
  });
  onCleanup('API Temporal connection', () => deps.temporal.close());
  const server = await startApiServer(createApp(deps), { host: '127.0.0.1', port: 0 });
  const unregister = onCleanup('API server', () => server.close());
  const apiMs: number[] = [];
  const bareMs: number[] = [];
  const body = JSON.stringify({ instructions: 'Benchmark delegation: list the folder and stop.', description: 'bench api start' });
  const viaApi = async (): Promise<number> => {
    const started = performance.now();
    const response = await fetch(`${server.url}/v1/delegations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await response.text();
    const elapsed = performance.now() - started;
    if (response.status !== 201) throw new Error(`POST /v1/delegations answered ${response.status}: ${text.slice(0, 300)}`);
    return elapsed;
  };
  const bare = async (): Promise<number> => {
    const input = benchSubagentInput(bench, 'Benchmark delegation: list the folder and stop.');
    const started = performance.now();
    await bench.client.workflow.start('subagentWorkflow', { taskQueue, workflowId: uniqueId('bench-bare-start'), args: [input] });
    return performance.now() - started;
  };
  try {
    // Warm-up: connections, JIT and the API's lazy Temporal client.
    for (let index = 0; index < 10; index += 1) {
      await viaApi();
      await bare();
    }
    for (let index = 0; index < samples; index += 1) {
      apiMs.push(await viaApi());
      bareMs.push(await bare());
    }
  } finally {
    unregister();
    await server.close();
  }
  const apiP50 = percentile(apiMs, 50);
  const bareP50 = percentile(bareMs, 50);
  const apiP99 = percentile(apiMs, 99);
  const bareP99 = percentile(bareMs, 99);
  const notes = [
    `${samples} sequential requests each, interleaved, after 10 warm-ups; latency = request sent → full response read (API) or start call → resolved (bare).`,
    `the API route validates the body, plans (temporary ad-hoc planner), and starts with search attributes, static summary/details and a memo; the bare start sends only the input.`,
  ];
  return [
    {
      id: 'api-start-latency-p50',
      description: 'POST /v1/delegations latency on loopback, p50, vs bare client.workflow.start',
      value: round(apiP50),
      unit: 'ms',
      min: round(Math.min(...apiMs)),
      max: round(Math.max(...apiMs)),
      baseline: round(bareP50),
      ratio: round(apiP50 / bareP50, 3),
      target: 'p50 ratio <= 1.5',
      met: apiP50 / bareP50 <= 1.5,
      runs: samples,
      notes,
    },
    {
      id: 'api-start-latency-p99',
      description: 'POST /v1/delegations latency on loopback, p99, vs bare client.workflow.start',
      value: round(apiP99),
      unit: 'ms',
      min: round(Math.min(...apiMs)),
      max: round(Math.max(...apiMs)),
      baseline: round(bareP99),
      ratio: round(apiP99 / bareP99, 3),
      target: 'reported (no target)',
      met: null,
      runs: samples,
      notes: [`with ${samples} samples, p99 is the ${Math.ceil(0.99 * samples)}-th smallest.`],
    },
  ];
}

import { Agent } from 'node:http';
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { plainHttpRequest } from '../../src/http/plain-http';
import { freePort } from '../../src/dev/free-port';
import { onCleanup, trackChildPid, untrackChildPid } from '../cleanup';
import { benchSubagentInput, benchProviders, buildCliBundle, projectRoot, uniqueId, waitUntil, type Bench } from '../harness';
import type { FigureResult } from '../figure';
import { percentile, round } from '../stats';

/**
 * Figure 4, API start latency: `POST /v1/delegations` on loopback to `errand api` (its own process, the
 * bundled CLI: Hono on @hono/node-server, auth off, request log on (to a file), its own Temporal connection) against a
 * bare `client.workflow.start` of the same workflow type from the bench process, interleaved in the same
 * run. No worker polls the task queue, so only the start path is measured. The API is configured as
 * `errand dev` configures its own: with Temporal's HTTP API (`ERRAND_TEMPORAL_HTTP_URL`), through which it
 * starts (decision 0019); a second run without the setting, through the gRPC client, is reported beside it.
 */
/** Unmeasured requests of each kind before the samples (fewer in a quick run, which measures 10). */
const warmUpsFor = (samples: number): number => Math.min(1_000, samples * 10);

/** Latencies of one interleaved run: POST /v1/delegations to a fresh `errand api`, and a bare start. */
async function measureOnce(bench: Bench, samples: number, throughTemporalHttp: boolean): Promise<{ apiMs: number[]; bareMs: number[] }> {
  const taskQueue = uniqueId('bench-api-idle');
  // `errand api` as it is deployed: its own process (the bundled CLI), its own Temporal connection.
  const port = await freePort('127.0.0.1');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(bench.tempDir, 'home'),
    ERRAND_API_AUTH: 'off',
    ERRAND_API_HOST: '127.0.0.1',
    ERRAND_API_PORT: String(port),
    ERRAND_TEMPORAL_ADDRESS: bench.server.address,
    // With it, plain starts go through Temporal's HTTP API (decision 0019); without it, through the gRPC client.
    ...(throughTemporalHttp ? { ERRAND_TEMPORAL_HTTP_URL: bench.server.httpUrl } : {}),
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_PROVIDERS: JSON.stringify(bench.providers),
    ERRAND_DEFAULT_MODEL: `${benchProviders.inProcess}/bench-model`,
    ERRAND_DATA_DIR: bench.config.dataDir,
    ERRAND_WORKING_DIR: bench.workingDir,
  };
  await buildCliBundle();
  // Its output (the request log: one line per request) goes to a file, as a deployed server's goes to its
  // log collector, not through a pipe into this process, which would wake up to read it during every request.
  const logPath = join(bench.workDir, `api-latency-errand-api-${throughTemporalHttp ? 'http' : 'grpc'}.log`);
  const logFd = openSync(logPath, 'a');
  const child = spawn(process.execPath, [join('bin', 'errand.js'), 'api'], { cwd: projectRoot, env, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  if (child.pid === undefined) throw new Error('could not spawn errand api');
  const pid = child.pid;
  trackChildPid(pid);
  let exitCode: number | string | undefined;
  const exited = new Promise<void>((resolveExit) => child.once('exit', (code, signal) => {
    exitCode = code ?? signal ?? '?';
    resolveExit();
  }));
  const unregister = onCleanup('errand api child', async () => {
    child.kill('SIGTERM');
    await exited;
  });
  await waitUntil(() => {
    if (exitCode !== undefined) throw new Error(`errand api exited (${exitCode}) before listening; see its log in ${bench.workDir}`);
    return readFileSync(logPath, 'utf8').includes('listening on');
  }, 60_000, 'errand api to listen', 20);
  const server = { url: `http://127.0.0.1:${port}` };
  const apiMs: number[] = [];
  const bareMs: number[] = [];
  const body = JSON.stringify({ instructions: 'Benchmark delegation: list the folder and stop.', description: 'bench api start' });
  // The client: Node's http module with a keep-alive connection, as lean as the SDK's gRPC client is for the
  // bare start. (`fetch`, i.e. undici, adds about half a millisecond per request on this kind of machine.)
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  onCleanup('API client agent', async () => agent.destroy());
  const post = (path: string, payload: string) => plainHttpRequest(`${server.url}${path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json' }, body: payload });
  const viaApi = async (): Promise<number> => {
    const started = performance.now();
    const response = await post('/v1/delegations', body);
    const elapsed = performance.now() - started;
    if (response.status !== 201) throw new Error(`POST /v1/delegations answered ${response.status}: ${response.text.slice(0, 300)}`);
    return elapsed;
  };
  const bare = async (): Promise<number> => {
    const input = benchSubagentInput(bench, 'Benchmark delegation: list the folder and stop.');
    const started = performance.now();
    await bench.client.workflow.start('subagentWorkflow', { taskQueue, workflowId: uniqueId('bench-bare-start'), args: [input] });
    return performance.now() - started;
  };
  try {
    // Warm-up: connections, the API's lazy Temporal client, and the JIT of both paths. A deployed API answers
    // many requests, and the bench's own client is already hot from the figures before this one, so both
    // are measured in their steady state: measured inside `errand api`, the work before the start call took
    // 0.62 ms after 200 requests and 0.39 ms after a few thousand (10 warm-ups left it half-optimized).
    for (let index = 0; index < warmUpsFor(samples); index += 1) {
      await viaApi();
      await bare();
    }
    for (let index = 0; index < samples; index += 1) {
      apiMs.push(await viaApi());
      bareMs.push(await bare());
    }
  } finally {
    unregister();
    child.kill('SIGTERM');
    await exited;
    untrackChildPid(pid);
  }
  return { apiMs, bareMs };
}

export async function measureApiLatency(bench: Bench, samples: number): Promise<FigureResult[]> {
  const { apiMs, bareMs } = await measureOnce(bench, samples, true);
  // The same through the gRPC client (no ERRAND_TEMPORAL_HTTP_URL), reported beside it.
  const grpc = await measureOnce(bench, samples, false);
  const grpcP50 = percentile(grpc.apiMs, 50);
  const grpcBareP50 = percentile(grpc.bareMs, 50);
  const apiP50 = percentile(apiMs, 50);
  const bareP50 = percentile(bareMs, 50);
  const apiP99 = percentile(apiMs, 99);
  const bareP99 = percentile(bareMs, 99);
  const notes = [
    `${samples} sequential requests each, interleaved, after ${warmUpsFor(samples)} warm-ups of each; latency = request sent → full response read (API) or start call → resolved (bare).`,
    'the API is `errand api` in a process of its own (the bundled CLI), as deployed; its client is Node\'s http module over one keep-alive connection (the bare start uses the SDK\'s gRPC client over its one connection).',
    'the API has ERRAND_TEMPORAL_HTTP_URL, as `errand dev` gives its own, so it starts with one HTTP/1.1 request to Temporal\'s HTTP API (decision 0019); without it see api-start-latency-grpc-p50.',
    `the API route validates the body, plans (temporary ad-hoc planner), and starts with search attributes and static summary/details (a memo only with an Idempotency-Key, which the figure does not send); the bare start sends only the input.`,
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
    {
      id: 'api-start-latency-grpc-p50',
      description: 'POST /v1/delegations latency on loopback, p50, vs bare client.workflow.start, the API without ERRAND_TEMPORAL_HTTP_URL (gRPC client)',
      value: round(grpcP50),
      unit: 'ms',
      min: round(Math.min(...grpc.apiMs)),
      max: round(Math.max(...grpc.apiMs)),
      baseline: round(grpcBareP50),
      ratio: round(grpcP50 / grpcBareP50, 3),
      target: 'reported (no target)',
      met: null,
      runs: samples,
      notes: ['a second run right after the first, the same in every way except the setting: the API starts through the Temporal client\'s gRPC connection.'],
    },
  ];
}

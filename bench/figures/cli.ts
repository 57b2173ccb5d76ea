import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createApp } from '../../src/api/app';
import { createApiDependencies } from '../../src/api/default-dependencies';
import { startApiServer } from '../../src/api/server';
import { temporalCliPath } from '../../src/dev/tool-paths';
import { onCleanup } from '../cleanup';
import { benchModel, benchProviders, buildCliBundle, projectRoot, startErrandWorker, uniqueId, waitUntil, type Bench } from '../harness';
import type { FigureResult } from '../figure';
import { benchMarker } from '../scripted-answers';
import { round, summarize } from '../stats';

/**
 * CLI figures: `errand --help` and `errand peek <id>` as a person runs them (`node bin/errand.js`, the
 * bundled CLI that `npm ci` builds), side by side with the Temporal CLI (`temporal --help`, `temporal
 * workflow describe`) against the same server and the same workflow. Each is a fresh process, timed from
 * spawn to exit; runs are interleaved so load hits both alike. Peak RSS comes from the kernel's account of
 * a finished child (getrusage RUSAGE_CHILDREN, read by a small python3 wrapper, python3 being a project
 * prerequisite).
 */

const run = promisify(execFile);

interface Timed {
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion; wall time from spawn to exit. */
function timed(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Timed> {
  return new Promise((resolveRun, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ ms: performance.now() - started, code, stdout, stderr }));
  });
}

/** Peak resident memory (MB) of one run of a command. */
async function peakRssMb(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const script = 'import resource, subprocess, sys\nsubprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\nprint(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)';
  const { stdout } = await run('python3', ['-c', script, command, ...args], { cwd: projectRoot, env });
  return Number(stdout.trim()) / 1024;
}

function expectOk(what: string, result: Timed, pattern: RegExp): void {
  if (result.code !== 0 || !pattern.test(result.stdout)) throw new Error(`${what} failed (exit ${result.code}): ${result.stderr.slice(0, 400)}${result.stdout.slice(0, 200)}`);
}

/** Measures `errand --help` and `errand peek` against the Temporal CLI; builds the CLI bundle first. */
export async function measureCli(bench: Bench, samples: number): Promise<FigureResult[]> {
  // The figure is about the bundled CLI: build it as `npm ci` does, so it is fresh for this code.
  const build = await buildCliBundle();
  const taskQueue = uniqueId('bench-cli');
  const worker = await startErrandWorker(bench, taskQueue);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: join(bench.tempDir, 'home'),
    ERRAND_TEMPORAL_ADDRESS: bench.server.address,
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_PROVIDERS: JSON.stringify(bench.providers),
    ERRAND_DEFAULT_MODEL: `${benchProviders.inProcess}/${benchModel}`,
    ERRAND_DATA_DIR: join(bench.tempDir, 'data-cli'),
    ERRAND_WORKING_DIR: bench.workingDir,
    // Peek reads through Temporal's HTTP API (decision 0013); the gRPC fallback is measured beside it.
    ERRAND_TEMPORAL_HTTP_URL: bench.server.httpUrl,
  };
  const { ERRAND_TEMPORAL_HTTP_URL: _httpUrl, ...grpcEnv } = env;
  // The same delegations through an API server (auth off: tenant "local", as the in-process CLI uses).
  const deps = createApiDependencies({ env: { ...env, ERRAND_API_AUTH: 'off' } });
  onCleanup('CLI figure API Temporal connection', () => deps.temporal.close());
  const api = await startApiServer(createApp(deps, { requestLog: false }), { host: '127.0.0.1', port: 0 });
  const unregisterApi = onCleanup('CLI figure API server', () => api.close());
  const errand = (args: string[]) => timed(process.execPath, [join('bin', 'errand.js'), ...args], env);
  const errandGrpc = (args: string[]) => timed(process.execPath, [join('bin', 'errand.js'), ...args], grpcEnv);
  const errandHttp = (args: string[]) => timed(process.execPath, [join('bin', 'errand.js'), ...args], { ...env, ERRAND_API_URL: api.url });
  const temporal = (args: string[]) => timed(temporalCliPath(), args, env);
  const helpMs: number[] = [];
  const temporalHelpMs: number[] = [];
  const peekMs: number[] = [];
  const peekHttpMs: number[] = [];
  const peekGrpcMs: number[] = [];
  const describeMs: number[] = [];
  let helpRss: number[] = [];
  let temporalHelpRss: number[] = [];
  let peekRss: number[] = [];
  try {
    // A continuable delegation that answered and waits: what one peeks at while it lives.
    const started = await errand(['delegate', '--continuable', '--json', `Answer and wait. ${benchMarker({ answer: 200 })}`]);
    expectOk('errand delegate', started, /"id"/);
    // `delegate --continuable --json` prints JSON lines, the `started` event (with the id) first.
    const id = (JSON.parse(started.stdout.split('\n')[0] ?? '') as { event: string; data: { id: string } }).data.id;
    await waitUntil(async () => {
      const description = await bench.client.workflow.getHandle(id).describe();
      return description.searchAttributes.ErrandStatus?.[0] === 'waiting';
    }, 60_000, `delegation ${id} to wait`, 200);
    const describeArgs = ['workflow', 'describe', '--workflow-id', id, '--address', bench.server.address, '--namespace', 'default'];
    // Warm-up: the OS file cache, for both CLIs alike.
    expectOk('errand --help', await errand(['--help']), /usage: errand/);
    expectOk('errand peek', await errand(['peek', id]), new RegExp(id));
    expectOk('temporal workflow describe', await temporal(describeArgs), new RegExp(id));
    for (let index = 0; index < samples; index += 1) {
      helpMs.push((await errand(['--help'])).ms);
      temporalHelpMs.push((await temporal(['--help'])).ms);
      const peek = await errand(['peek', id]);
      expectOk('errand peek', peek, new RegExp(id));
      peekMs.push(peek.ms);
      const overHttp = await errandHttp(['peek', id]);
      expectOk('errand peek over HTTP', overHttp, new RegExp(id));
      peekHttpMs.push(overHttp.ms);
      const overGrpc = await errandGrpc(['peek', id]);
      expectOk('errand peek over gRPC', overGrpc, new RegExp(id));
      peekGrpcMs.push(overGrpc.ms);
      describeMs.push((await temporal(describeArgs)).ms);
    }
    helpRss = [await peakRssMb(process.execPath, [join('bin', 'errand.js'), '--help'], env), await peakRssMb(process.execPath, [join('bin', 'errand.js'), '--help'], env), await peakRssMb(process.execPath, [join('bin', 'errand.js'), '--help'], env)];
    temporalHelpRss = [await peakRssMb(temporalCliPath(), ['--help'], env), await peakRssMb(temporalCliPath(), ['--help'], env), await peakRssMb(temporalCliPath(), ['--help'], env)];
    peekRss = [await peakRssMb(process.execPath, [join('bin', 'errand.js'), 'peek', id], env), await peakRssMb(process.execPath, [join('bin', 'errand.js'), 'peek', id], env), await peakRssMb(process.execPath, [join('bin', 'errand.js'), 'peek', id], env)];
    await bench.client.workflow.getHandle(id).terminate('bench: CLI figure done');
  } finally {
    unregisterApi();
    await api.close();
    await worker.stop();
  }
  const help = summarize(helpMs);
  const temporalHelp = summarize(temporalHelpMs);
  const peek = summarize(peekMs);
  const describe = summarize(describeMs);
  const peekHttp = summarize(peekHttpMs);
  const peekGrpc = summarize(peekGrpcMs);
  const mb = (values: number[]) => round(summarize(values).median, 1);
  const common = [
    `${samples} runs of each, interleaved, after one warm-up each; wall time from spawn to exit of a fresh process; \`node bin/errand.js\` runs the bundle (${build}).`,
    `node itself (\`node -e 0\`) is the floor under any Node CLI; the Temporal CLI is one Go binary.`,
  ];
  return [
    {
      id: 'cli-help',
      description: '`errand --help` wall time vs `temporal --help`',
      value: round(help.median, 1),
      unit: 'ms',
      min: round(help.min, 1),
      max: round(help.max, 1),
      baseline: round(temporalHelp.median, 1),
      ratio: round(help.median / temporalHelp.median, 2),
      target: '<= 150 ms',
      met: help.median <= 150,
      runs: samples,
      notes: [...common, `peak RSS (median of 3): errand --help ${mb(helpRss)} MB, temporal --help ${mb(temporalHelpRss)} MB.`],
    },
    {
      id: 'cli-peek',
      description: '`errand peek <id>` (straight to Temporal through its HTTP API, ERRAND_TEMPORAL_HTTP_URL) wall time vs `temporal workflow describe`',
      value: round(peek.median, 1),
      unit: 'ms',
      min: round(peek.min, 1),
      max: round(peek.max, 1),
      baseline: round(describe.median, 1),
      ratio: round(peek.median / describe.median, 2),
      target: '<= 350 ms',
      met: peek.median <= 350,
      runs: samples,
      notes: [
        ...common,
        `peek loads its configuration and reads the delegation with two plain HTTP requests (Node's http module) to Temporal's HTTP API (describe + peek query), no Temporal client; describe min–max ${round(describe.min, 1)}–${round(describe.max, 1)} ms.`,
        `without ERRAND_TEMPORAL_HTTP_URL (the in-process API with the Temporal gRPC client): median ${round(peekGrpc.median, 1)} ms (min ${round(peekGrpc.min, 1)}, max ${round(peekGrpc.max, 1)}).`,
        `the same peek through an API server (ERRAND_API_URL; no Temporal client in the CLI process): median ${round(peekHttp.median, 1)} ms (min ${round(peekHttp.min, 1)}, max ${round(peekHttp.max, 1)}).`,
        `peak RSS (median of 3): errand peek ${mb(peekRss)} MB.`,
      ],
    },
  ];
}

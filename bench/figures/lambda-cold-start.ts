import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { apiBundleEntryFile, apiBundleHandler, apiBundleOptions, buildApiBundle } from '../../infra/lib/api-bundle';
import { apiFunctionEnvironment, sharedEnvironment } from '../../infra/lib/api-function-environment';
import { parseSettings } from '../../infra/lib/settings';
import { hashApiKey } from '../../src/api/auth-config';
import { gatewayEvent } from '../../test/support/api-gateway-events';
import { startLambdaEmulator, type LambdaEmulator } from '../../test/support/lambda-emulator';
import type { FigureResult } from '../figure';
import type { Bench } from '../harness';
import { round, summarize } from '../stats';

/**
 * The API's Lambda: the bundle the CDK app deploys (infra/lib/api-bundle.ts), its size, and its cold start
 * under AWS's Runtime Interface Emulator with the Node runtime interface client — the init duration the
 * emulator reports (`INIT REPORT`), as Lambda bills and shows it — beside a minimal Hono Lambda built the
 * same way (the floor: Node, the runtime client and a router). Each sample is a new emulator, so a new
 * container and a cold start; errand and the baseline alternate. What a cold start defers is reported
 * beside it, so init is not bought by moving the load to the first request: the first request's duration (a
 * GET /healthz with a key, which builds the app and its dependencies) and then the first request that reaches
 * Temporal (GET /v1/delegations: a visibility listing through Temporal's HTTP API, decision 0026).
 */

const baselineSource = `import { Hono } from 'hono';
import { handle } from 'hono/aws-lambda';
const app = new Hono();
app.get('/healthz', (c) => c.json({ ok: true }));
export const handler = handle(app);
`;

const codeTargetBytes = 2 * 1024 * 1024;
const initTargetMs = 300;

interface ColdStart {
  initMs: number;
  firstRequestMs: number;
  /** The first request that reaches Temporal (errand only). */
  firstTemporalMs: number | undefined;
}

async function timed(emulator: LambdaEmulator, path: string, key: string): Promise<number> {
  const started = performance.now();
  const answer = await emulator.invoke(gatewayEvent('GET', path, { key }));
  const ms = performance.now() - started;
  if (answer.statusCode !== 200) throw new Error(`GET ${path} answered ${answer.statusCode}: ${answer.body.slice(0, 300)}`);
  return ms;
}

/** One cold start: a new emulator, GET /healthz (and for errand GET /v1/delegations), the emulator's INIT REPORT and the requests' durations. */
async function coldStart(taskRoot: string, env: Record<string, string>, key: string, reachTemporal: boolean): Promise<ColdStart> {
  const emulator = await startLambdaEmulator({ taskRoot, handler: apiBundleHandler, env });
  try {
    const firstRequestMs = await timed(emulator, '/healthz', key);
    const firstTemporalMs = reachTemporal ? await timed(emulator, '/v1/delegations', key) : undefined;
    const initMs = emulator.initDurationMs();
    if (initMs === undefined) throw new Error(`the emulator reported no init duration:\n${emulator.log().slice(-2000)}`);
    return { initMs, firstRequestMs, firstTemporalMs };
  } finally {
    await emulator.stop();
  }
}

/** Bundle size and cold start of the API's Lambda, against a minimal Hono Lambda. */
export async function measureLambdaColdStart(bench: Bench, samples: number): Promise<FigureResult[]> {
  const folder = join(bench.workDir, 'lambda');
  const api = buildApiBundle(join(folder, 'api'));
  const baselineDir = join(folder, 'baseline');
  mkdirSync(baselineDir, { recursive: true });
  writeFileSync(join(folder, 'baseline-handler.ts'), baselineSource);
  const { entryPoints: _apiEntry, ...sameOptions } = apiBundleOptions;
  buildSync({ ...sameOptions, entryPoints: { index: join(folder, 'baseline-handler.ts') }, outdir: baselineDir });

  const key = 'bench-lambda-key-0123456789';
  const settings = parseSettings({
    temporalAddress: bench.server.address,
    // The deployment's fast path: the function reaches Temporal only through its HTTP API (decision 0026).
    temporalHttpUrl: bench.server.httpUrl,
    temporalNamespace: 'default',
    temporalAuth: 'none',
    providers: JSON.stringify(bench.providers),
  });
  const env = {
    ...apiFunctionEnvironment({ temporal: sharedEnvironment(settings, '[]'), workingRoot: join(folder, 'work'), payloadBucket: 'errand-bench-payloads', payloadPrefix: 'worker/' }),
    ERRAND_API_KEYS: JSON.stringify([{ tenant: 'bench', sha256: hashApiKey(key) }]),
    ERRAND_DATA_DIR: join(folder, 'function-tmp'),
  };

  const errand: ColdStart[] = [];
  const bare: ColdStart[] = [];
  for (let sample = 0; sample < samples; sample += 1) {
    // Alternate which goes first, so load that rises or falls during the run hits both alike.
    const order = sample % 2 === 0 ? ['errand', 'bare'] : ['bare', 'errand'];
    for (const which of order) {
      if (which === 'errand') errand.push(await coldStart(api.directory, env, key, true));
      else bare.push(await coldStart(baselineDir, {}, key, false));
    }
  }
  const init = summarize(errand.map((run) => run.initMs));
  const bareInit = summarize(bare.map((run) => run.initMs));
  const first = summarize(errand.map((run) => run.firstRequestMs));
  const bareFirst = summarize(bare.map((run) => run.firstRequestMs));
  const firstTemporal = summarize(errand.map((run) => run.firstTemporalMs ?? 0));
  const baselineBytes = statSync(join(baselineDir, apiBundleEntryFile)).size;
  return [
    {
      id: 'lambda-bundle-bytes',
      description: "The API's Lambda bundle as the CDK app builds it: index.mjs and the chunks it imports (the code a cold start loads)",
      value: api.codeBytes,
      unit: 'bytes',
      min: api.codeBytes,
      max: api.codeBytes,
      baseline: baselineBytes,
      target: `<= ${codeTargetBytes} (2 MiB)`,
      met: api.codeBytes <= codeTargetBytes,
      runs: 1,
      notes: [
        `${api.coldStartFiles.length} files load at a cold start; all code, the chunks routes load on demand included: ${api.allCodeBytes} bytes; deployment package with source maps: ${api.packageBytes} bytes; a minimal Hono Lambda built the same way: ${baselineBytes} bytes`,
      ],
    },
    {
      id: 'lambda-init-duration-p50',
      description: 'Init duration of a cold start under the Lambda Runtime Interface Emulator (aws-lambda-ric, Node), median',
      value: round(init.median),
      unit: 'ms',
      min: round(init.min),
      max: round(init.max),
      baseline: round(bareInit.median),
      ratio: round(init.median / bareInit.median),
      target: `<= ${initTargetMs} ms`,
      met: init.median <= initTargetMs,
      runs: init.count,
      notes: [
        `baseline: a minimal Hono Lambda, same build and runtime: ${round(bareInit.median)} ms (${round(bareInit.min)} – ${round(bareInit.max)})`,
        `first request after the cold start (GET /healthz, builds the app and its dependencies): errand ${round(first.median)} ms (${round(first.min)} – ${round(first.max)}), baseline ${round(bareFirst.median)} ms`,
        `then the first request that reaches Temporal (GET /v1/delegations, a listing through its HTTP API): ${round(firstTemporal.median)} ms (${round(firstTemporal.min)} – ${round(firstTemporal.max)})`,
      ],
    },
  ];
}

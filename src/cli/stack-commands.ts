import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { NativeConnection } from '@temporalio/worker';
import { assertAuthOnLoopback, loadApiConfig } from '../api/api-config';
import { createApp } from '../api/app';
import { createApiDependencies } from '../api/default-dependencies';
import { startApiServer } from '../api/server';
import { loadConfig, type ErrandConfig } from '../settings/config';
import { defaultApiPort } from '../contracts/limits/api';
import { startDevServer } from '../dev/temporal-dev-server';
import { projectRoot } from '../dev/tool-paths';
import { createDemoModel, demoProviderConfig, demoProviderName } from '../llm/demo-model';
import { checkWorkerEnvironment, commandOptions, createWorkerDependencies } from '../worker/worker-dependencies';
import { createErrandWorker, runWorker } from '../worker/errand-worker';
import { processContainmentSummary } from '../tools/process-containment';
import { startTracing, stopTracing, tracingSettings } from '../observability/tracing';
import type { CliContext } from './cli-context';
import { UsageError } from './cli-io';
import { chooseDevSandbox, devSandboxBanner } from './dev-sandbox-default';
import { processIsAlive, readDevStackState, removeDevStackState, writeDevStackState } from './dev-stack-state';
import { createDevStackToken, removeDevStackToken, withDevStackToken } from './dev-stack-token';

/** `errand dev | worker`: the processes of an errand stack (`errand api` is in api-command.ts). */

/** Default local ports: Temporal's usual gRPC and Web UI ports, so the Temporal CLI finds the server. */
const defaultTemporalPort = 7233;
const defaultUiPort = 8233;
/** Temporal's usual HTTP API port (`temporal server start-dev`'s default), for `ERRAND_TEMPORAL_HTTP_URL`. */
const defaultTemporalHttpPort = 7243;

async function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolveCheck) => {
    const probe = createServer();
    probe.once('error', () => resolveCheck(false));
    probe.listen(port, host, () => probe.close(() => resolveCheck(true)));
  });
}

function port(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0 || parsed > 65_535) throw new UsageError(`--${flag} "${value}" is not a port number (0-65535; 0 picks a free port)`);
  return parsed;
}

/** A requested port, or the default when free, or undefined (= pick a free one) when the default is taken. */
async function choosePort(host: string, requested: number | undefined, fallback: number, notes: string[], what: string): Promise<number | undefined> {
  if (requested !== undefined) return requested === 0 ? undefined : requested;
  if (await portIsFree(host, fallback)) return fallback;
  notes.push(`port ${fallback} is in use, so the ${what} uses another free port`);
  return undefined;
}

/** Adds the demo model when no provider is configured; says so loudly. */
function withDemoModel(env: NodeJS.ProcessEnv, cwd: string): { config: ErrandConfig; env: NodeJS.ProcessEnv; demo: boolean } {
  const config = loadConfig(env, cwd);
  if (config.providers.length > 0) return { config, env, demo: false };
  const demoEnv = { ...env, ERRAND_PROVIDERS: JSON.stringify([demoProviderConfig]) };
  return { config: loadConfig(demoEnv, cwd), env: demoEnv, demo: true };
}

/**
 * `errand dev`: the whole local stack in one process — a Temporal dev server (Web UI on, state in a SQLite
 * file under the data directory, so it survives restarts), a worker, and the API server. Without API keys
 * configured, requests run as tenant `local` and must carry the stack's token (dev-stack-token.ts); model
 * commands run in the bubblewrap sandbox wherever it works (dev-sandbox-default.ts). With no LLM provider
 * configured it runs the demo model.
 */
export async function devCommand(argv: string[], context: CliContext): Promise<number> {
  const values = devOptions(argv);
  const { io } = context;
  const host = values.host ?? '127.0.0.1';
  const notes: string[] = [];
  const baseEnv: NodeJS.ProcessEnv = { ...context.env };
  // The example recipes make a fresh clone useful at once; an explicit ERRAND_RECIPE_PATH wins.
  const examples = join(projectRoot, 'examples', 'recipes');
  if (baseEnv.ERRAND_RECIPE_PATH === undefined && existsSync(examples)) baseEnv.ERRAND_RECIPE_PATH = examples;

  // Refused before anything starts: auth off (no keys) on an address other machines reach, or a sandbox
  // that cannot run here.
  const apiSettings = loadApiConfig(baseEnv, context.cwd, { localDefault: true });
  try {
    assertAuthOnLoopback(apiSettings.auth, host, '--host');
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  // Model commands run in the bubblewrap sandbox wherever it works, unless ERRAND_SANDBOX says otherwise.
  const sandbox = await chooseDevSandbox(baseEnv, context.cwd);

  const initial = loadConfig(baseEnv, context.cwd);
  // One stack per data directory: they would share the Temporal database and the state file.
  const existing = readDevStackState(initial.dataDir);
  if (existing.kind === 'found' && existing.state.pid !== process.pid && processIsAlive(existing.state.pid)) {
    throw new UsageError(`errand dev is already running for ${initial.dataDir} (pid ${existing.state.pid}, API ${existing.state.apiUrl}); stop it first, or use another ERRAND_DATA_DIR`);
  }
  await checkWorkerEnvironment(initial, baseEnv);
  const temporalPort = await choosePort(host, port('temporal-port', values['temporal-port']), defaultTemporalPort, notes, 'Temporal dev server');
  const temporalHttpPort = await choosePort(host, port('temporal-http-port', values['temporal-http-port']), defaultTemporalHttpPort, notes, 'Temporal HTTP API');
  const uiPort = values.headless ? undefined : await choosePort(host, port('ui-port', values['ui-port']), defaultUiPort, notes, 'Temporal Web UI');
  const apiPort = await choosePort(host, port('port', values.port ?? baseEnv.ERRAND_API_PORT), defaultApiPort, notes, 'API server');

  io.stderr(`errand dev: starting the Temporal dev server (state in ${join(initial.dataDir, 'temporal')})…\n`);
  const devServer = await startDevServer({
    dbFile: join(initial.dataDir, 'temporal', 'dev-server.sqlite'),
    logFile: join(initial.dataDir, 'temporal', 'dev-server.log'),
    ip: host,
    ...(temporalPort === undefined ? {} : { port: temporalPort }),
    ...(temporalHttpPort === undefined ? {} : { httpPort: temporalHttpPort }),
    ...(uiPort === undefined ? {} : { uiPort }),
    ...(values.headless ? { headless: true } : {}),
  });
  const stops: (() => Promise<void>)[] = [() => devServer.stop()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch((error: unknown) => io.stderr(`errand dev: while stopping: ${error instanceof Error ? error.message : String(error)}\n`));
  };
  try {
    // The stack's API starts delegations through the dev server's HTTP API (decision 0019).
    const stackEnv: NodeJS.ProcessEnv = { ...baseEnv, ERRAND_TEMPORAL_ADDRESS: devServer.address, ERRAND_TEMPORAL_NAMESPACE: 'default', ERRAND_TEMPORAL_HTTP_URL: devServer.httpUrl };
    const { config, env, demo } = withDemoModel(stackEnv, context.cwd);

    // One process, one trace export (OTEL_EXPORTER_OTLP_ENDPOINT): the API's spans and the worker's go out together.
    const tracing = await startTracing('dev', env);
    if (tracing) stops.push(() => stopTracing());
    io.stderr('errand dev: starting the worker (bundling the workflow code takes a few seconds)…\n');
    const connection = await NativeConnection.connect({ address: devServer.address });
    stops.push(() => connection.close());
    const dependencies = createWorkerDependencies(config, { env, ...(demo ? { scripted: { [demoProviderName]: createDemoModel() } } : {}) });
    io.stderr(`errand dev: ${processContainmentSummary(dependencies.commands)}\n`);
    // After the worker has stopped: the MCP servers it started (the operator's, and agents' and recipes'
    // own) end with it; their pipes would otherwise keep this process from exiting at Ctrl-C.
    stops.push(() => dependencies.toolsets.close());
    // Unversioned whatever ERRAND_WORKER_* say: a fresh dev server has no current version to route work to it.
    const worker = await createErrandWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      dependencies,
    });
    const running = worker.run();
    stops.push(async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });

    // Without API keys the stack's API still wants its own token, which a model's command does not have.
    const stackToken = createDevStackToken(initial.dataDir);
    stops.push(() => {
      removeDevStackToken(initial.dataDir, stackToken.token);
      return Promise.resolve();
    });
    const api = withDevStackToken(loadApiConfig(env, context.cwd, { localDefault: true }), stackToken.token);
    const deps = createApiDependencies({ env, cwd: context.cwd, config, api, startedBy: 'errand dev' });
    const server = await startApiServer(createApp(deps), { host, port: apiPort ?? 0 });
    stops.push(async () => {
      await server.close();
      await deps.temporal.close();
    });
    // Client commands in another terminal find this stack (and so its configuration) through this file.
    const statePath = writeDevStackState(initial.dataDir, {
      apiUrl: server.url,
      pid: process.pid,
      temporalAddress: devServer.address,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      startedAt: new Date().toISOString(),
    });
    stops.push(() => {
      removeDevStackState(initial.dataDir, process.pid);
      return Promise.resolve();
    });

    io.stdout(`${devBanner({ apiUrl: server.url, devServer, config, api, tokenPath: stackToken.path, sandbox, env, demo, notes, statePath }).join('\n')}\n`);

    const stopped = await untilStopped(running, io);
    io.stderr('errand dev: stopping…\n');
    await stopAll();
    return stopped === 'signal' ? 0 : 1;
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** `errand dev`'s options. */
function devOptions(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      'temporal-port': { type: 'string' },
      'ui-port': { type: 'string' },
      'temporal-http-port': { type: 'string' },
      host: { type: 'string' },
      headless: { type: 'boolean' },
    },
    allowPositionals: false,
    strict: true,
  }).values;
}

/** What the running stack's banner shows. */
interface DevBanner {
  apiUrl: string;
  devServer: { address: string; httpUrl: string; uiUrl?: string | undefined };
  config: ErrandConfig;
  api: ReturnType<typeof withDevStackToken>;
  tokenPath: string;
  sandbox: Awaited<ReturnType<typeof chooseDevSandbox>>;
  env: NodeJS.ProcessEnv;
  demo: boolean;
  notes: readonly string[];
  statePath: string;
}

/** Banner lines for what is on besides the defaults: trace export, the S3 blob store. */
export function devExtrasBanner(banner: Pick<DevBanner, 'env'> & { config: Pick<ErrandConfig, 'blobs'> }): string[] {
  const tracing = tracingSettings('dev', banner.env);
  const blobs = banner.config.blobs;
  return [
    ...(tracing ? [`  Traces       OTLP/HTTP to ${tracing.endpoint.url} (${tracing.endpoint.setting})`] : []),
    ...(blobs ? [`  Blob store   S3 bucket ${blobs.bucket}${blobs.prefix ? `, prefix ${blobs.prefix}` : ''}${blobs.endpoint ? ` at ${blobs.endpoint}` : ''} (ERRAND_BLOB_BUCKET): conversations and stored results`] : []),
  ];
}

/** The lines `errand dev` prints once its stack runs: where each part is, and how to try it. */
function devBanner(banner: DevBanner): string[] {
  return [
    '',
    'errand dev is running:',
    `  API          ${banner.apiUrl}   (OpenAPI: ${banner.apiUrl}/openapi.json)`,
    `  Temporal     ${banner.devServer.address}   namespace ${banner.config.temporal.namespace}, task queue "${banner.config.temporal.taskQueue}"`,
    `  HTTP gateway ${banner.devServer.httpUrl}   (Temporal's HTTP API: this stack's API starts through it; ERRAND_TEMPORAL_HTTP_URL makes errand peek fast where this stack's API is not used)`,
    `  Web UI       ${banner.devServer.uiUrl ?? '(headless)'}`,
    `  Auth         ${banner.api.auth.mode === 'keys' ? `${banner.api.auth.keys.length} API key(s)` : `this stack's token (new each start), in ${banner.tokenPath} (mode 0600); requests run as tenant "${banner.api.auth.tenant}"`}`,
    `  Sandbox      ${devSandboxBanner(banner.sandbox, banner.env).join('\n')}`,
    `  Model        ${banner.demo ? 'DEMO MODEL — no LLM provider is configured; answers are canned. Set ERRAND_PROVIDERS (and ERRAND_DEFAULT_MODEL) for real work.' : `${banner.config.defaultModel ? `${banner.config.defaultModel.provider}/${banner.config.defaultModel.model}` : '(no default)'} (${banner.config.providers.map((provider) => provider.name).join(', ')})`}`,
    `  Working dir  ${banner.config.workingDir}`,
    ...devExtrasBanner(banner),
    ...(banner.env.ERRAND_RECIPE_PATH ? [`  Recipes      ${banner.env.ERRAND_RECIPE_PATH} (ERRAND_RECIPE_PATH) and the project folders`] : []),
    ...banner.notes.map((note) => `  Note         ${note}`),
    '',
    'Try it (in another terminal, in this folder):',
    '  node bin/errand.js delegate "Explain this project" --description first-try',
    '  node bin/errand.js sources',
    `  curl -s -X POST '${banner.apiUrl}/v1/delegations?wait=20s' -H "authorization: Bearer $(cat ${banner.tokenPath})" -H 'content-type: application/json' -d '{"instructions":"Say hello"}'`,
    `The CLI finds this stack and its token through ${banner.statePath} (same data directory); from elsewhere, set ERRAND_API_URL=${banner.apiUrl} and ERRAND_API_KEY=$(cat ${banner.tokenPath}).`,
    '',
    'Ctrl-C stops everything (the Temporal state is kept for next time).',
    '',
  ];
}

/** Waits for Ctrl-C (or SIGTERM), or for the worker to stop by itself (an error, said on stderr). */
function untilStopped(running: Promise<void>, io: CliContext['io']): Promise<'signal' | 'worker'> {
  return Promise.race([
    new Promise<'signal'>((resolveSignal) => {
      process.once('SIGINT', () => resolveSignal('signal'));
      process.once('SIGTERM', () => resolveSignal('signal'));
    }),
    running.then(
      () => 'worker' as const,
      (error: unknown) => {
        io.stderr(`errand dev: the worker stopped: ${error instanceof Error ? error.message : String(error)}\n`);
        return 'worker' as const;
      },
    ),
  ]);
}

/** `errand worker [--demo]`: a worker from configuration (more of them scale out). */
export async function workerCommand(argv: string[], context: CliContext): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { demo: { type: 'boolean' } }, allowPositionals: false, strict: true });
  if (!values.demo) {
    await runWorker(loadConfig(context.env, context.cwd));
    return 0;
  }
  const { config, env } = withDemoModel(context.env, context.cwd);
  await checkWorkerEnvironment(config, env);
  const connection = await NativeConnection.connect(config.temporal.connection);
  try {
    const worker = await createErrandWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      dependencies: createWorkerDependencies(config, { env, scripted: { [demoProviderName]: createDemoModel() } }),
      ...(config.workerDeployment ? { deployment: config.workerDeployment } : {}),
    });
    context.io.stderr(`errand worker: polling "${config.temporal.taskQueue}" on ${config.temporal.address} with the demo model\n`);
    context.io.stderr(`errand worker: ${processContainmentSummary(commandOptions(config, env))}\n`);
    const stop = () => worker.shutdown();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    await worker.run();
  } finally {
    await connection.close();
  }
  return 0;
}

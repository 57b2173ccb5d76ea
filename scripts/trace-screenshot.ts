/**
 * Makes docs/images/trace.png: a real errand trace, shown in Zipkin's web UI (Lens).
 *
 * errand exports OTLP; the tests read traces from a Jaeger built from the Go module proxy, which has no web UI.
 * So this script runs the tracing test's scenario (test/observability/trace-scenario.ts) against that Jaeger —
 * a dev server, an errand worker and the API in this process with tracing on and a scripted model: an API
 * request starts a session, the session delegates a child, the child calls the model and a tool — reads the
 * trace back from Jaeger's query API, converts it to Zipkin's v2 model (test/support/jaeger-to-zipkin.ts),
 * posts it to a Zipkin server (in-memory storage) and photographs Lens's trace page in headless Chromium.
 * Everything it starts is stopped at the end.
 *
 * Usage: `npm run docs:trace-screenshot` (installs the Temporal CLI, Jaeger and Zipkin first; needs Java 17 and
 * Debian's chromium, which is installed when missing). `--output <file>` writes elsewhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { NativeConnection } from '@temporalio/worker';
import { chromium, type Page } from 'playwright-core';
import { loadApiConfig } from '../src/api/api-config';
import { createApp } from '../src/api/app';
import { hashApiKey } from '../src/api/auth-config';
import { createApiDependencies } from '../src/api/default-dependencies';
import { startApiServer } from '../src/api/server';
import { loadConfig } from '../src/settings/config';
import { sessionResponseSchema, startSessionResponseSchema } from '../src/contracts/session-api';
import { freePort } from '../src/dev/free-port';
import { startDevServer } from '../src/dev/temporal-dev-server';
import { tools } from '../src/dev/tool-catalogue';
import { projectRoot, zipkinJarPath } from '../src/dev/tool-paths';
import { ScriptedModel } from '../src/llm/scripted-model';
import { installLogging } from '../src/observability/logging';
import { startTracing, stopTracing } from '../src/observability/tracing';
import { createErrandWorker } from '../src/worker/errand-worker';
import { createWorkerDependencies } from '../src/worker/worker-dependencies';
import { workflowsFromSources } from '../src/worker/workflow-source';
import { chromiumArguments, ensureChromium, freshProfileDirectory } from '../test/support/chromium';
import { jaegerTrace, startJaeger, type JaegerTrace } from '../test/support/jaeger';
import { jaegerTraceToZipkin } from '../test/support/jaeger-to-zipkin';
import { traceScenarioAnswer, traceScenarioChildAnswer, traceScenarioPrices, traceScenarioSessionMessage } from '../test/observability/trace-scenario';

/**
 * The browser's window: wide enough for span names and the span's details side by side. It grows taller (up to
 * `maxHeight`) when the span tree would otherwise scroll, so the picture holds the whole tree.
 */
const viewport = { width: 1400, height: 900, maxHeight: 1400 };
/** The picture must stay small enough to live in the repository. */
const maxImageBytes = 400 * 1024;
/** The spans the picture must show: request → session → child → model call → tool call. */
const requiredSpans = ['POST /v1/sessions', 'RunWorkflow:sessionWorkflow', 'StartChildWorkflow:subagentWorkflow', 'RunWorkflow:subagentWorkflow', 'chat scripted-model', 'execute_tool developer__list_directory'];
/** The span whose details Lens shows beside the tree: the child's tool call. */
const selectedSpan = 'execute_tool developer__list_directory';
const tenantKey = `trace-screenshot-${randomBytes(12).toString('hex')}`;

function say(message: string): void {
  process.stdout.write(`trace-screenshot: ${message}\n`);
}

/** Polls `check` every 250 ms until it answers a value; the error names `what`. */
async function until<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})` : ''}`);
}

/** A running Zipkin server. */
interface RunningZipkin {
  url: string;
  stop(): Promise<void>;
}

/** Zipkin's installed server jar; throws, saying how to install it, when it is missing. */
function installedZipkinJar(): string {
  const jar = zipkinJarPath();
  if (!existsSync(jar)) throw new Error(`Zipkin is not installed at ${jar}; run "npx tsx scripts/install-tools.ts zipkin" (or set ERRAND_ZIPKIN_JAR to its server jar)`);
  return jar;
}

/**
 * Starts Zipkin's server jar on a free loopback port with in-memory storage; its log goes to `logFile`.
 * Throws with the log's end if it exits or does not answer `/health` within a minute.
 */
async function startZipkin(jar: string, logFile: string): Promise<RunningZipkin> {
  const port = await freePort();
  const log = createWriteStream(logFile);
  const args = [
    // A small heap: it holds one trace.
    '-Xmx256m',
    '-jar', jar,
    `--armeria.ports[0].ip=127.0.0.1`, `--armeria.ports[0].port=${port}`, '--armeria.ports[0].protocols=http',
  ];
  let child: ChildProcess;
  try {
    child = spawn('java', args, { env: { ...process.env, STORAGE_TYPE: 'mem', SELF_TRACING_ENABLED: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    log.end();
    throw error;
  }
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const spawned = new Promise<void>((resolveSpawn, reject) => {
    child.once('spawn', () => resolveSpawn());
    child.once('error', (error) => reject(error.message.includes('ENOENT') ? new Error(`Zipkin runs on Java ${tools.zipkin.javaVersion} or newer, but \`java\` is not on the PATH (Debian: apt-get install openjdk-17-jre-headless)`) : error));
  });
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, 'SIGTERM');
      const timer = setTimeout(() => child.pid !== undefined && child.exitCode === null && process.kill(child.pid, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    log.end();
  };
  const url = `http://127.0.0.1:${port}`;
  try {
    await spawned;
    await until(`Zipkin to answer on ${url}/health`, 90_000, async () => {
      if (child.exitCode !== null) throw new Error(`Zipkin exited with code ${child.exitCode}; its log: ${logFile}`);
      const response = await fetch(`${url}/health`).catch(() => undefined);
      return response?.ok ? true : undefined;
    });
  } catch (error) {
    await stop();
    const tail = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-4_000) : '';
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${tail}`);
  }
  return { url, stop };
}

/** The names of a trace's spans, for error messages. */
function spanNames(trace: JaegerTrace | undefined): string {
  return trace ? trace.spans.map((span) => span.operationName).join(', ') : '(no trace)';
}

/**
 * How many pixels of the element holding `locator` are scrolled out of view: the first ancestor that scrolls
 * (Lens's span tree scrolls inside the page, so a taller window shows more of it).
 */
async function hiddenHeight(page: Page, text: string): Promise<number> {
  // This project compiles without the DOM's types: the few members used in the page are named here.
  interface Box {
    parentElement: Box | null;
    scrollHeight: number;
    clientHeight: number;
  }
  return page.getByText(text).first().evaluate((element) => {
    const styleOf = (globalThis as unknown as { getComputedStyle(box: Box): { overflowY: string } }).getComputedStyle;
    // Bounded by the depth of the document: each step goes one element up.
    for (let current: Box | null = element as unknown as Box; current; current = current.parentElement) {
      const overflow = styleOf(current).overflowY;
      if ((overflow === 'auto' || overflow === 'scroll') && current.scrollHeight > current.clientHeight) return current.scrollHeight - current.clientHeight;
    }
    return 0;
  });
}

/** Clicks the span row named `name` in Lens's tree, so its details (tags) show beside the tree. */
async function selectSpan(page: Page, name: string): Promise<void> {
  // Zipkin stores span names in lower case; Lens shows "<service>: <name>".
  const row = page.getByText(new RegExp(`: ${name.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)).first();
  await row.waitFor({ state: 'visible', timeout: 20_000 });
  await row.click();
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { output: { type: 'string' } } });
  const output = resolve(values.output ?? join(projectRoot, 'docs', 'images', 'trace.png'));
  const scratch = mkdtempSync(join(tmpdir(), 'errand-trace-screenshot-'));
  // Warnings and errors only (JSON lines), from errand and from the Temporal SDK: the script's own lines stay readable.
  installLogging({ level: 'WARN' });
  // Stopped in reverse order of start, whatever happens.
  const stops: { what: string; stop: () => Promise<void> }[] = [];
  const started = (what: string, stop: () => Promise<void>) => stops.push({ what, stop });
  try {
    const zipkinJar = installedZipkinJar();
    const executablePath = await ensureChromium();
    say('starting Jaeger, the Temporal dev server and Zipkin ...');
    // Zipkin's JVM starts while the scenario runs; its failure, if any, is reported where it is awaited.
    const zipkinStarting = startZipkin(zipkinJar, join(scratch, 'zipkin.log'));
    const zipkinOrNothing = zipkinStarting.catch(() => undefined);
    // Registered at once, so a failure elsewhere still stops it.
    started('Zipkin', async () => (await zipkinOrNothing)?.stop());
    const jaeger = await startJaeger();
    started('Jaeger', () => jaeger.stop());
    const devServer = await startDevServer({ logFile: join(scratch, 'temporal.log'), headless: true });
    started('the Temporal dev server', () => devServer.stop());

    const workDir = join(scratch, 'work');
    mkdirSync(join(workDir, 'acme'), { recursive: true });
    writeFileSync(join(workDir, 'acme', 'README.md'), '# a project\n');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl,
      ERRAND_TEMPORAL_ADDRESS: devServer.address,
      ERRAND_TEMPORAL_NAMESPACE: 'default',
      // The API starts sessions through Temporal's HTTP API, as `errand dev` does.
      ERRAND_TEMPORAL_HTTP_URL: devServer.httpUrl,
      ERRAND_TASK_QUEUE: 'trace-screenshot',
      ERRAND_DATA_DIR: join(scratch, 'data'),
      ERRAND_WORKING_DIR: workDir,
      ERRAND_PROVIDERS: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: [{ id: 'scripted-model', prices: traceScenarioPrices }] }]),
      ERRAND_DEFAULT_MODEL: 'scripted/scripted-model',
      ERRAND_API_KEYS: JSON.stringify([{ tenant: 'acme', sha256: hashApiKey(tenantKey) }]),
    };
    // One process, one trace export, as in `errand dev`: the API's spans and the worker's leave together.
    const tracing = await startTracing('dev', env);
    if (!tracing) throw new Error('tracing did not start although OTEL_EXPORTER_OTLP_ENDPOINT is set (is OTEL_SDK_DISABLED=true in the environment?)');
    started('the trace export', () => stopTracing());

    say('starting the worker (bundling the workflow code takes a few seconds) and the API ...');
    const config = loadConfig(env, scratch);
    const connection = await NativeConnection.connect({ address: devServer.address });
    started('the worker connection', () => connection.close());
    const model = new ScriptedModel(traceScenarioAnswer, { name: 'trace screenshot model' });
    const home = join(scratch, 'home');
    mkdirSync(home, { recursive: true });
    const worker = await createErrandWorker({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.temporal.taskQueue,
      dependencies: createWorkerDependencies(config, { scripted: { scripted: model }, env, homeDirectory: home }),
      workflows: workflowsFromSources(),
      tuning: { shutdownGraceTime: '2s' },
    });
    const running = worker.run();
    started('the worker', async () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
    });
    const deps = createApiDependencies({ env, cwd: scratch, config, api: loadApiConfig(env, scratch), startedBy: 'trace screenshot' });
    const server = await startApiServer(createApp(deps), { host: '127.0.0.1', port: 0 });
    started('the API', async () => {
      await server.close();
      await deps.temporal.close();
    });
    const request = (path: string, init: RequestInit = {}) =>
      fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${tenantKey}`, 'content-type': 'application/json', ...init.headers } });

    say('running the scenario: a session that delegates a child, which calls the model and a tool ...');
    const startResponse = await request('/v1/sessions', { method: 'POST', body: JSON.stringify({ label: 'traced session', message: traceScenarioSessionMessage }) });
    if (startResponse.status !== 201) throw new Error(`POST /v1/sessions answered ${startResponse.status}: ${await startResponse.text()}`);
    const { id } = startSessionResponseSchema.parse(await startResponse.json());
    await until(`session ${id} to answer with its child's words`, 60_000, async () => {
      const response = await request(`/v1/sessions/${encodeURIComponent(id)}`);
      if (!response.ok) return undefined;
      const session = sessionResponseSchema.parse(await response.json());
      return session.transcript.entries.some((entry) => entry.role === 'assistant' && entry.text.includes(traceScenarioChildAnswer)) ? true : undefined;
    });
    // The session's own span ends with the session.
    const cancel = await request(`/v1/sessions/${encodeURIComponent(id)}/cancel`, { method: 'POST', body: JSON.stringify({ reason: 'trace recorded' }) });
    if (cancel.status !== 202) throw new Error(`POST /v1/sessions/${id}/cancel answered ${cancel.status}: ${await cancel.text()}`);
    const client = await deps.temporal.get();
    await client.workflow
      .getHandle(id)
      .result()
      .catch(() => undefined); // a cancelled session ends in a failure; only its end matters here

    say('reading the trace from Jaeger ...');
    let lastSeen: JaegerTrace | undefined;
    const trace = await until('Jaeger to hold the session\'s trace with every span', 60_000, async () => {
      await tracing.flush();
      const search = await fetch(`${jaeger.queryUrl}/api/traces?service=${encodeURIComponent(tracing.settings.serviceName)}&operation=${encodeURIComponent('POST /v1/sessions')}&limit=5&lookback=1h`);
      if (!search.ok) return undefined;
      const found = (await search.json()) as { data?: JaegerTrace[] };
      const traceId = found.data?.[0]?.traceID;
      if (traceId === undefined) return undefined;
      lastSeen = await jaegerTrace(jaeger.queryUrl, traceId);
      const present = new Set(lastSeen?.spans.map((span) => span.operationName));
      return lastSeen && requiredSpans.every((name) => present.has(name)) ? lastSeen : undefined;
    }).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}; spans seen: ${spanNames(lastSeen)}`);
    });
    const spans = jaegerTraceToZipkin(trace);
    say(`trace ${trace.traceID}: ${spans.length} spans`);

    const zipkin = await zipkinStarting;
    const posted = await fetch(`${zipkin.url}/api/v2/spans`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(spans) });
    if (posted.status !== 202) throw new Error(`Zipkin refused the spans (${posted.status}): ${await posted.text()}`);
    await until(`Zipkin to hold trace ${trace.traceID}`, 20_000, async () => {
      const response = await fetch(`${zipkin.url}/api/v2/trace/${trace.traceID}`);
      const held = response.ok ? ((await response.json()) as unknown[]) : [];
      return held.length === spans.length ? true : undefined;
    });

    say('photographing the trace in Lens ...');
    const browser = await chromium.launchPersistentContext(freshProfileDirectory(), { executablePath, headless: true, args: chromiumArguments(), viewport: { width: viewport.width, height: viewport.height } });
    started('Chromium', () => browser.close());
    const page = await browser.newPage();
    await page.goto(`${zipkin.url}/zipkin/traces/${trace.traceID}`, { waitUntil: 'networkidle' });
    await selectSpan(page, selectedSpan);
    const hidden = await hiddenHeight(page, `: ${selectedSpan.toLowerCase()}`);
    if (hidden > 0) await page.setViewportSize({ width: viewport.width, height: Math.min(viewport.maxHeight, viewport.height + hidden) });
    // Let the details panel and the bars settle before the picture.
    await page.waitForTimeout(500);
    mkdirSync(dirname(output), { recursive: true });
    await page.screenshot({ path: output });
    const bytes = statSync(output).size;
    if (bytes > maxImageBytes) throw new Error(`${output} is ${Math.round(bytes / 1024)} KB, over the ${maxImageBytes / 1024} KB a picture in the repository may take`);
    say(`wrote ${output} (${Math.round(bytes / 1024)} KB)`);
  } finally {
    for (const { what, stop } of stops.reverse()) {
      await stop().catch((error: unknown) => process.stderr.write(`trace-screenshot: while stopping ${what}: ${error instanceof Error ? error.message : String(error)}\n`));
    }
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`trace-screenshot: ${error instanceof Error ? error.message : String(error)}\n`);
  // Everything started is stopped by now; exit even if the Temporal SDK's runtime (installed by installLogging,
  // dropped only when its last connection closes) never saw a connection.
  process.exit(1);
});

import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { hashApiKey } from '../../src/api/auth-config';
import { loadConfig } from '../../src/settings/config';
import { schemathesisPath } from '../../src/dev/tool-paths';
import { ScriptedModel } from '../../src/llm/scripted-model';
import { createWorkerDependencies } from '../../src/worker/worker-dependencies';
import { scriptedAnswer } from './api-harness';
import { startTestWorker, temporalAddress, temporalHttpUrl, uniqueTaskQueue, type RunningWorker } from '../support/temporal';

/**
 * Schemathesis against `errand api` (a real process, with an API key, starts through Temporal's HTTP API)
 * and a worker with the scripted model, on the run's dev server: every check, every phase (stateful
 * included: start, then read, message and cancel what was started), a fixed seed. The OpenAPI document
 * must describe what the server does, and no request may get a 500.
 */

const projectRoot = resolve(__dirname, '..', '..');
const apiKey = 'schemathesis-key-0123456789abcdef';
const tenant = `schemathesis-${randomBytes(4).toString('hex')}`;
/** Test cases per operation and phase: sized to a minute or two on a small machine. */
const maxExamples = 25;
const seed = 20261202;

let root: string;
let worker: RunningWorker | undefined;
let api: ChildProcess | undefined;
let tester: ChildProcess | undefined;
let apiUrl = '';
let apiOutput = '';

/** Starts `errand api` and waits for the address it listens on. */
async function startApi(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(projectRoot, 'bin', 'errand.js'), 'api'], { env, cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`errand api did not start in 60 s: ${apiOutput}`)), 60_000);
    const read = (chunk: Buffer) => {
      apiOutput += chunk.toString('utf8');
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(apiOutput)?.[1];
      if (found) {
        clearTimeout(timer);
        resolveUrl(found);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`errand api exited with ${String(code)}: ${apiOutput}`));
    });
  });
  return { child, url };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'errand-schemathesis-'));
  const workDir = join(root, 'work');
  const recipes = join(workDir, '.goose', 'recipes');
  mkdirSync(recipes, { recursive: true });
  writeFileSync(join(recipes, 'summarize.yaml'), ['version: 1.0.0', 'title: Summarize', 'description: Summarize the project', 'prompt: Summarize this project'].join('\n'));
  const taskQueue = uniqueTaskQueue('schemathesis');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: root,
    TMPDIR: process.env.TMPDIR,
    ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
    ERRAND_TEMPORAL_HTTP_URL: temporalHttpUrl(),
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: join(root, 'data'),
    ERRAND_WORKING_DIR: workDir,
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: ['scripted-model'] }]),
    // A tenant of its own: the run's dev server is shared by every test file, and the stateful phase lists
    // the tenant's delegations and cancels them — another file's delegations of a shared tenant included.
    ERRAND_API_KEYS: JSON.stringify([{ tenant, sha256: hashApiKey(apiKey) }]),
    ERRAND_API_HOST: '127.0.0.1',
    ERRAND_API_PORT: '0',
    ERRAND_API_MAX_BODY_BYTES: '65536',
    ERRAND_API_MAX_WAIT_MS: '2000',
    ERRAND_LOG_LEVEL: 'WARN',
  };
  const config = loadConfig(env, root);
  const model = new ScriptedModel((request) => scriptedAnswer(request), { name: 'schemathesis model' });
  worker = await startTestWorker(taskQueue, createWorkerDependencies(config, { scripted: { scripted: model }, env, homeDirectory: root }));
  const started = await startApi(env);
  api = started.child;
  apiUrl = started.url;
}, 120_000);

afterAll(async () => {
  // A run cut off by the test's time limit leaves schemathesis running: stop it (our own child, by its handle).
  if (tester && tester.exitCode === null && tester.signalCode === null) tester.kill('SIGKILL');
  if (api && api.exitCode === null && api.signalCode === null) {
    const exited = new Promise<void>((resolveExit) => api?.once('exit', () => resolveExit()));
    api.kill('SIGTERM');
    await exited;
  }
  await worker?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

/** Runs schemathesis to its end; answers its exit code and everything it printed. */
function runSchemathesis(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun, reject) => {
    // Its own working folder: schemathesis writes its example database and reports where it runs.
    const child = (tester = spawn(schemathesisPath(), args, { cwd: root, env: { PATH: process.env.PATH, HOME: root, NO_COLOR: '1', COLUMNS: '160' }, stdio: ['ignore', 'pipe', 'pipe'] }));
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, output }));
  });
}

/**
 * Two statuses schemathesis does not expect by default, both documented on the routes that answer them:
 * a schema-valid request may be refused with 422 when it names what does not exist here or asks for more
 * than the operator allows (an unknown source, maxDepth over ERRAND_MAX_DEPTH: limits of this deployment,
 * not of the schema), and a schema-violating one with 413 when it is over the body limit before it is read.
 * And one operation whose valid input cannot be written as a schema: a `pageToken` of `GET /v1/delegations`
 * is opaque, only one the server handed out is valid, and any other is the caller's 400 (test/api/bad-input.test.ts).
 */
const positiveStatuses = ['2xx', '3xx', '401', '403', '404', '409', '422', '429', '5xx'];
const schemathesisConfig = [
  '[checks.positive_data_acceptance]',
  `expected-statuses = ${JSON.stringify(positiveStatuses)}`,
  '[checks.negative_data_rejection]',
  'expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]',
  '[[operations]]',
  'include-operation-id = "listDelegations"',
  `checks.positive_data_acceptance.expected-statuses = ${JSON.stringify([...positiveStatuses, '400'])}`,
  // MCP's Streamable HTTP: a message other than initialize, and a DELETE, need the Mcp-Session-Id header,
  // which OpenAPI cannot make depend on the JSON-RPC method; without it the answer is the documented 400.
  '[[operations]]',
  'include-operation-id = "mcpMessage"',
  `checks.positive_data_acceptance.expected-statuses = ${JSON.stringify([...positiveStatuses, '400'])}`,
  // The notice stream needs a running session's Mcp-Session-Id and takes text/event-stream only (406 otherwise).
  '[[operations]]',
  'include-operation-id = "mcpNotificationStream"',
  `checks.positive_data_acceptance.expected-statuses = ${JSON.stringify([...positiveStatuses, '400', '406'])}`,
  '[[operations]]',
  'include-operation-id = "mcpEndSession"',
  `checks.positive_data_acceptance.expected-statuses = ${JSON.stringify([...positiveStatuses, '400'])}`,
  '',
].join('\n');

it('finds no failure with every check and every phase, stateful included', async () => {
  const configFile = join(root, 'schemathesis.toml');
  writeFileSync(configFile, schemathesisConfig);
  const { code, output } = await runSchemathesis([
    '--config-file',
    configFile,
    'run',
    `${apiUrl}/openapi.json`,
    '--header',
    `Authorization: Bearer ${apiKey}`,
    '--checks',
    'all',
    '--phases',
    'examples,coverage,fuzzing,stateful',
    '--seed',
    String(seed),
    '--max-examples',
    String(maxExamples),
    '--workers',
    '1',
    '--generation-database',
    'none',
    '--request-timeout',
    '60',
    '--no-color',
  ]);
  // On failure the message is schemathesis's own report (and what the API logged), so it can be read here.
  expect({ code, output: code === 0 ? 'passed' : `${output}\n--- errand api ---\n${apiOutput.slice(-4000)}` }).toEqual({ code: 0, output: 'passed' });
  expect(output).toMatch(/Stateful/i);
}, 600_000);

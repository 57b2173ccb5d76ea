import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { z } from 'zod';
import type { Hono } from 'hono';
import { loadApiConfig, type ApiConfig } from '../../src/api/api-config';
import type { ApiEnv } from '../../src/api/api-env';
import type { ApiDependencies } from '../../src/api/api-dependencies';
import { createApp } from '../../src/api/app';
import { hashApiKey } from '../../src/api/auth-config';
import { createApiDependencies } from '../../src/api/default-dependencies';
import { createApiSourceLookup } from '../../src/api/api-source-lookup';
import { startApiServer, type RunningApiServer } from '../../src/api/server';
import { fixedTemporalClient } from '../../src/api/temporal-client-provider';
import { loadConfig, type ErrandConfig } from '../../src/settings/config';
import type { ModelRequest } from '../../src/contracts/model';
import { ScriptedModel } from '../../src/llm/scripted-model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { createWorkerDependencies } from '../../src/worker/worker-dependencies';
import { startTestWorker, temporalAddress, testClient, uniqueTaskQueue, type RunningWorker } from '../support/temporal';

/**
 * The whole API stack for a test file: the run's dev server, an in-process worker with a scripted model on
 * a task queue of its own, and the Node API server on a free port with two tenants' keys.
 */

/** API keys of the two test tenants. */
export const keys = { acme: 'test-key-acme-0123456789', globex: 'test-key-globex-9876543210' } as const;

/**
 * How the scripted model answers, chosen by words in the task (the first user message), so each test
 * controls its subagent with its instructions alone:
 * - `slow`: waits 60 s (until cancelled);
 * - `take a moment`: answers after 2.5 s;
 * - `use a tool`: lists the working directory, then answers;
 * - `write a file`: writes from-api.txt (a tool under `ask` when the policy says so), then answers;
 * - with a `final_output` tool offered (an output schema): calls it with `{"answer": "forty-two"}`;
 * - anything else: answers `done: <task>` at once.
 */
export function scriptedAnswer(request: ModelRequest): ScriptStep {
  const task = request.messages.find((message) => message.role === 'user')?.content ?? '';
  const toolResults = request.messages.filter((message) => message.role === 'tool').length;
  if (request.tools.some((tool) => tool.name === 'final_output') && toolResults === 0) {
    return { toolCalls: [{ name: 'final_output', arguments: { answer: 'forty-two' } }] };
  }
  if (task.includes('slow')) return { text: 'thinking slowly', delayMs: 60_000 };
  if (task.includes('take a moment')) return { text: `done: ${task}`, delayMs: 2_500 };
  if (task.includes('write a file') && toolResults === 0) {
    return { text: 'writing', toolCalls: [{ name: 'developer__write_file', arguments: { path: 'from-api.txt', content: 'written via the API' } }] };
  }
  if (task.includes('use a tool') && toolResults === 0) {
    const tool = request.tools.find((candidate) => candidate.name.endsWith('list_directory'));
    if (tool) return { text: 'looking around', toolCalls: [{ name: tool.name, arguments: { path: '.' } }] };
  }
  return { text: `done: ${task}` };
}

/** A running API stack. */
export interface ApiStack {
  url: string;
  app: Hono<ApiEnv>;
  client: Client;
  config: ErrandConfig;
  api: ApiConfig;
  model: ScriptedModel;
  workDir: string;
  taskQueue: string;
  /** fetch against the server with tenant acme's key (or `key: null` for none). */
  request(path: string, init?: RequestInit & { key?: string | null }): Promise<Response>;
  stop(): Promise<void>;
}

/** Options of {@link startApiStack}. */
export interface ApiStackOptions {
  /** Start no worker (for tests of workflows nobody runs). */
  withoutWorker?: boolean;
  extraEnv?: NodeJS.ProcessEnv;
  /** How the scripted model answers instead of {@link scriptedAnswer}. */
  answer?: (request: ModelRequest) => ScriptStep;
  /** Changes the API's dependencies before the app is built (e.g. a start path with a short deadline). */
  adjust?: (deps: ApiDependencies) => ApiDependencies;
}

/** Writes the project sources the tests use into a working directory (tenant acme's: the API resolves sources in the caller's folder). */
function writeSources(workDir: string): void {
  const recipes = join(workDir, '.goose', 'recipes');
  mkdirSync(recipes, { recursive: true });
  writeFileSync(
    join(recipes, 'deploy.yaml'),
    ['version: 1.0.0', 'title: Deploy', 'description: Deploy a service', 'prompt: Deploy {{ service }}', 'parameters:', '  - key: service', '    input_type: string', '    requirement: required', '    description: Service name'].join('\n'),
  );
  writeFileSync(join(recipes, 'summarize.yaml'), ['version: 1.0.0', 'title: Summarize', 'description: Summarize the project', 'prompt: Summarize this project'].join('\n'));
  writeFileSync(join(workDir, 'README.md'), '# test project\n');
}

/** Starts the stack. */
export async function startApiStack(options: ApiStackOptions = {}): Promise<ApiStack> {
  const taskQueue = uniqueTaskQueue('api');
  const root = mkdtempSync(join(tmpdir(), 'errand-api-test-'));
  const workDir = join(root, 'work');
  const home = join(root, 'home');
  mkdirSync(workDir, { recursive: true });
  mkdirSync(home, { recursive: true });
  writeSources(join(workDir, 'acme'));
  const env: NodeJS.ProcessEnv = {
    ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: join(root, 'data'),
    ERRAND_WORKING_DIR: workDir,
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: ['scripted-model', 'other-model'] }]),
    ERRAND_MODEL_HEARTBEAT_TIMEOUT_MS: '3000',
    ERRAND_API_KEYS: JSON.stringify([
      { tenant: 'acme', sha256: hashApiKey(keys.acme) },
      { tenant: 'globex', sha256: hashApiKey(keys.globex) },
    ]),
    ERRAND_API_MAX_BODY_BYTES: '4096',
    ERRAND_API_MAX_WAIT_MS: '20000',
    ...options.extraEnv,
  };
  const config = loadConfig(env, root);
  const api = loadApiConfig(env, root);
  const { client, connection }: { client: Client; connection: Connection } = await testClient();
  const model = new ScriptedModel((request) => (options.answer ?? scriptedAnswer)(request), { name: 'api test model' });
  let worker: RunningWorker | undefined;
  if (!options.withoutWorker) worker = await startTestWorker(taskQueue, createWorkerDependencies(config, { scripted: { scripted: model }, env, homeDirectory: home }));
  const deps = createApiDependencies({ env, cwd: root, config, api, temporal: fixedTemporalClient(client), sources: createApiSourceLookup(config, home) });
  const app = createApp(options.adjust ? options.adjust(deps) : deps);
  const server: RunningApiServer = await startApiServer(app, { host: '127.0.0.1', port: 0 });
  return {
    url: server.url,
    app,
    client,
    config,
    api,
    model,
    workDir,
    taskQueue,
    request(path, init = {}) {
      const { key = keys.acme, headers, ...rest } = init;
      const merged = new Headers(headers);
      if (key !== null) merged.set('authorization', `Bearer ${key}`);
      return fetch(`${server.url}${path}`, { ...rest, headers: merged });
    },
    async stop() {
      await server.close();
      await worker?.stop();
      await connection.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A JSON POST init. */
export function postJson(body: unknown, init: RequestInit & { key?: string | null } = {}): RequestInit & { key?: string | null } {
  const headers = new Headers(init.headers);
  headers.set('content-type', 'application/json');
  return { ...init, method: 'POST', headers, body: JSON.stringify(body) };
}

/** Reads a JSON body as an untyped record (tests assert on fields). */
export async function json(response: Response): Promise<Record<string, unknown>> {
  const value: unknown = await response.json();
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`expected a JSON object, got ${JSON.stringify(value)}`);
  return Object.fromEntries(Object.entries(value));
}

/** Polls until `check` returns a value (visibility is eventually consistent). */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
  }
}

/** The `items` of a list answer, checked. */
export function listItems(body: Record<string, unknown>): { id: string; state: string; source: string | null }[] {
  const parsed = listItemsSchema.safeParse(body.items);
  if (!parsed.success) throw new Error(`not a list answer: ${JSON.stringify(body)}`);
  return parsed.data;
}
const listItemsSchema = z.array(z.looseObject({ id: z.string(), state: z.string(), source: z.string().nullable() }));

/**
 * The environment an `errand mcp` child of the stack runs with (in process, no API URL): only the process
 * basics and the stack's Temporal, task queue, data and working folders, and the scripted provider's models.
 */
export function errandMcpEnv(stack: ApiStack): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    TMPDIR: process.env.TMPDIR ?? '/tmp',
    ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
    ERRAND_TASK_QUEUE: stack.taskQueue,
    ERRAND_DATA_DIR: stack.config.dataDir,
    ERRAND_WORKING_DIR: stack.workDir,
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: ['scripted-model', 'other-model'] }]),
  };
}

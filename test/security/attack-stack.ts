import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { test } from 'vitest';
import { loadApiConfig } from '../../src/api/api-config';
import { createApp } from '../../src/api/app';
import { hashApiKey } from '../../src/api/auth-config';
import { createApiDependencies } from '../../src/api/default-dependencies';
import { createApiSourceLookup } from '../../src/api/api-source-lookup';
import { startApiServer, type RunningApiServer } from '../../src/api/server';
import { fixedTemporalClient } from '../../src/api/temporal-client-provider';
import { loadConfig, type ErrandConfig } from '../../src/settings/config';
import type { JsonObject } from '../../src/contracts/json';
import type { ChatMessage, ModelRequest } from '../../src/contracts/model';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { checkWorkerEnvironment, createWorkerDependencies } from '../../src/worker/worker-dependencies';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { startTestWorker, temporalAddress, testClient, uniqueTaskQueue, type RunningWorker } from '../support/temporal';

/**
 * The stack the attack suite runs against: the run's Temporal dev server, an in-process worker whose only
 * stand-in is the model (a scripted model that behaves as if a prompt injection took it over), and the
 * HTTP API with two tenants' keys. The worker's environment holds fake credentials with unique values,
 * so any leak of them anywhere can be searched for.
 */

/** API keys of the two tenants. */
export const tenantKeys = { acme: `attack-key-acme-${randomBytes(6).toString('hex')}`, globex: `attack-key-globex-${randomBytes(6).toString('hex')}` } as const;
/** A tenant of the stack. */
export type Tenant = keyof typeof tenantKeys;

/** An attack: one test, named so the suite can be counted (the README states how many there are). */
export function attack(name: string, body: () => Promise<void>, timeoutMs?: number): void {
  test(`attack: ${name}`, body, timeoutMs);
}

/** Options of {@link startAttackStack}. */
export interface AttackStackOptions {
  /** Run model commands in the bubblewrap sandbox. */
  sandbox?: boolean;
  /** With the sandbox: allow the network. */
  network?: boolean;
  /** Extra configuration environment. */
  extraEnv?: Record<string, string>;
  /** Extra configuration environment that names the stack's folders (made before the configuration is read). */
  extraEnvFor?: (folders: { workRoot: string; dataDir: string }) => Record<string, string>;
}

/** A tool call the attacking model makes. */
export interface AttackCall {
  name: string;
  arguments: JsonObject;
}

/** What one attack delegation did. */
export interface AttackOutcome {
  id: string;
  status: string;
  output: string;
  /** The tool results the model got back, in call order. */
  results: Extract<ChatMessage, { role: 'tool' }>[];
  /** Every request the model received. */
  requests: ModelRequest[];
}

/** The running stack. */
export interface AttackStack {
  url: string;
  client: Client;
  config: ErrandConfig;
  scripts: ConversationScripts;
  taskQueue: string;
  /** The temp folder holding everything (its path must appear in no answer). */
  root: string;
  workRoot: string;
  dataDir: string;
  /** Fake credentials in the worker's environment: name → unique value. */
  secrets: Record<string, string>;
  tenantDir(tenant: Tenant): string;
  request(path: string, init?: RequestInit & { tenant?: Tenant | null }): Promise<Response>;
  /**
   * Starts a delegation for a tenant through the API whose model makes `calls`, one per turn, then
   * answers; returns what happened. `body` adds request fields (working_dir, ...).
   */
  runAttack(tenant: Tenant, name: string, calls: AttackCall[], body?: Record<string, unknown>): Promise<AttackOutcome>;
  /** Every file under the data folder, read as text (to search stored conversations for a leak). */
  storedText(): string;
  stop(): Promise<void>;
}

/** Starts the stack. */
export async function startAttackStack(options: AttackStackOptions = {}): Promise<AttackStack> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'errand-attack-')));
  const workRoot = join(root, 'work');
  const dataDir = join(root, 'state');
  const home = join(root, 'home');
  for (const folder of [workRoot, dataDir, home]) mkdirSync(folder, { recursive: true });
  const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;
  const secrets: Record<string, string> = {
    TEMPORAL_API_KEY: secret('fake-temporal-key'),
    OPENAI_API_KEY: secret('fake-openai-key'),
    AWS_SECRET_ACCESS_KEY: secret('fake-aws-secret'),
    AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: `/v2/credentials/${secret('fake-ecs')}`,
    GITHUB_TOKEN: secret('fake-github-token'),
  };
  // In the test process too: a command that inherited the worker's environment would print them.
  const previous = Object.fromEntries(Object.keys(secrets).map((name) => [name, process.env[name]]));
  Object.assign(process.env, secrets);
  const taskQueue = uniqueTaskQueue('attack');
  const configEnv: Record<string, string> = {
    ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: dataDir,
    ERRAND_WORKING_DIR: workRoot,
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: ['scripted-model'] }]),
    ERRAND_MODEL_HEARTBEAT_TIMEOUT_MS: '3000',
    ERRAND_API_KEYS: JSON.stringify([
      { tenant: 'acme', sha256: hashApiKey(tenantKeys.acme) },
      { tenant: 'globex', sha256: hashApiKey(tenantKeys.globex) },
    ]),
    ERRAND_API_MAX_WAIT_MS: '25000',
    ERRAND_COMMAND_ENV: 'LC_ALL',
    LC_ALL: 'C.UTF-8',
    ...(options.sandbox ? { ERRAND_SANDBOX: 'bwrap', ERRAND_SANDBOX_NETWORK: String(options.network ?? false) } : {}),
    ...options.extraEnv,
    ...options.extraEnvFor?.({ workRoot, dataDir }),
  };
  const env: NodeJS.ProcessEnv = { ...process.env, ...configEnv };
  const config = loadConfig(env, root);
  const api = loadApiConfig(env, root);
  await checkWorkerEnvironment(config, env);
  const { client, connection }: { client: Client; connection: Connection } = await testClient();
  const scripts = new ConversationScripts();
  const worker: RunningWorker = await startTestWorker(taskQueue, createWorkerDependencies(config, { scripted: { scripted: scripts.model }, env, homeDirectory: home }));
  const deps = createApiDependencies({ env, cwd: root, config, api, temporal: fixedTemporalClient(client), sources: createApiSourceLookup(config, home) });
  const server: RunningApiServer = await startApiServer(createApp(deps, { requestLog: false }), { host: '127.0.0.1', port: 0 });

  const request: AttackStack['request'] = (path, init = {}) => {
    const { tenant = 'acme', headers, ...rest } = init;
    const merged = new Headers(headers);
    if (tenant !== null) merged.set('authorization', `Bearer ${tenantKeys[tenant]}`);
    return fetch(`${server.url}${path}`, { ...rest, headers: merged });
  };

  return {
    url: server.url,
    client,
    config,
    scripts,
    taskQueue,
    root,
    workRoot,
    dataDir,
    secrets,
    tenantDir: (tenant) => join(workRoot, tenant),
    request,
    async runAttack(tenant, name, calls, body = {}) {
      const marker = scripts.add(name, (_request, call): ScriptStep => {
        const next = calls[call];
        return next ? { text: `step ${call + 1}`, toolCalls: [{ name: next.name, arguments: next.arguments }] } : { text: `attack ${name} finished` };
      });
      const started = await request('/v1/delegations', {
        tenant,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ instructions: `Summarise the notes. ${marker}`, max_turns: Math.min(calls.length + 2, config.subagent.maxTurns), ...body }),
      });
      const startBody = (await started.json()) as { id?: string };
      if (started.status !== 201 || !startBody.id) throw new Error(`the attack delegation did not start: ${started.status} ${JSON.stringify(startBody)}`);
      const id = startBody.id;
      const answer = await request(`/v1/delegations/${encodeURIComponent(id)}/result?wait=25s`, { tenant });
      const result = ((await answer.json()) as { result?: { status: string; output: string } }).result;
      if (!result) throw new Error(`no result for ${id} (HTTP ${answer.status})`);
      const requests = scripts.of(name);
      return { id, status: result.status, output: result.output, results: toolResults(requests.at(-1)), requests };
    },
    storedText() {
      const texts: string[] = [];
      const walk = (folder: string): void => {
        for (const entry of readdirSync(folder)) {
          const full = join(folder, entry);
          if (statSync(full).isDirectory()) walk(full);
          else texts.push(readFileSync(full, 'utf8'));
        }
      };
      walk(dataDir);
      return texts.join('\n');
    },
    async stop() {
      await server.close();
      await worker.stop();
      await connection.close();
      for (const [name, value] of Object.entries(previous)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

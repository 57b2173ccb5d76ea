import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client as TemporalClient, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/api/auth-config';
import { mcpPythonPath } from '../../src/dev/tool-paths';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { docBlock, fillPlaceholders } from '../support/doc-blocks';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { temporalAddress, temporalNamespace, testClient, uniqueTaskQueue, cancelRunningSessions } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

/**
 * The official MCP Python SDK's client (PyPI `mcp` 2.3.0, installed by scripts/install-tools.ts as `mcp-python`)
 * against `errand api`'s `/v1/mcp` over real HTTP, at both revisions it speaks: `mode="legacy"` (the
 * initialize handshake, 2025-11-25) and `mode="auto"` (server/discover, 2026-07-28, with the Tasks extension
 * declared through the SDK's extension hook). The client is test/fixtures/mcp/python-client.py; which revision
 * each request spoke is read from the API's own request log.
 */

const fixture = join(__dirname, '..', 'fixtures', 'mcp', 'python-client.py');
const errandBin = join(__dirname, '..', '..', 'bin', 'errand.js');
const keys = { legacy: 'test-key-python-legacy-0123456789', auto: 'test-key-python-modern-0123456789' };
const tenants = { legacy: 'python-legacy', auto: 'python-modern' };

let temporal: TemporalClient;
let connection: Connection;
let server: ScriptedOpenAIServer;
let worker: WorkerProcess;
let api: ApiProcess;
let taskQueue: string;
let root: string;

beforeAll(async () => {
  ({ client: temporal, connection } = await testClient());
  server = await startScriptedOpenAIServer();
  server.setResponder((request) => {
    const body = JSON.stringify(request.body);
    return { text: body.includes('python background') ? 'PY-BACKGROUND: counted three files.' : 'PY-FOREGROUND: the README is one line.' };
  });
  root = mkdtempSync(join(tmpdir(), 'errand-mcp-python-'));
  const workDir = join(root, 'work');
  for (const tenant of Object.values(tenants)) mkdirSync(join(workDir, tenant), { recursive: true });
  writeFileSync(join(workDir, 'README.md'), '# python client test\n');
  taskQueue = uniqueTaskQueue('mcp-python');
  const settings = {
    ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
    ERRAND_TEMPORAL_NAMESPACE: temporalNamespace(),
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: join(root, 'data'),
    ERRAND_WORKING_DIR: workDir,
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]),
    // Tenants of this file alone: the MCP session cap counts a tenant's sessions across the shared Temporal server.
    ERRAND_API_KEYS: JSON.stringify([{ tenant: tenants.legacy, sha256: hashApiKey(keys.legacy) }, { tenant: tenants.auto, sha256: hashApiKey(keys.auto) }]),
  };
  worker = startWorkerProcess('mcp-python', settings);
  await worker.ready;
  api = await startApiProcess(settings, workDir);
}, 120_000);

afterAll(async () => {
  if (temporal) {
    await cancelRunningSessions(temporal, taskQueue);
  }
  await api?.kill();
  await worker?.stop();
  await server?.close();
  await connection?.close();
});

/** What the Python client printed (one JSON object), or a failure with everything it wrote. */
interface PythonReport {
  protocolVersion: string;
  instructions: string | null;
  tools: string[];
  sessionArgument: boolean;
  foreground: { text: string; isError: boolean; session: string | null };
  background: { text: string; isError: boolean; session: string | null };
  loaded?: { task: string; text: string; isError: boolean };
  tasks: { taskId: string; created: string; statusMessage: string | null; polled: string[] }[];
}

/** Runs a script with the SDK's Python (the tool's launcher) and `args`; resolves with what it printed on stdout. */
function runPython(script: string, args: string[], mode: 'legacy' | 'auto', env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(mcpPythonPath(), [script, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ERRAND_API_KEY: keys[mode], ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) reject(new Error(`the Python client (${mode}) exited with ${String(code)}:\n${stderr}\n${stdout}\nAPI:\n${api.output().slice(-4000)}`));
      else resolveRun(stdout);
    });
  });
}

/** Runs the client fixture in `mode`; resolves with its report. */
async function runPythonClient(mode: 'legacy' | 'auto', over: 'http' | 'stdio' = 'http'): Promise<PythonReport> {
  // Over stdio the client spawns the shipped `errand mcp`, which finds the API by ERRAND_API_URL and bridges to it.
  const stdio = { ERRAND_MCP_COMMAND: JSON.stringify([process.execPath, errandBin, 'mcp']), ERRAND_API_URL: api.url };
  const stdout = over === 'http' ? await runPython(fixture, [`${api.url}/v1/mcp`, mode], mode) : await runPython(fixture, ['stdio', mode], mode, stdio);
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as PythonReport;
}

/** The MCP revisions the API's request log recorded for one tenant's requests of /v1/mcp. */
function loggedRevisions(tenant: string): { versions: Set<string>; requests: number } {
  const entries = api
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { message?: string; path?: string; tenant?: string; mcpProtocolVersion?: string })
    .filter((entry) => entry.message === 'request' && entry.path === '/v1/mcp' && entry.tenant === tenant);
  return { versions: new Set(entries.flatMap((entry) => (entry.mcpProtocolVersion ? [entry.mcpProtocolVersion] : []))), requests: entries.length };
}

const toolNames = ['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models'];

describe('the MCP Python SDK 2.3.0 client over HTTP', () => {
  it('at 2025-11-25 (mode="legacy"): lists the tools, delegates, and reads a background task with load', async () => {
    const report = await runPythonClient('legacy');
    expect(report.protocolVersion).toBe('2025-11-25');
    expect(report.tools).toEqual(toolNames);
    expect(report.sessionArgument).toBe(false);
    expect(report.instructions).toMatch(/errand-[0-9a-f]{16}/);
    expect(report.foreground).toMatchObject({ isError: false, text: expect.stringContaining('PY-FOREGROUND: the README is one line.') as unknown });
    // The foreground delegation was the session's task-1.
    expect(report.background.text).toContain('Started task-2 in the background');
    expect(report.loaded).toMatchObject({ task: 'task-2', isError: false, text: expect.stringContaining('PY-BACKGROUND: counted three files.') as unknown });
    expect(report.tasks).toEqual([]);
    const logged = loggedRevisions(tenants.legacy);
    expect(logged.requests).toBeGreaterThanOrEqual(5);
    expect([...logged.versions]).toEqual(['2025-11-25']);
    expect(server.rejectedRequests).toHaveLength(0);
  }, 180_000);

  it('at 2026-07-28 (mode="auto"): the session handle, and a background delegate answered as a task that tasks/get follows to its result', async () => {
    const report = await runPythonClient('auto');
    expect(report.protocolVersion).toBe('2026-07-28');
    expect(report.tools).toEqual(toolNames);
    expect(report.sessionArgument).toBe(true);
    expect(report.foreground.isError).toBe(false);
    expect(report.foreground.text).toContain('PY-FOREGROUND: the README is one line.');
    expect(report.foreground.session).toMatch(/^errand-[0-9a-f]{16}$/);
    const session = report.foreground.session ?? '';
    // The task's result is the tool's result: the SDK's call_tool returned what tasks/get gave at the end.
    expect(report.background.isError, JSON.stringify(report)).toBe(false);
    expect(report.background.text).toContain('PY-BACKGROUND: counted three files.');
    expect(report.tasks).toHaveLength(1);
    const [task] = report.tasks;
    expect(task?.taskId).toBe(`${session}~task-2`);
    expect(task?.statusMessage).toContain('Started task-2 in the background');
    expect(task?.polled.at(-1)).toBe('completed');
    // The task is the delegation: a workflow of the session's tenant that completed.
    const described = await temporal.workflow.getHandle(task?.taskId ?? '').describe();
    expect(described.status.name).toBe('COMPLETED');
    expect(described.searchAttributes.ErrandTenant).toEqual([tenants.auto]);
    const logged = loggedRevisions(tenants.auto);
    expect(logged.requests).toBeGreaterThanOrEqual(5);
    expect([...logged.versions]).toEqual(['2026-07-28']);
    expect(server.rejectedRequests).toHaveLength(0);
  }, 180_000);

  it('runs the docs\' script as written (mode="auto"), and with mode="legacy"', async () => {
    for (const [mode, revision] of [['auto', '2026-07-28'], ['legacy', '2025-11-25']] as const) {
      const script = join(root, `docs-client-${mode}.py`);
      writeFileSync(script, fillPlaceholders(docBlock('mcp-python-http'), [['http://localhost:8787', api.url], ['mode="auto"', `mode="${mode}"`]]));
      const printed = await runPython(script, [], mode);
      expect(printed.trim()).toBe(`${revision} ['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models']`);
    }
  }, 120_000);
});

describe('the MCP Python SDK 2.3.0 client over stdio (errand mcp, bridged to the API)', () => {
  it('at both revisions: the tools, a foreground delegate, and a background one read with load (2025-11-25) or followed as a task (2026-07-28)', async () => {
    const legacy = await runPythonClient('legacy', 'stdio');
    expect(legacy.protocolVersion).toBe('2025-11-25');
    expect(legacy.tools).toEqual(toolNames);
    expect(legacy.sessionArgument).toBe(false);
    expect(legacy.foreground).toMatchObject({ isError: false, text: expect.stringContaining('PY-FOREGROUND: the README is one line.') as unknown });
    expect(legacy.loaded).toMatchObject({ task: 'task-2', isError: false, text: expect.stringContaining('PY-BACKGROUND: counted three files.') as unknown });
    const modern = await runPythonClient('auto', 'stdio');
    expect(modern.protocolVersion).toBe('2026-07-28');
    expect(modern.tools).toEqual(toolNames);
    expect(modern.sessionArgument).toBe(true);
    expect(modern.foreground.session).toMatch(/^errand-[0-9a-f]{16}$/);
    expect(modern.background.isError, JSON.stringify(modern)).toBe(false);
    expect(modern.background.text).toContain('PY-BACKGROUND: counted three files.');
    expect(modern.tasks).toHaveLength(1);
    expect(modern.tasks[0]?.taskId).toBe(`${modern.foreground.session ?? ''}~task-2`);
    expect(modern.tasks[0]?.polled.at(-1)).toBe('completed');
    // The bridge forwarded each revision's requests to /v1/mcp as they came: the API's log saw both.
    expect([...loggedRevisions(tenants.legacy).versions]).toEqual(['2025-11-25']);
    expect([...loggedRevisions(tenants.auto).versions]).toEqual(['2026-07-28']);
    expect(server.rejectedRequests).toHaveLength(0);
  }, 240_000);
});

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Client as TemporalClient, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/api/auth-config';
import type { JsonObject, JsonValue } from '../../src/contracts/json';
import { claudeCodePath } from '../../src/dev/tool-paths';
import { isJsonObject } from '../../src/llm/json-value';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { startApiProcess, type ApiProcess } from '../support/api-process';
import { docBlock, fillPlaceholders, shellCommands } from '../support/doc-blocks';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { temporalAddress, temporalNamespace, testClient, uniqueTaskQueue, cancelRunningSessions } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

/**
 * Which MCP revision Claude Code 2.1.328 speaks with `/v1/mcp`, with `MCP_PROTOCOL_NEGOTIATION` unset, `auto`
 * and `legacy`, as docs/mcp.md's "Tested clients" says: each command line of the docs' block runs (`claude -p`
 * with the docs' HTTP entry, against a strict stand-in of the Anthropic API), delegates, and the revision is
 * read on the server's side: `errand api`'s request log records each request's `MCP-Protocol-Version`, and the
 * tools' schemas errand served carry the 2026-07-28 session handle or not. Each run is its own tenant.
 */

let temporal: TemporalClient;
let connection: Connection;
let server: ScriptedOpenAIServer;
let worker: WorkerProcess;
let api: ApiProcess;
let proxy: Server;
let proxyConnections = 0;
let root: string;
let workDir: string;
let taskQueue: string;

/** The docs' command lines: the negotiation setting (if any), the prompt, the options and the revision the comment names. */
interface DocsRun {
  negotiation: string | undefined;
  prompt: string;
  options: string[];
  revision: string;
}

function docsRuns(): DocsRun[] {
  return shellCommands(docBlock('mcp-claude-negotiation').text).map((command) => {
    const parsed = /^(?:MCP_PROTOCOL_NEGOTIATION=(\w+) )?claude -p "([^"]*)" (.*?)\s+# (\d{4}-\d{2}-\d{2})\b/.exec(command);
    if (!parsed) throw new Error(`docs/mcp.md: a negotiation line is not [MCP_PROTOCOL_NEGOTIATION=<mode>] claude -p "<prompt>" <options>  # <revision>: ${command}`);
    return { negotiation: parsed[1], prompt: parsed[2] ?? '', options: (parsed[3] ?? '').split(' '), revision: parsed[4] ?? '' };
  });
}

const keyOf = (index: number) => `test-key-claude-negotiation-${index}-0123456789`;
const tenantOf = (index: number) => `claude-negotiation-${index}`;

/** The text of a content value: a string, or its text blocks. */
function textOf(content: JsonValue | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block) => (isJsonObject(block) && typeof block.text === 'string' ? block.text : isJsonObject(block) ? textOf(block.content) : '')).join('\n');
}

/** Claude Code's model, as a real one acts on the docs' prompt: ToolSearch for delegate, delegate, answer with what it said. */
function claudeModel(body: JsonObject): ScriptStep {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isJsonObject).map((tool) => String(tool.name)) : [];
  if (!tools.includes('ToolSearch')) return { text: 'errand delegation' };
  const messages = Array.isArray(body.messages) ? body.messages.filter(isJsonObject) : [];
  const blocks = messages.flatMap((message) => (Array.isArray(message.content) ? message.content.filter(isJsonObject) : []));
  const calls = blocks.filter((block) => block.type === 'tool_use');
  const last = calls.at(-1);
  if (!last) return { text: 'Loading errand\'s tools.', toolCalls: [{ name: 'ToolSearch', arguments: { query: 'select:mcp__errand__delegate', max_results: 5 } }] };
  if (last.name === 'ToolSearch') return { toolCalls: [{ name: 'mcp__errand__delegate', arguments: { instructions: 'Summarise the README' } }] };
  const result = blocks.find((block) => block.type === 'tool_result' && block.tool_use_id === last.id);
  return { text: `errand's subagent answered: ${textOf(result?.content)}` };
}

/** The stand-in's answers: Claude Code's model over the Messages API, the subagent's over Chat Completions. */
const responder = (request: { api: string; body: unknown }): ScriptStep | undefined =>
  isJsonObject(request.body) ? (request.api === 'messages' ? claudeModel(request.body) : { text: 'NEGOTIATION-SUBAGENT: one README.' }) : undefined;

/** The delegate schema Claude Code offered its model after ToolSearch loaded it (what errand served). */
function offeredDelegateProperties(requests: readonly { api: string; body: unknown }[]): string[] {
  for (const request of requests) {
    if (request.api !== 'messages' || !isJsonObject(request.body) || !Array.isArray(request.body.tools)) continue;
    const delegate = request.body.tools.filter(isJsonObject).find((tool) => tool.name === 'mcp__errand__delegate');
    const schema = delegate?.input_schema;
    if (isJsonObject(schema) && isJsonObject(schema.properties)) return Object.keys(schema.properties);
  }
  return [];
}

/** The MCP revisions the API's request log recorded for a tenant's requests of /v1/mcp. */
function loggedRevisions(tenant: string): { versions: string[]; requests: number } {
  const entries = api
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { message?: string; path?: string; tenant?: string; mcpProtocolVersion?: string })
    .filter((entry) => entry.message === 'request' && entry.path === '/v1/mcp' && entry.tenant === tenant);
  return { versions: [...new Set(entries.flatMap((entry) => (entry.mcpProtocolVersion ? [entry.mcpProtocolVersion] : [])))], requests: entries.length };
}

function runClaude(run: DocsRun, index: number): Promise<{ stdout: string; stderr: string; code: number }> {
  const file = join(root, `errand-http-${index}.json`);
  writeFileSync(file, fillPlaceholders(docBlock('mcp-claude-json-http'), [['http://localhost:8787', api.url]]));
  const port = String((proxy.address() as { port: number }).port);
  const env: Record<string, string> = {
    PATH: [dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
    HOME: join(root, `home-${index}`),
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    ANTHROPIC_BASE_URL: server.url.replace(/\/v1$/, ''),
    ANTHROPIC_API_KEY: 'sk-ant-test-stand-in',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    HTTPS_PROXY: `http://127.0.0.1:${port}`,
    HTTP_PROXY: `http://127.0.0.1:${port}`,
    NO_PROXY: '127.0.0.1,localhost',
    MCP_TOOL_TIMEOUT: '120000',
    // The docs' HTTP entry reads the key from ERRAND_API_KEY.
    ERRAND_API_KEY: keyOf(index),
    ...(run.negotiation !== undefined ? { MCP_PROTOCOL_NEGOTIATION: run.negotiation } : {}),
  };
  mkdirSync(env.HOME ?? '', { recursive: true });
  const args = ['-p', run.prompt, ...run.options.map((word) => (word === 'errand-http.json' ? file : word))];
  return new Promise((resolveRun, reject) => {
    const child = spawn(claudeCodePath(), args, { env, cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ stdout, stderr, code: code ?? 1 });
    });
  });
}

beforeAll(async () => {
  ({ client: temporal, connection } = await testClient());
  server = await startScriptedOpenAIServer({
    contextWindow: 200_000,
    responder,
  });
  proxy = createServer((socket) => {
    proxyConnections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolveListen) => proxy.listen(0, '127.0.0.1', resolveListen));
  root = mkdtempSync(join(tmpdir(), 'errand-claude-negotiation-'));
  workDir = join(root, 'project');
  const runs = docsRuns();
  for (const [index] of runs.entries()) mkdirSync(join(workDir, tenantOf(index)), { recursive: true });
  writeFileSync(join(workDir, 'README.md'), '# a project for Claude Code\n');
  taskQueue = uniqueTaskQueue('claude-negotiation');
  const settings = {
    ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
    ERRAND_TEMPORAL_NAMESPACE: temporalNamespace(),
    ERRAND_TASK_QUEUE: taskQueue,
    ERRAND_DATA_DIR: join(root, 'data'),
    ERRAND_WORKING_DIR: workDir,
    ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]),
    ERRAND_API_KEYS: JSON.stringify(runs.map((_run, index) => ({ tenant: tenantOf(index), sha256: hashApiKey(keyOf(index)) }))),
  };
  worker = startWorkerProcess('claude-negotiation', settings);
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
  await new Promise((resolveClose) => proxy?.close(resolveClose));
  await connection?.close();
});

describe('Claude Code 2.1.328 over HTTP and MCP_PROTOCOL_NEGOTIATION (the docs\' lines)', () => {
  it('has the three lines the docs give: unset, auto and legacy', () => {
    expect(docsRuns().map((run) => [run.negotiation ?? 'unset', run.revision])).toEqual([['unset', '2026-07-28'], ['auto', '2026-07-28'], ['legacy', '2025-11-25']]);
  });

  it.each(docsRuns().map((run, index) => ({ run, index, setting: run.negotiation ?? 'unset' })))('with MCP_PROTOCOL_NEGOTIATION $setting it speaks the revision the docs name, and delegates', async ({ run, index }) => {
    server.reset();
    server.setResponder(responder);
    const claude = await runClaude(run, index);
    expect(claude.code, `${claude.stderr}\n${claude.stdout}`).toBe(0);
    expect(claude.stdout).toContain('errand\'s subagent answered:');
    expect(claude.stdout).toContain('NEGOTIATION-SUBAGENT: one README.');
    const logged = loggedRevisions(tenantOf(index));
    expect(logged.requests).toBeGreaterThanOrEqual(3);
    expect(logged.versions).toEqual([run.revision]);
    // What errand served agrees: at 2026-07-28 every tool also takes the session handle.
    expect(offeredDelegateProperties(server.requests).includes('session')).toBe(run.revision === '2026-07-28');
    expect(server.rejectedRequests.map((request) => request.rejection)).toEqual([]);
    expect(proxyConnections).toBe(0);
  }, 180_000);
});

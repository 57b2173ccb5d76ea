import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject, JsonValue } from '../../src/contracts/json';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { orchestrationToolSpecs } from '../../src/domain/orchestration-tools';
import { hashApiKey } from '../../src/api/auth-config';
import { freePort } from '../../src/dev/free-port';
import { claudeCodePath } from '../../src/dev/tool-paths';
import { isJsonObject } from '../../src/llm/json-value';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { docBlock, fillPlaceholders, shellCommands } from '../support/doc-blocks';
import { callErrandTool, connectErrandMcp, errandBin } from '../support/mcp-errand-client';
import { writeDevStackState } from '../../src/cli/dev-stack-state';
import { devStackTokenPath } from '../../src/cli/dev-stack-token';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { temporalAddress, temporalNamespace, testClient, uniqueTaskQueue } from '../support/temporal';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-process';

/**
 * The real Claude Code CLI (npm @anthropic-ai/claude-code 2.1.328, installed by scripts/install-tools.ts) as
 * errand's MCP client, with exactly the server entries docs/mcp.md gives: `errand mcp` over stdio (the
 * `errand` command on the PATH, as `npm link` puts it there) and the API's `/v1/mcp` over HTTP with a
 * bearer key. `claude -p` runs non-interactively against a stand-in of the Anthropic Messages API (the
 * scripted server, streamed and as strict as Anthropic), which plays the model as a real one would: MCP
 * tools are deferred, so it finds errand's with ToolSearch, then calls them, and answers with what the
 * subagent said. The subagent's own model is the same server over Chat Completions (the worker's
 * provider); `errand mcp` is given no model, as the docs' entry gives none. Nothing leaves the machine:
 * Claude Code's traffic besides the model is off by its settings, and a proxy that refuses everything
 * counts any connection that tries.
 */

const apiKey = 'test-key-claude-code-0123456789';

let server: ScriptedOpenAIServer;
let client: Client;
let connection: Connection;
let worker: WorkerProcess;
let api: ChildProcess | undefined;
let apiUrl: string;
let proxy: Server;
let proxyConnections = 0;
let root: string;
let workDir: string;
let home: string;
let binDir: string;
let taskQueue: string;
let settings: Record<string, string>;
const sessionIds = new Set<string>();

/** The text of a content value: a string, or its text blocks (tool results of Claude Code carry both). */
function textOf(content: JsonValue | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block) => (isJsonObject(block) && typeof block.text === 'string' ? block.text : isJsonObject(block) ? textOf(block.content) : '')).join('\n');
}

/** The conversation of a Messages request as the stand-in reads it: its tool calls, their results, the prompt. */
function conversationOf(body: JsonObject): { prompt: string; calls: { id: string; name: string }[]; results: Map<string, string> } {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isJsonObject) : [];
  const calls: { id: string; name: string }[] = [];
  const results = new Map<string, string>();
  let prompt = '';
  for (const message of messages) {
    const blocks = Array.isArray(message.content) ? message.content.filter(isJsonObject) : [];
    if (message.role === 'user' && prompt === '') prompt = typeof message.content === 'string' ? message.content : blocks.filter((block) => block.type === 'text').map((block) => String(block.text)).join('\n');
    for (const block of blocks) {
      if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') calls.push({ id: block.id, name: block.name });
      if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') results.set(block.tool_use_id, textOf(block.content));
    }
  }
  return { prompt, calls, results };
}

/** The deferred tools Claude Code names to its model (the system message or reminder that lists them). */
function deferredToolNames(body: JsonObject): string[] {
  const everything = JSON.stringify(body);
  return [...new Set(everything.match(/mcp__errand__[a-z_]+/g) ?? [])];
}

/**
 * Claude Code's model, as a real one acts on the prompts of this file: load errand's tool schemas with
 * ToolSearch, delegate, and answer with the subagent's words; in the background case, call
 * list_subagent_models (paced like a model that waits) until a tool result brings the task's notice.
 */
function claudeModel(body: JsonObject): ScriptStep {
  const tools = Array.isArray(body.tools) ? body.tools.filter(isJsonObject).map((tool) => String(tool.name)) : [];
  // A request without the main loop's tools (a side request: a title, a summary) gets a short answer.
  if (!tools.includes('ToolSearch')) return { text: 'errand delegation' };
  const { prompt, calls, results } = conversationOf(body);
  const last = calls.at(-1);
  const lastResult = last ? (results.get(last.id) ?? '') : '';
  const background = prompt.includes('count the files in the background');
  if (calls.length === 0) {
    const wanted = background ? 'select:mcp__errand__delegate,mcp__errand__list_subagent_models' : 'select:mcp__errand__delegate';
    return { text: 'Loading errand\'s tools.', toolCalls: [{ name: 'ToolSearch', arguments: { query: wanted, max_results: 5 } }] };
  }
  if (last?.name === 'ToolSearch') {
    return { toolCalls: [{ name: 'mcp__errand__delegate', arguments: background ? { instructions: 'Count the files in the background', async: true } : { instructions: 'Summarise the README' } }] };
  }
  if (!background) return { text: `errand's subagent answered: ${lastResult}` };
  const notice = lastResult.split('\n').find((line) => line.includes('[task notice]'));
  if (notice !== undefined) return { text: `The background task reported: ${lastResult.slice(lastResult.indexOf('[task notice]'))}` };
  // Over MCP 2026-07-28 errand's results name the session to pass on (decision 0042); a model does as told.
  const session = [...results.values()].map((text) => /pass "session": "(errand-[0-9a-f]{16})"/.exec(text)?.[1]).find((id) => id !== undefined);
  return { toolCalls: [{ name: 'mcp__errand__list_subagent_models', arguments: session ? { session } : {} }], delayMs: 1_000 };
}

/** The subagent's model (Chat Completions, the worker's provider): it answers its task at once. */
function subagentModel(body: JsonObject): ScriptStep {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isJsonObject) : [];
  const task = messages.filter((message) => message.role === 'user').map((message) => textOf(message.content)).join('\n');
  return { text: `SUBAGENT-ANSWER for "${/Summarise the README|Count the files in the background/.exec(task)?.[0] ?? 'an unknown task'}": three files, one README.` };
}

/** The docs' Claude Code entry of one transport (docs/mcp.md), with the place-holders of this machine filled in. */
function docsEntry(transport: 'stdio' | 'http'): JsonObject {
  if (transport === 'stdio') {
    return JSON.parse(fillPlaceholders(docBlock('mcp-claude-json-stdio'), [['localhost:7233', temporalAddress()], ['/path/to/your/project', workDir]])) as JsonObject;
  }
  return JSON.parse(fillPlaceholders(docBlock('mcp-claude-json-http'), [['http://localhost:8787', apiUrl]])) as JsonObject;
}

/**
 * The options of the docs' command line (`claude -p "<prompt>" --mcp-config <file> --allowedTools …`), with
 * this test's prompt and file: the quoted prompt and the file name are the only words it replaces.
 */
function docsCommand(prompt: string, file: string): string[] {
  const [command] = shellCommands(docBlock('mcp-claude-run').text);
  const words = /^claude -p "[^"]*" (.*)$/.exec(command ?? '')?.[1]?.split(' ');
  if (!words) throw new Error(`docs/mcp.md: the Claude Code command line is not claude -p "<prompt>" <options>: ${command ?? ''}`);
  return ['-p', prompt, ...words.map((word) => (word === 'errand-mcp.json' ? file : word))];
}

/** Runs `claude -p` with an MCP config file; resolves with its stdout, stderr and exit code. */
function runClaude(config: JsonObject, prompt: string, extraEnv: Record<string, string> = {}): Promise<{ stdout: string; stderr: string; code: number }> {
  const file = join(root, `mcp-${Math.random().toString(16).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  const env: Record<string, string> = {
    // `errand` is on the PATH as `npm link` puts it there, and `node` beside it.
    PATH: [binDir, dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter),
    HOME: home,
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    ANTHROPIC_BASE_URL: server.url.replace(/\/v1$/, ''),
    ANTHROPIC_API_KEY: 'sk-ant-test-stand-in',
    // No telemetry, updates, error reports or other calls home; whatever still tries meets the proxy.
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    HTTPS_PROXY: `http://127.0.0.1:${String((proxy.address() as { port: number }).port)}`,
    HTTP_PROXY: `http://127.0.0.1:${String((proxy.address() as { port: number }).port)}`,
    NO_PROXY: '127.0.0.1,localhost',
    MCP_TOOL_TIMEOUT: '120000',
    // What `errand mcp` inherits besides the entry's own two settings: this file's task queue and data folder.
    ...settings,
    ...extraEnv,
  };
  return new Promise((resolveRun, reject) => {
    const child = spawn(claudeCodePath(), docsCommand(prompt, file), { env, cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** The Messages requests of Claude Code's main loop (those offering ToolSearch). */
function mainLoopRequests(): RecordedRequest[] {
  return server.requests.filter((request) => request.api === 'messages' && isJsonObject(request.body) && Array.isArray(request.body.tools) && JSON.stringify(request.body.tools).includes('"ToolSearch"'));
}

beforeAll(async () => {
  ({ client, connection } = await testClient());
  server = await startScriptedOpenAIServer({
    // Claude's context window (the stand-in refuses a prompt plus max_tokens over it, as Anthropic does).
    contextWindow: 200_000,
    responder: (request) => (isJsonObject(request.body) ? (request.api === 'messages' ? claudeModel(request.body) : subagentModel(request.body)) : undefined),
  });
  proxy = createServer((socket) => {
    proxyConnections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolveListen) => proxy.listen(0, '127.0.0.1', resolveListen));
  root = mkdtempSync(join(tmpdir(), 'errand-claude-code-'));
  workDir = join(root, 'project');
  home = join(root, 'home');
  binDir = join(root, 'bin');
  for (const folder of [workDir, home, binDir]) mkdirSync(folder, { recursive: true });
  writeFileSync(join(workDir, 'README.md'), '# a project for Claude Code\n');
  symlinkSync(errandBin, join(binDir, 'errand'));
  taskQueue = uniqueTaskQueue('claude-code');
  settings = { ERRAND_TASK_QUEUE: taskQueue, ERRAND_TEMPORAL_NAMESPACE: temporalNamespace(), ERRAND_DATA_DIR: join(root, 'data') };
  // The worker has the model configuration; `errand mcp` and the API do not need one for an MCP session.
  worker = startWorkerProcess('claude-code', { ...settings, ERRAND_WORKING_DIR: workDir, ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]) });
  await worker.ready;
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  api = spawn(process.execPath, [errandBin, 'api'], {
    cwd: workDir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      TMPDIR: process.env.TMPDIR ?? tmpdir(),
      ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
      ...settings,
      ERRAND_WORKING_DIR: workDir,
      ERRAND_API_PORT: String(port),
      ERRAND_API_KEYS: JSON.stringify([{ tenant: 'acme', sha256: hashApiKey(apiKey) }]),
      ERRAND_PROVIDERS: JSON.stringify([{ name: 'http', kind: 'openai-compatible', baseUrl: server.url, models: ['gpt-test'] }]),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let apiOutput = '';
  api.stderr?.on('data', (chunk: Buffer) => (apiOutput += chunk.toString('utf8')));
  await new Promise<void>((resolveReady, reject) => {
    api?.stdout?.on('data', (chunk: Buffer) => {
      apiOutput += chunk.toString('utf8');
      if (apiOutput.includes('listening on')) resolveReady();
    });
    api?.once('exit', (code) => reject(new Error(`errand api exited (${String(code)}): ${apiOutput}`)));
  });
}, 120_000);

afterAll(async () => {
  for await (const execution of client.workflow.list({ query: `TaskQueue = "${taskQueue}" AND WorkflowType = "sessionWorkflow" AND ExecutionStatus = "Running"` })) sessionIds.add(execution.workflowId);
  for (const id of sessionIds) await client.workflow.getHandle(id).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  if (api && api.exitCode === null) {
    const exited = new Promise((resolveExit) => api?.once('exit', resolveExit));
    api.kill('SIGTERM');
    await exited;
  }
  await worker?.stop();
  await server?.close();
  await new Promise((resolveClose) => proxy?.close(resolveClose));
  await connection?.close();
});

const transports = [
  { name: 'stdio (errand mcp, the docs\' entry)', transport: 'stdio' as const, env: {} as Record<string, string> },
  // The docs' HTTP entry reads the key from ERRAND_API_KEY.
  { name: 'HTTP (/v1/mcp, the docs\' entry)', transport: 'http' as const, env: { ERRAND_API_KEY: apiKey } as Record<string, string> },
];

/**
 * The schema Claude Code offers its model for delegate: Claude Code 2.1.328 asks `server/discover` first on
 * both transports, and errand answers it on both (decisions 0042, 0043), so it negotiates 2026-07-28, where
 * every tool also takes the session handle.
 */
function offeredDelegateSchema(): unknown {
  const schema = orchestrationToolSpecs.delegate.inputSchema as { properties: Record<string, unknown> };
  return { ...schema, properties: { ...schema.properties, session: { type: 'string', description: expect.stringContaining('Your errand session') as unknown } } };
}

describe.each(transports)('Claude Code 2.1.328 over $name', ({ transport, env }) => {
  it('lists errand\'s tools, finds delegate with ToolSearch, delegates, and answers with the subagent\'s answer', async () => {
    server.reset();
    server.setResponder((request) => (isJsonObject(request.body) ? (request.api === 'messages' ? claudeModel(request.body) : subagentModel(request.body)) : undefined));
    const run = await runClaude(docsEntry(transport), 'Delegate a summary of the README to an errand subagent and tell me what it said.', env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('errand\'s subagent answered:');
    expect(run.stdout).toContain('SUBAGENT-ANSWER for "Summarise the README": three files, one README.');
    const main = mainLoopRequests();
    // Claude Code named errand's five tools to its model (deferred), and loaded delegate's schema on request.
    expect(deferredToolNames(main[0]?.body as JsonObject).sort()).toEqual(['mcp__errand__delegate', 'mcp__errand__list_subagent_models', 'mcp__errand__load', 'mcp__errand__run_workflow', 'mcp__errand__send_message']);
    // ToolSearch answered with a reference to delegate, and the next request offers its schema.
    const afterSearch = main[1]?.body as JsonObject;
    expect(conversationOf(afterSearch).calls.map((call) => call.name)).toEqual(['ToolSearch']);
    expect(JSON.stringify(afterSearch.messages)).toContain('{"type":"tool_reference","tool_name":"mcp__errand__delegate"}');
    const offered = (Array.isArray(afterSearch.tools) ? afterSearch.tools.filter(isJsonObject) : []).find((tool) => tool.name === 'mcp__errand__delegate');
    expect(offered?.input_schema).toEqual(offeredDelegateSchema());
    expect(server.requests.filter((request) => request.api === 'chat-completions')).toHaveLength(1);
    expect(server.rejectedRequests.map((request) => request.rejection)).toEqual([]);
    expect(server.exhaustedRequests).toHaveLength(0);
    expect(proxyConnections).toBe(0);
  }, 180_000);

  it('starts a background task and gets its notice with a later tool result', async () => {
    server.reset();
    server.setResponder((request) => (isJsonObject(request.body) ? (request.api === 'messages' ? claudeModel(request.body) : subagentModel(request.body)) : undefined));
    const run = await runClaude(docsEntry(transport), 'Have an errand subagent count the files in the background, and report its notice when it arrives.', env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('The background task reported: [task notice] Background task task-1 completed');
    expect(run.stdout).toContain('SUBAGENT-ANSWER for "Count the files in the background"');
    const started = conversationOf(mainLoopRequests().at(-1)?.body as JsonObject);
    const delegate = started.calls.find((call) => call.name === 'mcp__errand__delegate');
    expect(started.results.get(delegate?.id ?? '')).toContain('Started task-1 in the background');
    expect(server.rejectedRequests.map((request) => request.rejection)).toEqual([]);
    expect(server.exhaustedRequests).toHaveLength(0);
    expect(proxyConnections).toBe(0);
  }, 180_000);
});

/** Runs `errand mcp` with `env`, sends it an MCP initialize, and resolves with its exit code and stderr. */
function errandMcpRefused(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [errandBin, 'mcp'], { env: { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: process.env.TMPDIR ?? tmpdir(), ...env }, cwd: workDir, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stdin.on('error', () => undefined);
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'refused-test', version: '1.0.0' } } };
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
    child.once('exit', (code) => resolveRun({ code, stderr, stdout }));
  });
}

describe('errand mcp through an errand API (stdio bridged to /v1/mcp)', () => {
  it('with ERRAND_API_URL and ERRAND_API_KEY: serves the tools of a session the API holds, and delegates', async () => {
    server.reset();
    server.setResponder((request) => (isJsonObject(request.body) ? subagentModel(request.body) : undefined));
    // No Temporal address, task queue or data folder: the API has them.
    const env = { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: process.env.TMPDIR ?? tmpdir(), ERRAND_API_URL: `${apiUrl}/`, ERRAND_API_KEY: apiKey, ERRAND_DATA_DIR: join(root, 'client-data') };
    const connected = await connectErrandMcp(env, workDir);
    try {
      sessionIds.add(connected.sessionId);
      expect(connected.stderr()).toContain(`errand mcp: session ${connected.sessionId} through ${apiUrl}`);
      expect((await connected.client.listTools()).tools.map((tool) => tool.name)).toEqual(['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models']);
      const delegated = await callErrandTool(connected.client, 'delegate', { instructions: 'Summarise the README' });
      expect(delegated.isError).toBe(false);
      expect(delegated.texts[0]).toContain('SUBAGENT-ANSWER for "Summarise the README"');
      const described = await client.workflow.getHandle(connected.sessionId).describe();
      expect(described.searchAttributes.ErrandTenant).toEqual(['acme']);
    } finally {
      await connected.client.close();
    }
    expect(server.rejectedRequests).toHaveLength(0);
  }, 60_000);

  it('finds a running errand dev of its data directory (state file and token) as the other client commands do', async () => {
    const dataDir = join(root, 'dev-data');
    // What errand dev writes when it starts: its API and pid (here the running API's), and its token.
    writeDevStackState(dataDir, { apiUrl, pid: api?.pid ?? 0, temporalAddress: temporalAddress(), namespace: temporalNamespace(), taskQueue, startedAt: new Date().toISOString() });
    writeFileSync(devStackTokenPath(dataDir), apiKey, { mode: 0o600 });
    const env = { PATH: process.env.PATH ?? '', HOME: home, TMPDIR: process.env.TMPDIR ?? tmpdir(), ERRAND_DATA_DIR: dataDir, ERRAND_TEMPORAL_ADDRESS: 'localhost:1' };
    const connected = await connectErrandMcp(env, workDir);
    try {
      sessionIds.add(connected.sessionId);
      expect(connected.stderr()).toContain(`through ${apiUrl}`);
      const models = await callErrandTool(connected.client, 'list_subagent_models');
      expect(models.texts[0]).toContain('gpt-test');
    } finally {
      await connected.client.close();
    }
  }, 60_000);

  it('says so and exits 1 when the API does not answer, or refuses the key', async () => {
    const closedPort = await freePort();
    const unreachable = await errandMcpRefused({ ERRAND_API_URL: `http://127.0.0.1:${closedPort}`, ERRAND_API_KEY: apiKey });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`errand mcp: the errand API at http://127.0.0.1:${closedPort} (ERRAND_API_URL) did not answer`);
    expect(unreachable.stderr).not.toContain('not built yet');
    const refused = await errandMcpRefused({ ERRAND_API_URL: apiUrl, ERRAND_API_KEY: 'not-a-key-of-this-api' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`errand mcp: the errand API at ${apiUrl} (ERRAND_API_URL) refused the key (HTTP 401): set ERRAND_API_KEY to a key of that API`);
    // The client got the reason as the answer to its initialize.
    expect(JSON.parse(refused.stdout.trim())).toMatchObject({ id: 1, error: { message: expect.stringContaining('refused the key') } });
  }, 60_000);
});

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { devStackTokenFileName } from '../../src/contracts/limits/api';
import { searchAttributes } from '../../src/contracts/search-attributes';
import { temporalCliPath, toolsDirectory } from '../../src/dev/tool-paths';
import { errandBin } from '../support/built-artifacts';
import { startDevStackProcess, type DevStackProcess } from '../support/dev-stack-process';
import { docBlock, fillPlaceholders, projectRoot, shellCommands, type DocBlock } from '../support/doc-blocks';
import { claudeMcpAddEntry, codexEntry, cursorEntry, gooseEntry, shellWords, type McpClientEntry } from '../support/mcp-client-entries';
import { until } from '../support/polling';

/**
 * The docs' commands and client entries against one real `errand dev` (bin/errand.js, its own Temporal,
 * worker and API, the demo model), as a user runs them: the API's curl commands with the stack's token,
 * the MCP client entries over HTTP through the MCP TypeScript SDK's client (as goose, Codex, Cursor and
 * Claude Code read them), the Inspector's HTTP command, and Temporal's CLI on errand's workflows. The
 * blocks are read from the docs; only their placeholders (the documented ports, ids and keys) are filled.
 *
 * The stack asks a person before `developer__list_directory` (the demo model's first call), so a
 * delegation waits on an approval for as long as a block needs it running.
 */

let stack: DevStackProcess;
let scratch: string;
let dataDir: string;
let workDir: string;
let token: string;
let temporalAddress: string;
/** A folder with `temporal` on it, as a user who installed Temporal's CLI has. */
let binDir: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'errand-doc-stack-'));
  dataDir = join(scratch, 'data');
  workDir = join(scratch, 'work');
  binDir = join(scratch, 'bin');
  for (const dir of [dataDir, workDir, binDir]) mkdirSync(dir);
  symlinkSync(temporalCliPath(), join(binDir, 'temporal'));
  stack = await startDevStackProcess(
    {
      PATH: process.env.PATH,
      HOME: scratch,
      TMPDIR: process.env.TMPDIR,
      ERRAND_DATA_DIR: dataDir,
      ERRAND_WORKING_DIR: workDir,
      ERRAND_TOOL_POLICY: JSON.stringify({ default: 'allow', rules: { developer__list_directory: 'ask' }, approvers: 'human' }),
      // The README's first curl asks to wait 20 s; the stack answers within 2 (and says it cut the wait).
      ERRAND_API_MAX_WAIT_MS: '2000',
    },
    workDir,
  );
  token = readFileSync(join(dataDir, devStackTokenFileName), 'utf8').trim();
  temporalAddress = /Temporal\s+(\S+)/.exec(stack.banner)?.[1] ?? '';
  expect(temporalAddress).toMatch(/^127\.0\.0\.1:\d+$/);
}, 180_000);

afterAll(async () => {
  if (stack) expect(await stack.stop()).toBe(0);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const execFileAsync = promisify(execFile);

/** Runs one command line in sh, as a person pastes it, with `temporal` on the PATH; resolves with how it exited. */
async function sh(command: string, env: NodeJS.ProcessEnv, cwd = projectRoot): Promise<Run> {
  const options = { env: { PATH: `${binDir}:${process.env.PATH ?? ''}`, HOME: scratch, TMPDIR: process.env.TMPDIR, ...env }, cwd, timeout: 120_000, maxBuffer: 8 * 1024 * 1024 };
  try {
    const { stdout, stderr } = await execFileAsync('sh', ['-c', command], options);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : null, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error) };
  }
}

/** What a command printed, as JSON; fails with its output when it did not succeed. */
function jsonOf(run: Run): unknown {
  expect(run, run.stderr).toMatchObject({ code: 0 });
  return JSON.parse(run.stdout) as unknown;
}

async function api(path: string, init: RequestInit = {}): Promise<unknown> {
  const response = await fetch(`${stack.apiUrl}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });
  expect(response.status, `${path}: ${response.status}`).toBeLessThan(300);
  return response.json();
}

const approvalsSchema = z.object({ approvals: z.array(z.object({ id: z.string() }).loose()) });

/** Starts a delegation and waits until it asks for its first tool call's approval (so it stays running); returns its id. */
async function delegationAwaitingApproval(instructions: string): Promise<string> {
  const { id } = z.object({ id: z.string() }).parse(await api('/v1/delegations', { method: 'POST', body: JSON.stringify({ instructions }) }));
  await approvalOf(id);
  return id;
}

/** The documented API origin (`errand dev`'s default port) replaced by the stack's. */
function withStackApi(text: string): string {
  expect(text).toContain('http://localhost:8787');
  return text.split('http://localhost:8787').join(stack.apiUrl);
}

/** The id of `id`'s pending approval, once it asks for one. */
async function approvalOf(id: string): Promise<string> {
  const approvals = await until(async () => approvalsSchema.parse(await api('/v1/approvals')).approvals, (list) => list.some((approval) => approval.id.startsWith(`${id}:`)), `an approval of ${id}`);
  return approvals.find((approval) => approval.id.startsWith(`${id}:`))?.id ?? '';
}

const endedSchema = z.object({ done: z.literal(true), result: z.object({ status: z.string() }).loose() }).loose();

/** The result of `id` once it has ended. */
async function endedResult(id: string): Promise<z.infer<typeof endedSchema>['result']> {
  const ended = await until(async () => endedSchema.safeParse(await api(`/v1/delegations/${id}/result`)), (parsed) => parsed.success, `${id} to end`);
  if (!ended.success) throw ended.error;
  return ended.data.result;
}

/** A connected MCP client sees errand's five tools, and one call of them answers (the demo model's listing). */
async function expectErrandTools(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((tool) => tool.name).sort()).toEqual(['delegate', 'list_subagent_models', 'load', 'run_workflow', 'send_message']);
  const result = z.object({ content: z.array(z.object({ type: z.literal('text'), text: z.string() })), isError: z.boolean().optional() }).loose().parse(await client.callTool({ name: 'list_subagent_models', arguments: {} }));
  expect(result.isError).not.toBe(true);
  expect(result.content[0]?.text).toContain('demo');
}

describe('docs/mcp.md over stdio', () => {
  it('goose’s, Codex’s and Cursor’s stdio entry starts `errand mcp`, which finds the running stack and serves the tools', async () => {
    const entries = [gooseEntry(docBlock('mcp-goose-stdio').text, 'errand'), codexEntry(docBlock('mcp-codex-stdio').text, 'errand', {}), cursorEntry(docBlock('mcp-cursor-stdio').text, 'errand')];
    expect(new Set(entries.map((entry) => JSON.stringify(entry))).size).toBe(1);
    const entry = entries[0];
    if (entry?.transport !== 'stdio') throw new Error(`expected a stdio entry, got ${JSON.stringify(entry)}`);
    // The entry's command is `errand` on the PATH (npm link): here the built launcher it links to. Its settings
    // are the entry's, the project folder filled in; the user's environment gives the data folder (default
    // ~/.local/state/errand, here the stack's), where `errand dev` left dev-stack.json.
    expect(entry.command).toBe('errand');
    const env = { PATH: process.env.PATH ?? '', HOME: scratch, ERRAND_DATA_DIR: dataDir, ...Object.fromEntries(Object.entries(entry.env).map(([name, value]) => [name, value === '/path/to/your/project' ? workDir : value])) };
    const transport = new StdioClientTransport({ command: process.execPath, args: [errandBin, ...entry.args], env, stderr: 'pipe' });
    const client = new Client({ name: 'docs-stdio-entry', version: '1.0.0' });
    await client.connect(transport);
    try {
      await expectErrandTools(client);
    } finally {
      await client.close();
    }
  });
});

describe('docs/mcp.md over HTTP', () => {
  /** Connects with what the client read from its entry, lists the tools and calls one. */
  async function expectServes(entry: McpClientEntry): Promise<void> {
    if (entry.transport !== 'http') throw new Error(`expected an HTTP entry, got ${JSON.stringify(entry)}`);
    const transport = new StreamableHTTPClientTransport(new URL(withStackApi(entry.url)), { requestInit: { headers: entry.headers } });
    const client = new Client({ name: 'docs-entry', version: '1.0.0' });
    await client.connect(transport);
    try {
      await expectErrandTools(client);
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  }
  const key = (block: DocBlock) => fillPlaceholders(block, [['<your key>', token]]);

  it('goose’s streamable_http extension', async () => {
    await expectServes(gooseEntry(key(docBlock('mcp-goose-http')), 'errand'));
  });

  it('Codex’s entry, its bearer token read from ERRAND_API_KEY', async () => {
    await expectServes(codexEntry(docBlock('mcp-codex-http').text, 'errand', { ERRAND_API_KEY: token }));
  });

  it('Cursor’s entry', async () => {
    await expectServes(cursorEntry(key(docBlock('mcp-cursor-http')), 'errand'));
  });

  it('Claude Code’s `claude mcp add --transport http`', async () => {
    const commands = shellCommands(docBlock('mcp-claude-http').text);
    expect(commands).toHaveLength(1);
    const { name, entry } = claudeMcpAddEntry(shellWords(commands[0] ?? '', { ERRAND_API_KEY: token }));
    expect(name).toBe('errand');
    await expectServes(entry);
  });

  it('the Inspector’s CLI lists the tools over HTTP', async () => {
    const [command, ...rest] = shellCommands(withStackApi(docBlock('mcp-inspector-http').text));
    expect(rest).toEqual([]);
    const listed = z.object({ tools: z.array(z.object({ name: z.string() }).loose()) }).parse(jsonOf(await sh(command ?? '', { ERRAND_API_KEY: token })));
    expect(listed.tools.map((tool) => tool.name)).toContain('delegate');
  }, 120_000);
});

describe('README: the API with curl', () => {
  it('starts a delegation, reads it, follows its events, messages it and decides its approval', async () => {
    const block = docBlock('readme-api-curl');
    const [exportKey, start, ...rest] = shellCommands(fillPlaceholders(block, [['localhost:8787', stack.apiUrl.replace('http://', '')], ['export KEY=...', `export KEY=${token}`]]));
    expect(exportKey).toMatch(/^export KEY=/);
    const env = { KEY: token };
    const started = z.object({ id: z.string(), state: z.string() }).loose().parse(jsonOf(await sh(start ?? '', env)));
    // The demo model's first call waits for a person: the delegation has not ended when the wait does.
    expect(['running', 'waiting_approval']).toContain(started.state);
    const approvalId = await approvalOf(started.id);
    const [read, events, message, approve] = rest.map((command) => command.replace(/errand-0123456789abcdef:\d+:\d+/g, approvalId).replace(/errand-0123456789abcdef/g, started.id));
    expect(z.object({ id: z.string() }).loose().parse(jsonOf(await sh(read ?? '', env))).id).toBe(started.id);
    // The event stream stays open for the API's longest wait (2 s here), then ends for the client to reconnect.
    const stream = await sh(events ?? '', env);
    expect(stream).toMatchObject({ code: 0, stdout: expect.stringContaining('event: state') });
    // A continuable delegation takes a message while it waits (queued for its next turn).
    expect(jsonOf(await sh(message ?? '', env))).toMatchObject({ id: started.id, accepted: true });
    expect(jsonOf(await sh(approve ?? '', env))).toEqual({ id: approvalId, decision: 'deny' });
    await api(`/v1/delegations/${started.id}/cancel`, { method: 'POST', body: '{}' });
  }, 120_000);
});

describe('Temporal’s CLI on errand workflows', () => {
  it('docs/deploy.md and docs/temporal-ui.md: a new namespace and its search attributes; again on one that has them (harmless)', async () => {
    const namespace = `errand-docs-${Date.now().toString(36)}`;
    const created = await sh(docBlock('deploy-namespace').text, { TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_NAMESPACE: namespace });
    expect(created, created.stderr).toMatchObject({ code: 0 });
    const block = docBlock('search-attributes-create');
    for (const ns of [namespace, 'default']) {
      const run = await sh(fillPlaceholders(block, [['temporal.example.internal:7233', temporalAddress], ['NS=default', `NS=${ns}`]]), {});
      expect(run, run.stderr).toMatchObject({ code: 0 });
      for (const attribute of Object.values(searchAttributes)) expect(run.stdout).toContain(attribute.name);
    }
  }, 90_000);

  it('docs/temporal-ui.md: the filter bar’s queries are valid visibility queries', async () => {
    const queries = docBlock('visibility-queries').text.split('\n').filter((line) => line.trim() !== '');
    expect(queries.length).toBeGreaterThan(3);
    for (const query of queries) {
      const run = await sh(`temporal workflow list --address ${temporalAddress} --query "$QUERY" -o json`, { QUERY: query });
      expect(run, `${query}: ${run.stderr}`).toMatchObject({ code: 0, stderr: '' });
    }
  }, 60_000);

  it('docs/temporal-ui.md: peek, describe and list a running delegation, then cancel it', async () => {
    const id = await delegationAwaitingApproval('Wait for the docs’ commands');
    const fill = (blockId: string) => shellCommands(fillPlaceholders(docBlock(blockId), [['localhost:7233', temporalAddress], [/errand-k3x9q2[^\s'"]*/, id]]));
    const [peek] = fill('temporal-peek');
    expect(jsonOf(await sh(peek ?? '', {}))).toMatchObject({ queryResult: [{ state: 'waiting_approval' }] });
    const [describeCommand, list] = fill('temporal-describe-list');
    expect(jsonOf(await sh(describeCommand ?? '', {}))).toMatchObject({ executionConfig: { userMetadata: { summary: expect.anything() } } });
    // The list's query names the delegation as a parent: it has no children, so the list is empty.
    expect(await sh(list ?? '', {})).toMatchObject({ code: 0, stderr: '' });
    const [cancel] = fill('temporal-cancel');
    expect(await sh(cancel ?? '', {})).toMatchObject({ code: 0 });
    expect(await endedResult(id)).toMatchObject({ status: 'cancelled' });
  }, 120_000);

  it('README: the project-installed CLI queries and cancels a delegation', async () => {
    const id = await delegationAwaitingApproval('Wait for the README’s commands');
    // The commands name the CLI under .tools/ of the repository: run them in a folder whose .tools is this run's.
    const cwd = join(scratch, 'repository');
    mkdirSync(cwd);
    symlinkSync(toolsDirectory(), join(cwd, '.tools'));
    const [query, signal] = shellCommands(fillPlaceholders(docBlock('readme-temporal-cli'), [['<id>', id]]));
    const env = { TEMPORAL_ADDRESS: temporalAddress };
    expect(jsonOf(await sh(query ?? '', env, cwd))).toMatchObject({ queryResult: [{ state: 'waiting_approval' }] });
    expect(await sh(signal ?? '', env, cwd)).toMatchObject({ code: 0 });
    expect(await endedResult(id)).toMatchObject({ status: 'cancelled', diagnostic: expect.stringContaining('enough') });
  }, 120_000);
});

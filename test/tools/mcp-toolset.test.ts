import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/settings/config';
import { maxRecipeServerInstancesPerConfig } from '../../src/contracts/limits/tools';
import { createResolverCache } from '../../src/worker/worker-dependencies';
import { RecipeServerVerifier } from '../../src/sources/recipe-server-trust';
import { recipeServerFromExtension } from '../../src/tools/mcp-config';
import { convertCallResult } from '../../src/tools/mcp-call-result';
import { createToolsetRegistryFromConfig, type WorkerToolsetRegistry } from '../../src/tools/toolset-registry-factory';
import { echoServerConfig } from '../fixtures/mcp/fixture-paths';
import { startHttpEchoServer, type HttpEchoServer } from '../fixtures/mcp/http-echo-server';
import { createSandbox, type Sandbox } from './fixtures';

/**
 * MCP servers as toolsets, against real servers: the stdio echo server (a child process) and the
 * streamable HTTP echo server on loopback. Both speak MCP through the official SDK.
 */

let sandbox: Sandbox;
const registries: WorkerToolsetRegistry[] = [];

function registry(...args: Parameters<typeof createToolsetRegistryFromConfig>): WorkerToolsetRegistry {
  const created = createToolsetRegistryFromConfig(...args);
  registries.push(created);
  return created;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  sandbox = await createSandbox();
});

afterEach(async () => {
  await Promise.all(registries.splice(0).map((created) => created.close()));
});

afterAll(async () => {
  await sandbox.cleanup();
});

describe('stdio MCP server as a toolset', () => {
  it('lists the tools under <server>__<tool> and calls them', async () => {
    const tools = registry({ mcpServers: [echoServerConfig({ env: { ECHO_LITERAL: 'literal' }, envFrom: ['ECHO_FROM_WORKER'] })], env: { ECHO_FROM_WORKER: 'from the worker' } });
    expect(tools.names()).toEqual(['developer', 'echo']);
    const specs = await tools.specsFor(['echo']);
    expect(specs.map((spec) => spec.name)).toEqual(['echo__echo', 'echo__math_add', 'echo__pid', 'echo__env', 'echo__fail', 'echo__crash']);
    expect(specs[0]?.description).toBe('Echoes the text back.');
    expect(specs[0]?.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });

    const context = sandbox.context();
    expect(await tools.call('echo__echo', { text: 'hello' }, context)).toEqual({ content: 'stdio echo: hello', isError: false });
    // `math.add` is not a valid model tool name: the model sees math_add, the server gets math.add.
    expect(await tools.call('echo__math_add', { a: 2, b: 3 }, context)).toEqual({ content: '5', isError: false });
    expect((await tools.call('echo__env', { name: 'ECHO_LITERAL' }, context)).content).toBe('literal');
    expect((await tools.call('echo__env', { name: 'ECHO_FROM_WORKER' }, context)).content).toBe('from the worker');
    // Variables not named are not inherited (only the SDK's safe defaults such as PATH are).
    expect((await tools.call('echo__env', { name: 'ERRAND_TEST_TEMPORAL_ADDRESS' }, context)).content).toBe('(unset)');
    expect(await tools.call('echo__fail', {}, context)).toEqual({ content: 'failed on purpose', isError: true });
    // Arguments the server rejects are an error result, and the connection stays up.
    const invalid = await tools.call('echo__math_add', { a: 'two' }, context);
    expect(invalid.isError).toBe(true);
    expect(tools.mcpToolset('echo')?.status()).toMatchObject({ connected: true, starts: 1 });
  });

  it('reports a crash mid-call as a tool error naming the server, and restarts it on the next call', async () => {
    const tools = registry({ mcpServers: [echoServerConfig()] });
    const context = sandbox.context();
    const first = Number((await tools.call('echo__pid', {}, context)).content);
    expect(isAlive(first)).toBe(true);

    const crashed = await tools.call('echo__crash', {}, context);
    expect(crashed.isError).toBe(true);
    expect(crashed.content).toContain('MCP server "echo" stopped during the call to crash');
    expect(crashed.content).toContain('crashing on request');
    expect(crashed.content).toContain('restarted on the next call');

    const second = Number((await tools.call('echo__pid', {}, context)).content);
    expect(second).not.toBe(first);
    expect(isAlive(second)).toBe(true);
    expect(tools.mcpToolset('echo')?.status()).toMatchObject({ connected: true, starts: 2 });
    expect(await tools.call('echo__echo', { text: 'again' }, context)).toEqual({ content: 'stdio echo: again', isError: false });
  });

  it('reports a server that fails to start, naming it and quoting its stderr, and tries again on the next call', async () => {
    const tools = registry({ mcpServers: [echoServerConfig({ name: 'broken', env: { ECHO_FAIL_START: '1' } }), echoServerConfig({ name: 'missing', command: 'errand-no-such-mcp-server-binary', args: [] })] });
    expect(await tools.specsFor(['broken'])).toEqual([]);
    const context = sandbox.context();
    const broken = tools.mcpToolset('broken');
    const result = await broken?.callTool('echo', { text: 'x' }, context);
    expect(result?.isError).toBe(true);
    expect(result?.content).toContain('MCP server "broken" is not available');
    expect(result?.content).toContain('refusing to start');
    expect(result?.content).toContain('started again on the next call');
    const starts = broken?.status().starts ?? 0;
    await broken?.callTool('echo', { text: 'x' }, context);
    expect(broken?.status().starts).toBe(starts + 1);

    const missing = await tools.mcpToolset('missing')?.callTool('echo', { text: 'x' }, context);
    expect(missing?.isError).toBe(true);
    expect(missing?.content).toMatch(/MCP server "missing" is not available: could not start "errand-no-such-mcp-server-binary": .*ENOENT/);
  });

  it('closes an idle connection (stopping the process) and starts it again when used', async () => {
    const tools = registry({ mcpServers: [echoServerConfig()], idleMs: 300 });
    const context = sandbox.context();
    const pid = Number((await tools.call('echo__pid', {}, context)).content);
    await waitFor(() => tools.mcpToolset('echo')?.status().connected === false, 'the idle connection to close');
    await waitFor(() => !isAlive(pid), 'the idle server process to exit');
    const next = Number((await tools.call('echo__pid', {}, context)).content);
    expect(next).not.toBe(pid);
    expect(tools.mcpToolset('echo')?.status().starts).toBe(2);
  });

  it('shares one client between concurrent calls', async () => {
    const tools = registry({ mcpServers: [echoServerConfig()] });
    const context = sandbox.context();
    const pids = await Promise.all(Array.from({ length: 5 }, () => tools.call('echo__pid', {}, context)));
    expect(new Set(pids.map((result) => result.content)).size).toBe(1);
    expect(tools.mcpToolset('echo')?.status().starts).toBe(1);
  });
});

describe('streamable HTTP MCP server as a toolset', () => {
  let server: HttpEchoServer;
  beforeAll(async () => {
    server = await startHttpEchoServer({ token: 'secret-token' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('lists and calls tools, sending the configured headers', async () => {
    const tools = registry({ mcpServers: [{ type: 'streamable_http', name: 'remote', url: server.url, headers: { authorization: 'Bearer secret-token' } }] });
    const specs = await tools.specsFor(['remote']);
    expect(specs.map((spec) => spec.name)).toEqual(['remote__echo', 'remote__math_add', 'remote__pid', 'remote__env', 'remote__fail']);
    expect(await tools.call('remote__echo', { text: 'over http' }, sandbox.context())).toEqual({ content: 'http echo: over http', isError: false });
    expect(await tools.call('remote__math_add', { a: 40, b: 2 }, sandbox.context())).toEqual({ content: '42', isError: false });
  });

  it('reports a refused connection as a tool error naming the server', async () => {
    const tools = registry({ mcpServers: [{ type: 'streamable_http', name: 'wrong-token', url: server.url, headers: { authorization: 'Bearer nope' } }] });
    const result = await tools.mcpToolset('wrong-token')?.callTool('echo', { text: 'x' }, sandbox.context());
    expect(result?.isError).toBe(true);
    expect(result?.content).toContain('MCP server "wrong-token" is not available: could not connect to');
  });

  it('survives the server going away: the call fails naming the server, and the next one reconnects', async () => {
    const own = await startHttpEchoServer({ token: 't' });
    const port = own.port;
    const tools = registry({ mcpServers: [{ type: 'streamable_http', name: 'flaky', url: own.url, headers: { authorization: 'Bearer t' } }] });
    expect((await tools.call('flaky__echo', { text: 'one' }, sandbox.context())).content).toBe('http echo: one');
    await own.close();

    const down = await tools.call('flaky__echo', { text: 'two' }, sandbox.context());
    expect(down.isError).toBe(true);
    expect(down.content).toContain('MCP server "flaky"');

    const again = await startHttpEchoServer({ token: 't', port });
    try {
      expect(await tools.call('flaky__echo', { text: 'three' }, sandbox.context())).toEqual({ content: 'http echo: three', isError: false });
      expect(again.sessions()).toBe(1);
    } finally {
      await again.close();
    }
  });
});

describe('recipe-declared servers', () => {
  /** A project folder with a recipe that declares the echo server, and a verifier that trusts (or not) its folder. */
  function recipeSetup(trusted: boolean) {
    const echo = echoServerConfig();
    const extension = { type: 'stdio' as const, name: 'Echo', cmd: echo.command, args: echo.args, ...(echo.cwd ? { cwd: echo.cwd } : {}) };
    const project = realpathSync(mkdtempSync(join(tmpdir(), 'errand-recipe-servers-')));
    const recipes = join(project, '.goose', 'recipes');
    mkdirSync(recipes, { recursive: true });
    writeFileSync(join(recipes, 'echo-recipe.yaml'), `version: 1.0.0\ntitle: Echo\ndescription: d\nprompt: p\nextensions:\n  - ${JSON.stringify(extension)}\n`);
    const config = loadConfig({ ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-recipe-servers-data-')), ERRAND_WORKING_DIR: project });
    const verifier = new RecipeServerVerifier({
      resolverFor: createResolverCache(config, mkdtempSync(join(tmpdir(), 'errand-recipe-servers-home-'))),
      trust: { workingRoot: project, trustedDirs: trusted ? [recipes] : [] },
    });
    const converted = recipeServerFromExtension(extension);
    if (!converted.ok) throw new Error(converted.message);
    const origin = { source: 'echo-recipe', resolveDir: project, workingDir: project, values: {} };
    return { verifier, config: converted.server.config, origin, project };
  }

  it('are registered on demand under recipe-<name>-<hash>, idempotently, and run like any MCP toolset', async () => {
    const { verifier, config, origin, project } = recipeSetup(true);
    const tools = registry({ mcpServers: [], allowRecipeServers: true, recipeVerifier: verifier });
    expect(config.name).toMatch(/^recipe-echo-[0-9a-f]{8}$/);
    expect(await tools.ensureRecipeServers([{ config, origin }])).toEqual([config.name]);
    expect(await tools.ensureRecipeServers([{ config: JSON.parse(JSON.stringify(config)), origin }])).toEqual([config.name]);
    expect(tools.names()).toEqual(['developer', config.name]);
    expect(await tools.call(`${config.name}__echo`, { text: 'from a recipe' }, { ...sandbox.context(), workingDir: project })).toEqual({ content: 'stdio echo: from a recipe', isError: false });
    // The same name with another config (a forged input) is refused, never routed to the registered server.
    await expect(tools.ensureRecipeServers([{ config: { ...config, args: ['--version'] }, origin }])).rejects.toThrow(/already registered with a different config/);
    await expect(tools.ensureRecipeServers([{ config: { ...config, name: 'echo' }, origin }])).rejects.toThrow(/must be named recipe-/);
    // A config the recipe does not declare, under a name of its own, is refused: the worker read the recipe itself.
    const forged = recipeServerFromExtension({ type: 'stdio', name: 'Echo', cmd: '/bin/sh', args: ['-c', 'id'] });
    if (!forged.ok) throw new Error(forged.message);
    await expect(tools.ensureRecipeServers([{ config: forged.server.config, origin }])).rejects.toThrow(/is not declared by .*echo-recipe\.yaml as this worker reads it; nothing was started/);
    await expect(tools.ensureRecipeServers([{ config: forged.server.config }])).rejects.toThrow(/does not say which recipe declared it/);
  });

  it('keep a server per working directory, least recently used first: past the limit an idle one makes room, a running one stays', async () => {
    const { verifier, config, origin, project } = recipeSetup(true);
    const tools = registry({ mcpServers: [], allowRecipeServers: true, recipeVerifier: verifier });
    await tools.ensureRecipeServers([{ config, origin }]);
    const toolset = tools.recipeToolset(config.name);
    if (!toolset) throw new Error('the recipe server was not registered');
    // The project folder's server runs (a real process, connected); then as many folders again as the limit
    // allows, whose servers were looked up but never started (idle).
    expect(await tools.call(`${config.name}__echo`, { text: 'running' }, { ...sandbox.context(), workingDir: project })).toEqual({ content: 'stdio echo: running', isError: false });
    const running = toolset.instanceFor(project);
    const folders = Array.from({ length: maxRecipeServerInstancesPerConfig }, (_, index) => join(project, `worktree-${index}`));
    for (const folder of folders) toolset.instanceFor(folder);
    expect(toolset.running()).toHaveLength(maxRecipeServerInstancesPerConfig);
    // The oldest (the running one) is kept; the oldest idle one was dropped instead.
    expect(toolset.running()).toContain(running);
    const second = toolset.instanceFor(folders[1] as string);
    toolset.instanceFor(join(project, 'one-more'));
    expect(toolset.running()).toContain(running);
    expect(toolset.running()).toContain(second);
    expect(toolset.running()).toHaveLength(maxRecipeServerInstancesPerConfig);
    expect(toolset.idle()).toBe(false);
  });

  it("are refused from a tenant-writable folder the operator does not trust, naming ERRAND_TRUSTED_RECIPE_DIRS", async () => {
    const { verifier, config, origin } = recipeSetup(false);
    const tools = registry({ mcpServers: [], allowRecipeServers: true, recipeVerifier: verifier });
    await expect(tools.ensureRecipeServers([{ config, origin }])).rejects.toThrow(/lies in a folder under the working directory that tenants can write.*ERRAND_TRUSTED_RECIPE_DIRS/);
    expect(tools.names()).toEqual(['developer']);
  });

  it('are refused on a worker whose operator does not allow them, whatever the workflow input says', async () => {
    const { verifier, config, origin } = recipeSetup(true);
    const tools = registry({ mcpServers: [], recipeVerifier: verifier });
    await expect(tools.ensureRecipeServers([{ config, origin }])).rejects.toThrow(/does not allow them \(ERRAND_ALLOW_RECIPE_MCP_SERVERS is not true\); nothing was started/);
    expect(tools.names()).toEqual(['developer']);
    expect(await tools.ensureRecipeServers([])).toEqual([]);
  });
});

describe('convertCallResult', () => {
  it('turns content parts into text the model can read', () => {
    expect(convertCallResult({ content: [{ type: 'text', text: 'a' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'resource_link', uri: 'file:///x', name: 'x' }, { type: 'resource', resource: { uri: 'file:///y', text: 'inline' } }] })).toEqual({
      content: 'a\n[image image/png, 3 bytes, not shown]\n[resource link: file:///x (x)]\ninline',
      isError: false,
    });
    expect(convertCallResult({ content: [], structuredContent: { n: 1 } })).toEqual({ content: '{"n":1}', isError: false });
    expect(convertCallResult({ toolResult: { ok: true } })).toEqual({ content: '{"ok":true}', isError: false });
  });
});

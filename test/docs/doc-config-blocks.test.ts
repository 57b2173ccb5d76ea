import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseSettings, settingKeys } from '../../infra/lib/settings';
import { loadApiConfig } from '../../src/api/api-config';
import { hashApiKey, parseApiKeys } from '../../src/api/auth-config';
import { loadClientConfig } from '../../src/settings/client-config';
import { loadConfig } from '../../src/settings/config';
import { delegateRequestSchema } from '../../src/contracts/delegation';
import { llamaModelPath, toolPath, toolsDirectory } from '../../src/dev/tool-paths';
import { tracingSettings } from '../../src/observability/tracing';
import { readAgentText } from '../../src/sources/agent-file';
import { readRecipeText } from '../../src/sources/recipe-file';
import { docBlock, fillPlaceholders, isKnownSetting, projectRoot, shellAssignments, shellCommands } from '../support/doc-blocks';
import { claudeMcpAddEntry, codexEntry, cursorEntry, gooseEntry, inspectorRun, shellWords, type McpClientEntry } from '../support/mcp-client-entries';

/**
 * The docs' configuration blocks read as errand reads them: settings through src/settings/config.ts (and the API's
 * src/api/api-config.ts), configuration files through ERRAND_CONFIG, recipe settings through the recipe
 * reader, request bodies through their schema, MCP client entries as each client reads them. Every variable
 * a block sets must be one that something reads, so a misspelt setting fails here instead of being ignored.
 */

const scratch = mkdtempSync(join(tmpdir(), 'errand-doc-config-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function expectKnownSettings(env: Record<string, string>): void {
  const names = Object.keys(env);
  expect(names.length).toBeGreaterThan(0);
  expect(names.filter((name) => !isKnownSetting(name))).toEqual([]);
}

describe('README settings', () => {
  it('a real model: ERRAND_PROVIDERS and the key variable it names, then npm start', () => {
    const block = docBlock('readme-openai-provider');
    const { env, commands } = shellAssignments(block.text);
    expect(commands).toEqual(['npm start']);
    const config = loadConfig({ ...env, ERRAND_DATA_DIR: scratch }, scratch);
    expect(config.defaultModel).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
    const [provider] = config.providers;
    // The key variable the block exports is the one the provider entry names.
    expect(provider?.apiKeyEnv).toBe('OPENAI_API_KEY');
    expect(Object.keys(env).filter((name) => name !== provider?.apiKeyEnv && !isKnownSetting(name))).toEqual([]);
    const packageJson = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(packageJson.scripts.start).toContain('bin/errand.js dev');
  });

  it('a local model: the pinned llama.cpp server and model paths, and the provider entry that points at its port', () => {
    const block = docBlock('readme-llama-server');
    const [server, ...rest] = shellCommands(block.text);
    const serverWords = shellWords(server ?? '', {});
    // The paths as the tools' installer lays them out under .tools/ (the same layout wherever ERRAND_TOOLS_DIR points).
    const underTools = (path: string) => `.tools/${relative(toolsDirectory(), path)}`;
    expect(serverWords[0]).toBe(underTools(toolPath('llama-server')));
    expect(serverWords[serverWords.indexOf('--model') + 1]).toBe(underTools(llamaModelPath()));
    const template = serverWords[serverWords.indexOf('--chat-template-file') + 1] ?? '';
    expect(readFileSync(join(projectRoot, template), 'utf8')).toContain('<start_of_turn>');
    const port = serverWords[serverWords.indexOf('--port') + 1];
    expect(serverWords.at(-1)).toBe('&');
    const { env, commands } = shellAssignments(rest.join('\n'));
    expect(commands).toEqual(['node bin/errand.js dev']);
    expectKnownSettings(env);
    const config = loadConfig({ ...env, ERRAND_DATA_DIR: scratch }, scratch);
    expect(config.providers[0]?.baseUrl).toBe(`http://127.0.0.1:${port}/v1`);
    expect(config.defaultModel).toEqual({ provider: 'llama', model: 'gemma3' });
  });
});

describe('docs/deploy.md', () => {
  it('the cdk deploy’s -c settings are parameters the app reads and accepts', () => {
    const commands = shellCommands(docBlock('cdk-deploy').text);
    expect(commands[0]).toBe('cd infra');
    const deploy = commands.find((command) => / deploy /.test(command)) ?? '';
    const words = shellWords(deploy, {});
    const context: Record<string, string> = {};
    words.forEach((word, index) => {
      if (word !== '-c') return;
      const [key, ...value] = (words[index + 1] ?? '').split('=');
      context[key ?? ''] = value.join('=');
    });
    expect(Object.keys(context).filter((key) => !(settingKeys as string[]).includes(key))).toEqual([]);
    const settings = parseSettings(context);
    expect(settings).toMatchObject({ temporalAddress: 'errand-prod.a1b2c.tmprl.cloud:7233', temporalAuth: 'api-key', llmKeyNames: ['OPENAI_API_KEY'] });
    // The providers' key variable is one of the secrets' key names.
    expect(loadConfig({ ERRAND_PROVIDERS: context.providers, ERRAND_DATA_DIR: scratch }, scratch).providers[0]?.apiKeyEnv).toBe('OPENAI_API_KEY');
  });

  it('the secrets’ values have the fields the stack reads from them', () => {
    const block = docBlock('deploy-secrets');
    const text = fillPlaceholders(block, [['<sha256 hex of the key>', hashApiKey('errand_test_key')]]);
    // Each value as aws secretsmanager receives it: the --secret-string word (comment lines show the mTLS variant).
    const values = text.split('\n').flatMap((line) => {
      const words = shellWords(line.replace(/^#\s*mTLS:\s*/, 'mtls '), {});
      const at = words.indexOf('--secret-string');
      if (words[0] === 'mtls') return [{ secret: 'TemporalCredentialsSecret', value: words[1] ?? '' }];
      return at < 0 ? [] : [{ secret: words[words.indexOf('--secret-id') + 1] ?? '', value: words[at + 1] ?? '' }];
    });
    const fields = (secret: string) => values.filter((entry) => entry.secret === `<${secret}>` || entry.secret === secret).map((entry) => Object.keys(JSON.parse(entry.value) as object).sort());
    // temporalAuth=api-key: one field apiKey; mTLS: tlsCert and tlsKey (infra/lib/errand-stack.ts).
    expect(fields('TemporalCredentialsSecret')).toEqual([['apiKey'], ['tlsCert', 'tlsKey']]);
    // One field per llmKeyNames entry of the deploy command.
    expect(fields('LlmKeysSecret')).toEqual([['OPENAI_API_KEY']]);
    const apiKeys = values.find((entry) => entry.secret === '<ApiKeyHashesSecret>')?.value ?? '';
    expect(parseApiKeys(apiKeys, 'ApiKeyHashesSecret')).toEqual([{ tenant: 'acme', sha256: hashApiKey('errand_test_key') }]);
  });
});

describe('docs/recipes.md', () => {
  it('a recipe’s caps are settings the recipe reader accepts', () => {
    const block = docBlock('recipe-caps');
    const read = readRecipeText(`title: Triage\ndescription: Triage the failing tests\ninstructions: Triage them.\n${block.text}`, 'caps.yaml');
    expect(read.errors).toEqual([]);
    expect(read.warnings).toEqual([]);
    expect(read.recipe?.settings).toEqual({ max_turns: 30, time_budget: 900, cost_budget_usd: 0.5 });
  });

  it('the agent file is one errand’s agent reader takes without a warning', () => {
    const read = readAgentText(docBlock('agent-file').text, 'reviewer.md', { sonnet: 'anthropic/claude-sonnet-4-5' });
    expect(read.errors).toEqual([]);
    expect(read.warnings).toEqual([]);
    expect(read.agent).toMatchObject({ name: 'reviewer', description: 'Reviews code' });
  });

  it('a delegation’s caps are fields of the delegate request', () => {
    const request = delegateRequestSchema.parse(JSON.parse(docBlock('delegation-caps').text));
    expect(request).toMatchObject({ time_budget: 600, cost_budget_usd: 0.25 });
  });

  it('the configured stores are what ERRAND_STORES accepts', () => {
    const config = loadConfig({ ERRAND_STORES: docBlock('configured-stores').text, ERRAND_DATA_DIR: scratch }, scratch);
    expect(config.sources.stores.map((store) => store.type)).toEqual(['directory', 'git', 's3']);
  });
});

describe('docs/toolsets.md', () => {
  it('the operator’s MCP servers are a configuration file errand reads', () => {
    const file = join(scratch, 'mcp-servers.json');
    writeFileSync(file, docBlock('config-mcp-servers').text);
    const config = loadConfig({ ERRAND_CONFIG: file, ERRAND_DATA_DIR: scratch, GITHUB_TOKEN: 'token' }, scratch);
    expect(config.tools.mcpServers.map((server) => server.name)).toEqual(['github', 'search']);
  });

  it('the tool policy is a configuration file errand reads', () => {
    const file = join(scratch, 'tool-policy.json');
    writeFileSync(file, docBlock('config-tool-policy').text);
    const config = loadConfig({ ERRAND_CONFIG: file, ERRAND_DATA_DIR: scratch }, scratch);
    expect(config.toolPolicy).toMatchObject({ default: 'allow', approvers: 'human', rules: { developer__run_command: 'ask', 'github__delete_*': 'deny' } });
  });
});

describe('docs/security.md', () => {
  it('the recommended multi-tenant settings are read by the workers’ and the API’s configuration', () => {
    const block = docBlock('multi-tenant-settings');
    const keysFile = join(scratch, 'api-keys.json');
    writeFileSync(keysFile, JSON.stringify([{ tenant: 'acme', sha256: hashApiKey('errand_test_key') }]));
    const { env, commands } = shellAssignments(
      fillPlaceholders(block, [
        ['/run/secrets/errand-api-keys.json', keysFile],
        ['/mnt/errand/work', join(scratch, 'work')],
        ['/mnt/errand/state', join(scratch, 'state')],
      ]),
    );
    expect(commands).toEqual([]);
    expectKnownSettings(env);
    const config = loadConfig(env, scratch);
    expect(config.toolPolicy?.rules).toEqual({ developer__run_command: 'ask' });
    expect(config.commands.sandbox).toBe('bwrap');
    const api = loadApiConfig(env, scratch);
    expect(api.auth.mode).toBe('keys');
  });
});

describe('docs/observability.md', () => {
  it.each(['tracing-honeycomb', 'tracing-grafana-cloud'])('%s: variables the OpenTelemetry SDK reads, and tracing on', (id) => {
    const block = docBlock(id);
    const { env, commands } = shellAssignments(fillPlaceholders(block, [[/<[^>]+>/, 'placeholder']]));
    expect(commands).toEqual([]);
    expectKnownSettings(env);
    const settings = tracingSettings('api', env);
    expect(settings?.serviceName).toBe(env.OTEL_SERVICE_NAME ?? 'errand-api');
  });
});

describe('docs/mcp.md stdio entries', () => {
  /** Every stdio entry starts the package's own command with errand's client settings. */
  function expectErrandMcp(entry: McpClientEntry): void {
    if (entry.transport !== 'stdio') throw new Error(`expected a stdio entry, got ${JSON.stringify(entry)}`);
    const packageJson = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(Object.keys(packageJson.bin)).toContain(entry.command);
    expect(entry.args).toEqual(['mcp']);
    expectKnownSettings(entry.env);
    expect(loadClientConfig(entry.env, scratch).temporal.address).toBe('localhost:7233');
  }
  const cwd = { PWD: '/path/to/your/project' };

  it('goose, Codex and Cursor read their entries into the same command', () => {
    const entries = [gooseEntry(docBlock('mcp-goose-stdio').text, 'errand'), codexEntry(docBlock('mcp-codex-stdio').text, 'errand', {}), cursorEntry(docBlock('mcp-cursor-stdio').text, 'errand')];
    for (const entry of entries) expectErrandMcp(entry);
    expect(new Set(entries.map((entry) => JSON.stringify(entry))).size).toBe(1);
  });

  it('Claude Code’s `claude mcp add` lines (docs/mcp.md and the README)', () => {
    for (const id of ['mcp-claude-stdio', 'readme-claude-stdio']) {
      const commands = shellCommands(docBlock(id).text);
      expect(commands).toHaveLength(1);
      const { name, entry } = claudeMcpAddEntry(shellWords(commands[0] ?? '', cwd));
      expect(name).toBe('errand');
      expectErrandMcp(entry);
    }
  });

  it('the Inspector’s stdio commands: list the tools, then call delegate', () => {
    const runs = shellCommands(docBlock('mcp-inspector-stdio').text).map((command) => inspectorRun(shellWords(command, cwd)));
    expect(runs.map((run) => run.method)).toEqual(['tools/list', 'tools/call']);
    expect(runs[1]).toMatchObject({ toolName: 'delegate', toolArgs: { instructions: 'Summarise the README' } });
    for (const run of runs) expectErrandMcp(run.entry);
  });
});

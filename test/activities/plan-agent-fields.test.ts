import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { planDelegation, type PlanContext } from '../../src/activities/plan-delegation';
import { planOutput } from '../../src/activities/orchestration-activities';
import { loadConfig } from '../../src/settings/config';
import type { DelegationParent, PlanDelegationOutput } from '../../src/contracts/activities';
import type { DelegateRequest } from '../../src/contracts/delegation';
import { DirectoryStore } from '../../src/sources/directory-store';
import { LocalBlobStore } from '../../src/activities/blob-store';
import { SourceResolver } from '../../src/sources/source-resolver';
import { createModelRegistry } from '../../src/llm/model-registry';
import { createToolsetRegistry } from '../../src/tools/toolset-registry';
import { createResolverCache, planningSettings } from '../../src/worker/worker-dependencies';
import { testActivitySettings } from '../support/temporal';

/**
 * Planning honours what a Claude Code agent file and a goose recipe say (SEMANTICS §5): maxTurns,
 * disallowedTools, permissionMode, mcpServers, background, isolation, retry and structured output,
 * with errand's fixtures in a real git repository and real source stores.
 */

const fixtures = resolve(__dirname, '..', 'fixtures', 'sources');
let project: string;
let plainFolder: string;
let context: PlanContext;

function parent(overrides: Partial<DelegationParent> = {}): DelegationParent {
  return {
    workflowId: 'errand-plan',
    taskId: 'task-1',
    childDepth: 1,
    maxDepth: 1,
    workingDir: project,
    route: { provider: 'openai', model: 'gpt-a' },
    toolsets: ['developer', 'github'],
    activity: testActivitySettings,
    ...overrides,
  };
}

async function plan(request: DelegateRequest, overrides: Partial<DelegationParent> = {}, contextOverrides: Partial<PlanContext> = {}): Promise<PlanDelegationOutput> {
  return planOutput(await planDelegation(request, parent(overrides), { ...context, ...contextOverrides }));
}

async function planned(request: DelegateRequest, overrides: Partial<DelegationParent> = {}, contextOverrides: Partial<PlanContext> = {}): Promise<Extract<PlanDelegationOutput, { ok: true }>> {
  const result = await plan(request, overrides, contextOverrides);
  if (!result.ok) throw new Error(`planning failed: ${result.message}`);
  return result;
}

beforeAll(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), 'errand-plan-agents-')));
  execFileSync('git', ['init', '--quiet', '--initial-branch=main', project]);
  cpSync(join(fixtures, 'agents'), join(project, '.claude', 'agents'), { recursive: true });
  mkdirSync(join(project, '.goose', 'recipes'), { recursive: true });
  cpSync(join(fixtures, 'recipes', 'release-check.yaml'), join(project, '.goose', 'recipes', 'release-check.yaml'));
  writeFileSync(join(project, '.claude', 'agents', 'tracker.md'), [
    '---',
    'name: tracker',
    'description: Files issues in the tracker.',
    'mcpServers:',
    '  - github',
    '  - jira:',
    '      command: npx',
    '      args: [-y, jira-mcp-server]',
    '      env:',
    '        JIRA_TOKEN: ${JIRA_TOKEN}',
    '---',
    'You file issues.',
    '',
  ].join('\n'));
  // The planner agent preloads the skill api-conventions (its fixture says so): the project holds it.
  mkdirSync(join(project, '.claude', 'skills', 'api-conventions'), { recursive: true });
  writeFileSync(join(project, '.claude', 'skills', 'api-conventions', 'SKILL.md'), '---\nname: api-conventions\ndescription: How our HTTP APIs look.\n---\nResources are plural nouns.\n');
  writeFileSync(join(project, '.claude', 'agents', 'surveyor.md'), '---\nname: surveyor\ndescription: Looks around.\npermissionMode: plan\n---\nYou look around.\n');
  plainFolder = realpathSync(mkdtempSync(join(tmpdir(), 'errand-plan-no-git-')));
  const config = loadConfig({ ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-plan-agents-data-')) });
  const resolverFor = createResolverCache({ ...config, sources: { ...config.sources, modelAliases: { haiku: 'gpt-b' } } }, mkdtempSync(join(tmpdir(), 'errand-plan-agents-home-')));
  context = {
    resolver: resolverFor(project),
    providers: [{ name: 'openai', models: ['gpt-a', 'gpt-b'], defaultModel: 'gpt-a' }],
    configuredDefault: undefined,
    override: {},
    configuredMaxTurns: 25,
    availableToolsets: ['developer', 'github'],
    tasks: { maxBackgroundTasks: 5, waitTimeoutMs: 1_000, completedTaskTtlMs: 1_000 },
    approvalTimeoutMs: 60_000,
    mcp: { allowRecipeServers: false },
    memoryStore: new LocalBlobStore(join(config.dataDir, 'blobs')),
  };
});

afterAll(() => {
  for (const folder of [project, plainFolder]) if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('Claude Code agent fields in planning', () => {
  test('maxTurns ranks with recipe settings: delegate max_turns wins over it, it wins over the parent recipe and configuration', async () => {
    expect((await planned({ source: 'release-notes' })).input.maxTurns).toBe(8);
    expect((await planned({ source: 'release-notes', max_turns: 3 })).input.maxTurns).toBe(3);
    const parentRecipe = await context.resolver.resolve('release-check');
    if (!parentRecipe.ok || parentRecipe.snapshot.definition.type !== 'recipe') throw new Error('release-check did not resolve');
    // A copy: the resolver caches what it parsed.
    const snapshot = structuredClone(parentRecipe.snapshot);
    if (snapshot.definition.type === 'recipe') snapshot.definition.recipe.settings = { max_turns: 4 };
    const underRecipe = { recipe: { snapshot, values: {} } };
    expect((await planned({ source: 'release-notes' }, underRecipe)).input.maxTurns).toBe(8);
    expect((await planned({ source: 'docs-writer' }, underRecipe)).input.maxTurns).toBe(4);
    expect((await planned({ source: 'docs-writer' }, {}, { configuredMaxTurns: 11 })).input.maxTurns).toBe(11);
    // Neither the agent file nor the session's recipe raises the operator's limit: capped, with a warning.
    const agentCapped = await planned({ source: 'release-notes' }, {}, { configuredMaxTurns: 5 });
    expect(agentCapped.input.maxTurns).toBe(5);
    expect(agentCapped.warnings).toContainEqual(expect.stringMatching(/maxTurns asks for 8 turns, above this server's limit of 5 \(ERRAND_SUBAGENT_MAX_TURNS\)/));
    const parentCapped = await planned({ source: 'docs-writer' }, underRecipe, { configuredMaxTurns: 2 });
    expect(parentCapped.input.maxTurns).toBe(2);
    expect(parentCapped.warnings).toContainEqual(expect.stringMatching(/the session recipe's settings\.max_turns asks for 4 turns/));
  });

  test('tools and disallowedTools: the allow-list in Claude names, narrowed by the deny-list', async () => {
    const result = await planned({ source: 'planner' });
    expect(result.input.toolFilter).toEqual({
      allow: ['developer__read_file', 'developer__search_text', 'developer__list_directory', 'developer__run_command'],
      deny: ['developer__run_command'],
    });
    // A tool list with no MCP entries leaves the MCP toolset out, so the system prompt does not list it.
    expect(result.input.toolsets).toEqual(['developer']);
  });

  test('permissionMode plan adds a read-only policy layer after the inherited ones, and says what it leaves out', async () => {
    const inherited = { rules: { developer__read_file: 'ask' as const } };
    const result = await planned({ source: 'planner' }, { toolPolicy: [inherited] });
    expect(result.input.toolPolicy).toEqual([
      inherited,
      { default: 'deny', rules: { developer__read_file: 'allow', developer__list_directory: 'allow', developer__search_text: 'allow' } },
    ]);
    const docsOnly = await planned({ source: 'unattended' });
    expect(docsOnly.input.toolPolicy).toEqual([{ askBecomes: 'deny' }]);
    expect((await planned({ source: 'editor' })).input.toolPolicy).toEqual([{ allowOverDefaultAsk: ['developer__write_file'] }]);
    expect((await planned({ source: 'docs-writer' })).input.toolPolicy).toBeUndefined();
  });

  test('permissionMode plan on an agent that keeps an MCP toolset notes that its tools are not offered', async () => {
    const result = await planned({ source: 'surveyor' });
    expect(result.input.toolsets).toEqual(['developer', 'github']);
    expect(result.warnings.filter((warning) => warning.includes('permissionMode plan'))).toEqual([
      expect.stringMatching(/surveyor\.md: permissionMode plan: only the read-only developer tools are offered; the tools of github are not \(errand cannot tell which MCP tools only read\)$/),
    ]);
  });

  test('bypassPermissions is refused unless the operator allows it', async () => {
    const refused = await plan({ source: 'bypass' });
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.message).toMatch(/bypass\.md: permissionMode bypassPermissions is not allowed here: the operator has not enabled it \(ERRAND_ALLOW_BYPASS_PERMISSIONS=true\)/);
    const allowed = await planned({ source: 'bypass' }, {}, { allowBypassPermissions: true });
    expect(allowed.input.toolPolicy).toEqual([{ allowOverDefaultAsk: ['*'] }]);
  });

  test('the operator setting: ERRAND_ALLOW_BYPASS_PERMISSIONS (or allowBypassPermissions in the file), default false', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'errand-plan-bypass-'));
    expect(loadConfig({ ERRAND_DATA_DIR: dataDir }).allowBypassPermissions).toBe(false);
    expect(loadConfig({ ERRAND_DATA_DIR: dataDir, ERRAND_ALLOW_BYPASS_PERMISSIONS: 'true' }).allowBypassPermissions).toBe(true);
    expect(() => loadConfig({ ERRAND_DATA_DIR: dataDir, ERRAND_ALLOW_BYPASS_PERMISSIONS: 'yes' })).toThrow('ERRAND_ALLOW_BYPASS_PERMISSIONS="yes" is not valid: use true or false');
    const file = join(dataDir, 'errand.json');
    writeFileSync(file, JSON.stringify({ allowBypassPermissions: true }));
    const fromFile = loadConfig({ ERRAND_DATA_DIR: dataDir, ERRAND_CONFIG: file });
    expect(fromFile.allowBypassPermissions).toBe(true);
    expect(planningSettings(fromFile, createModelRegistry([], { env: {} }), createToolsetRegistry()).allowBypassPermissions).toBe(true);
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('mcpServers: inline servers start only where the operator allows recipe servers; names must be available', async () => {
    const refused = await planned({ source: 'tracker' });
    expect(refused.input.recipeServers).toBeUndefined();
    expect(refused.input.toolsets).toEqual(['developer', 'github']);
    expect(refused.warnings).toContain('the agent\'s MCP server "jira" is not started: the operator does not allow MCP servers declared by recipes or agents (ERRAND_ALLOW_RECIPE_MCP_SERVERS)');

    // The agent file lies in the project folder, which tenants can write: its servers need that folder trusted.
    const untrusted = await plan({ source: 'tracker' }, {}, { mcp: { allowRecipeServers: true, recipeEnvKeys: ['JIRA_TOKEN'] } });
    expect(untrusted).toMatchObject({ ok: false, message: expect.stringMatching(/^project \.claude\/agents: tracker\.md declares MCP servers, but it lies in a folder under the working directory that tenants can write.*ERRAND_TRUSTED_RECIPE_DIRS/), failure: { field: 'source', code: 'recipe-untrusted' } });
    const trustedRecipeDirs = [join(project, '.claude', 'agents')];
    const allowed = await planned({ source: 'tracker' }, {}, { mcp: { allowRecipeServers: true, recipeEnvKeys: ['JIRA_TOKEN'], trustedRecipeDirs }, resolveDir: project });
    expect(allowed.input.recipeServers).toEqual([
      {
        declaredName: 'jira',
        config: { type: 'stdio', name: expect.stringMatching(/^recipe-jira-[0-9a-f]{8}$/), command: 'npx', args: ['-y', 'jira-mcp-server'], envFrom: ['JIRA_TOKEN'] },
        // Where the worker finds the agent file again before it starts anything.
        origin: { source: 'tracker', resolveDir: project, workingDir: project, values: {} },
      },
    ]);
    expect(allowed.input.toolsets).toEqual(['developer', 'github', allowed.input.recipeServers?.[0]?.config.name]);

    const missing = await planned({ source: 'tracker' }, { toolsets: ['developer'] });
    expect(missing.warnings).toContain('the agent\'s mcpServers entry "github" names no MCP server available here (available: developer); the subagent runs without it');
  });

  test('background: true asks the parent to run it in the background; isolation: worktree travels in the input', async () => {
    const result = await planned({ source: 'planner' });
    expect(result.forceBackground).toBe(true);
    expect(result.input.isolation).toBe('worktree');
    const plain = await planned({ source: 'docs-writer' });
    expect(plain.forceBackground).toBeUndefined();
    expect(plain.input.isolation).toBeUndefined();
  });

  test('isolation on the request, and its check that the working directory is in a git repository', async () => {
    expect((await planned({ instructions: 'Edit the parser', isolation: 'worktree' })).input.isolation).toBe('worktree');
    const outside = await plan({ instructions: 'Edit the parser', isolation: 'worktree' }, { workingDir: plainFolder });
    expect(outside).toMatchObject({ ok: false, message: 'isolation "worktree" needs a git repository, and the working directory is not inside one', failure: { field: 'isolation', code: 'isolation-unavailable' } });
    // An API that is not beside its workers (a Lambda) does not look: the worker's worktree step reports it.
    const elsewhere = await plan({ instructions: 'Edit the parser', isolation: 'worktree' }, { workingDir: plainFolder }, { workersDiskIsLocal: false });
    expect(elsewhere.ok && elsewhere.input.isolation).toBe('worktree');
  });

  test("the agent file's warnings reach the delegating model's notes", async () => {
    const fixer = await planned({ source: 'test-fixer' });
    expect(fixer.warnings.some((warning) => warning.includes('test-fixer.md: description: not valid YAML'))).toBe(true);
    const planner = await planned({ source: 'planner' });
    expect(planner.warnings.filter((warning) => warning.includes('not supported by errand')).map((warning) => warning.replace(/^.*planner\.md: /, '').split(':')[0])).toEqual([]);
  });

  test('skills: the project\'s SKILL.md goes into the system prompt parts; memory: the project memory folder of this tenant and agent', async () => {
    const planner = await planned({ source: 'planner' }, { tenant: 'acme' });
    expect(planner.input.system.skills).toEqual([{ name: 'api-conventions', from: 'project .claude/skills', content: expect.stringContaining('Resources are plural nouns.') as unknown }]);
    expect(planner.input.memory).toEqual({ tenant: 'acme', scope: 'project', agent: 'planner', project: expect.stringMatching(/^[0-9a-f]{32}$/) as unknown });
    expect(planner.input.system.memory).toEqual({ scope: 'project', excerpt: '', truncated: false });
    // Without a data store (a planner built without one) an agent with memory is refused, naming the field.
    const refused = await plan({ source: 'planner' }, {}, { memoryStore: undefined });
    expect(refused).toMatchObject({ ok: false, message: expect.stringMatching(/planner\.md: memory: this server has no data store for agent memory/) as unknown, failure: { field: 'source', code: 'memory-unavailable' } });
  });
});

describe('goose sub-recipe fields in planning', () => {
  test('sequential_when_repeated is reported, not dropped: parallel delegate calls stay parallel', async () => {
    const analyzerStore = new DirectoryStore(join(fixtures, 'recipes', 'project-analyzer'));
    const parentRecipe = await new SourceResolver({ stores: [{ store: analyzerStore }], aliases: {} }).resolve('project-analyzer');
    if (!parentRecipe.ok) throw new Error(parentRecipe.message);
    const underRecipe = { recipe: { snapshot: parentRecipe.snapshot, values: { target_directory: '/srv/project', include_tests: 'true' } } };
    const report = await planned({ source: 'test_report', parameters: { audience: 'reviewers' } }, underRecipe);
    expect(report.warnings).toContain(
      'sub-recipe test_report asks for sequential_when_repeated, which errand does not honour: several delegate calls in one turn run in parallel; make them in separate turns to run them one after another',
    );
    const stats = await planned({ source: 'file_stats' }, underRecipe);
    expect(stats.warnings.filter((warning) => warning.includes('sequential_when_repeated'))).toEqual([]);
  });
});

describe('goose retry and structured output in planning', () => {
  const releaseSchema = {
    type: 'object',
    required: ['risk', 'summary'],
    properties: { risk: { type: 'string', enum: ['low', 'medium', 'high'] }, summary: { type: 'string' }, failing_tests: { type: 'array', items: { type: 'string' } } },
  };

  test('a recipe retry becomes the typed retry policy, rendered with the parameters, goose defaults filled in', async () => {
    const result = await planned({ source: 'release-check', parameters: { package_dir: 'packages/core' } });
    expect(result.input.retry).toEqual({
      maxRetries: 3,
      checks: [
        { type: 'shell', command: 'npm test --prefix packages/core' },
        { type: 'shell', command: 'test -f packages/core/CHANGELOG.md' },
      ],
      onFailure: 'git checkout -- .',
      timeoutSeconds: 120,
      onFailureTimeoutSeconds: 60,
    });
    expect(result.input.outputSchema).toEqual(releaseSchema);
  });

  test('output_schema on the request: checked, it replaces the recipe schema with a note; an ad hoc delegation may have one', async () => {
    const own = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    const replaced = await planned({ source: 'release-check', output_schema: own });
    expect(replaced.input.outputSchema).toEqual(own);
    expect(replaced.warnings).toContain("output_schema of this delegation replaces the recipe's response.json_schema");
    expect((await planned({ instructions: 'Say if it builds', output_schema: own })).input.outputSchema).toEqual(own);
    expect((await planned({ instructions: 'No schema' })).input.outputSchema).toBeUndefined();
  });

  test('an invalid output_schema is an error naming the field and what is wrong', async () => {
    expect(await plan({ instructions: 'x', output_schema: { type: 'string' } })).toMatchObject({
      ok: false,
      message: 'output_schema.type: expected "object" (the structured result is the argument object of the final_output tool) (got "string")',
      failure: { field: 'output_schema', code: 'output-schema-invalid' },
    });
    const notSchema = await plan({ instructions: 'x', output_schema: { type: 'object', required: 'ok' } });
    expect(!notSchema.ok && notSchema.message).toBe('output_schema: not a valid JSON Schema: required: must be array');
    const badRef = await plan({ instructions: 'x', output_schema: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } });
    expect(!badRef.ok && badRef.message).toMatch(/^output_schema: the schema cannot be used: can't resolve reference #\/\$defs\/missing/);
    const unknownDraft = await plan({ instructions: 'x', output_schema: { $schema: 'https://example.com/my-draft', type: 'object' } });
    expect(!unknownDraft.ok && unknownDraft.message).toMatch(/^output_schema\.\$schema: "https:\/\/example\.com\/my-draft" is not a draft errand validates/);
  });
});

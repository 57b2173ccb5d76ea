import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import type { DelegationParent, PlanDelegationOutput } from '../../src/contracts/activities';
import type { DelegateRequest } from '../../src/contracts/delegation';
import { agentDefaultPrompt, planDelegation, type PlanContext } from '../../src/activities/plan-delegation';
import { planOutput } from '../../src/activities/orchestration-activities';
import { loadConfig } from '../../src/settings/config';
import { chooseMaxTurns, chooseModel } from '../../src/domain/model-precedence';
import { createResolverCache } from '../../src/worker/worker-dependencies';
import { testActivitySettings } from '../support/temporal';

/**
 * Planning a delegation (SEMANTICS §2-§3): every validation error, the modes, and each precedence step,
 * with real source stores in a temp project.
 */

let workingDir: string;
let context: PlanContext;

const providers = [
  { name: 'openai', models: ['gpt-a', 'gpt-b'], defaultModel: 'gpt-a' },
  { name: 'anthropic', models: ['claude-x', 'claude-y'], defaultModel: 'claude-x' },
];

function parent(overrides: Partial<DelegationParent> = {}): DelegationParent {
  return {
    workflowId: 'errand-plan',
    taskId: 'task-1',
    childDepth: 1,
    maxDepth: 1,
    workingDir,
    route: { provider: 'openai', model: 'gpt-b', temperature: 0.3 },
    toolsets: ['developer'],
    activity: testActivitySettings,
    ...overrides,
  };
}

async function plan(request: DelegateRequest, overrides: Partial<DelegationParent> = {}, contextOverrides: Partial<PlanContext> = {}): Promise<PlanDelegationOutput> {
  return planOutput(await planDelegation(request, parent(overrides), { ...context, ...contextOverrides }));
}

function expectError(result: PlanDelegationOutput, pattern: RegExp): void {
  expect(result.ok).toBe(false);
  if (!result.ok) expect(result.message).toMatch(pattern);
}

beforeAll(() => {
  workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-plan-')));
  mkdirSync(join(workingDir, '.goose', 'recipes'), { recursive: true });
  mkdirSync(join(workingDir, '.claude', 'agents'), { recursive: true });
  mkdirSync(join(workingDir, 'sub'));
  writeFileSync(join(workingDir, '.goose', 'recipes', 'deploy.yaml'), [
    'version: 1.0.0',
    'title: Deploy',
    'description: Deploy a service',
    'instructions: You deploy {{ service }} carefully.',
    'prompt: Deploy {{ service }} to {{ env }}.',
    'parameters:',
    '  - key: service',
    '    input_type: string',
    '    requirement: required',
    '    description: the service',
    '  - key: env',
    '    input_type: select',
    '    requirement: optional',
    '    default: staging',
    '    options: [staging, production]',
    '    description: where',
    'settings:',
    '  goose_model: gpt-b',
    '  temperature: 0.1',
    '  max_turns: 7',
    '',
  ].join('\n'));
  writeFileSync(join(workingDir, '.claude', 'agents', 'reviewer.md'), '---\nname: reviewer\ndescription: Reviews code\nmodel: sonnet\ntools: Read, Grep\n---\nYou review code carefully.\n');
  const outside = mkdtempSync(join(tmpdir(), 'errand-plan-outside-'));
  symlinkSync(outside, join(workingDir, 'escape'));
  const config = loadConfig({ ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-plan-data-')) });
  const resolverFor = createResolverCache({ ...config, sources: { ...config.sources, modelAliases: { sonnet: 'claude-x' } } }, mkdtempSync(join(tmpdir(), 'errand-plan-home-')));
  context = {
    resolver: resolverFor(workingDir),
    providers,
    configuredDefault: undefined,
    override: {},
    configuredMaxTurns: 25,
    availableToolsets: ['developer'],
    tasks: { maxBackgroundTasks: 5, waitTimeoutMs: 1_000, completedTaskTtlMs: 1_000 },
    approvalTimeoutMs: 60_000,
    mcp: { allowRecipeServers: false },
  };
});

describe('delegate validation: each problem is a clear error and starts nothing', () => {
  test('neither instructions nor source', async () => expectError(await plan({}), /give `instructions`, a `source`, or both/));
  test('parameters without source', async () => expectError(await plan({ instructions: 'x', parameters: { a: 1 } }), /`parameters` are only valid together with `source`/));
  test('unknown source, with suggestions by edit distance', async () => expectError(await plan({ source: 'dpeloy' }), /No source named "dpeloy".*Did you mean: deploy/));
  test('missing required parameter names the file and the parameter', async () => expectError(await plan({ source: 'deploy' }), /deploy\.yaml.*service/s));
  test('select value outside options', async () => expectError(await plan({ source: 'deploy', parameters: { service: 'api', env: 'moon' } }), /env.*(staging|production)/s));
  test('working_dir that does not exist', async () => expectError(await plan({ instructions: 'x', working_dir: 'nope' }), /working_dir "nope" does not exist/));
  test('working_dir outside the parent working directory (through a symlink)', async () => expectError(await plan({ instructions: 'x', working_dir: 'escape' }), /outside the working directory/));
  test('working_dir ..', async () => expectError(await plan({ instructions: 'x', working_dir: '..' }), /outside the working directory/));
  test('model not allowed', async () => expectError(await plan({ instructions: 'x', model: 'gpt-z' }), /model "gpt-z" is not allowed for provider "openai"; allowed: gpt-a, gpt-b/));
  test('provider not allowed', async () => expectError(await plan({ instructions: 'x', provider: 'mystery' }), /provider "mystery" is not allowed/));
  test('depth over the limit names both numbers', async () => expectError(await plan({ instructions: 'x' }, { childDepth: 2, maxDepth: 1 }), /depth 2 but the depth limit is 1/));
});

describe('delegate modes', () => {
  test('ad hoc: instructions become the prompt', async () => {
    const result = await plan({ instructions: 'Count the files', description: 'counter' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.input.prompt).toBe('Count the files');
    expect(result.input.label).toBe('counter');
    expect(result.input.source).toBeUndefined();
    expect(result.input.parent).toEqual({ workflowId: 'errand-plan', taskId: 'task-1' });
  });

  test('source: a recipe renders its instructions and prompt with parameters and defaults', async () => {
    const result = await plan({ source: 'deploy', parameters: { service: 'billing' } });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.input.system.instructions).toBe('You deploy billing carefully.');
    expect(result.input.prompt).toBe('Deploy billing to staging.');
    expect(result.input.source).toMatchObject({ kind: 'recipe', name: 'deploy', path: 'deploy.yaml' });
    expect(result.input.source?.version).toMatch(/^mtime:/);
    expect(result.input.recipe?.snapshot.content).toContain('title: Deploy');
  });

  test('combined: the source prompt is followed by the instructions', async () => {
    const result = await plan({ source: 'deploy', parameters: { service: 'billing', env: 'production' }, instructions: 'Then report the version.' });
    expect(result.ok && result.input.prompt).toBe('Deploy billing to production.\n\nThen report the version.');
  });

  test('an agent with no task gets the standard prompt; its tools become the allow-list', async () => {
    const result = await plan({ source: 'reviewer' });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.input.prompt).toBe(agentDefaultPrompt);
    expect(result.input.system.instructions).toContain('You review code carefully.');
    expect(result.input.toolFilter?.allow).toEqual(['developer__read_file', 'developer__search_text']);
  });

  test('context goes into the system prompt parts, apart from the task', async () => {
    const result = await plan({ instructions: 'Fix it', context: 'The bug is in parser.ts' });
    expect(result.ok && result.input.system.context).toBe('The bug is in parser.ts');
    expect(result.ok && result.input.prompt).toBe('Fix it');
  });

  test('working_dir inside is resolved to its real path', async () => {
    const result = await plan({ instructions: 'x', working_dir: 'sub' });
    expect(result.ok && result.input.workingDir).toBe(join(workingDir, 'sub'));
  });

  test('a directory whose name starts with ".." is inside, not an escape', async () => {
    mkdirSync(join(workingDir, '..cache'), { recursive: true });
    const result = await plan({ instructions: 'x', working_dir: '..cache' });
    expect(result.ok && result.input.workingDir).toBe(join(workingDir, '..cache'));
  });

  test('working_dir errors name what was asked, never a server path', async () => {
    for (const requested of ['escape', 'nope', '..']) {
      const result = await plan({ instructions: 'x', working_dir: requested });
      expect(result.ok).toBe(false);
      const message = result.ok ? '' : result.message;
      expect(message).toContain(`working_dir "${requested}"`);
      expect(message).not.toContain(workingDir);
      expect(message).not.toContain(tmpdir());
    }
  });
});

describe('extensions: inherit, none, subset', () => {
  test('omitted inherits the parent toolsets', async () => {
    const result = await plan({ instructions: 'x' });
    expect(result.ok && result.input.toolsets).toEqual(['developer']);
  });
  test('[] means none', async () => {
    const result = await plan({ instructions: 'x', extensions: [] });
    expect(result.ok && result.input.toolsets).toEqual([]);
  });
  test('an unavailable name is reported back, not only logged', async () => {
    const result = await plan({ instructions: 'x', extensions: ['developer', 'github'] });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.input.toolsets).toEqual(['developer']);
    expect(result.warnings.join('\n')).toMatch(/extensions "github" are not available/);
  });
});

describe('precedence (SEMANTICS §3)', () => {
  test('max_turns: delegate > delegated recipe > parent recipe > configured', async () => {
    const fromRecipe = await plan({ source: 'deploy', parameters: { service: 's' } });
    expect(fromRecipe.ok && fromRecipe.input.maxTurns).toBe(7);
    const fromDelegate = await plan({ source: 'deploy', parameters: { service: 's' }, max_turns: 3 });
    expect(fromDelegate.ok && fromDelegate.input.maxTurns).toBe(3);
    const fromConfig = await plan({ instructions: 'x' }, {}, { configuredMaxTurns: 11 });
    expect(fromConfig.ok && fromConfig.input.maxTurns).toBe(11);
    expect(chooseMaxTurns(undefined, undefined, 9, 25)).toBe(9);
    expect(chooseMaxTurns(undefined, undefined, undefined, 25)).toBe(25);
  });

  test("a delegate's max_turns may lower the operator's limit, never raise it", async () => {
    const lower = await plan({ instructions: 'x', max_turns: 10 }, {}, { configuredMaxTurns: 11 });
    expect(lower.ok && lower.input.maxTurns).toBe(10);
    const higher = await plan({ instructions: 'x', max_turns: 500 }, {}, { configuredMaxTurns: 11 });
    expect(higher).toMatchObject({
      ok: false,
      failure: { field: 'max_turns', code: 'max-turns-over-limit' },
      message: "max_turns 500 is above this server's limit of 11 turns per subagent (ERRAND_SUBAGENT_MAX_TURNS); ask for at most 11, or leave max_turns out.",
    });
  });

  test("a recipe's settings.max_turns may lower the operator's limit; above it, it is capped and the plan says so", async () => {
    const lower = await plan({ source: 'deploy', parameters: { service: 's' } }, {}, { configuredMaxTurns: 11 });
    expect(lower.ok && lower.input.maxTurns).toBe(7);
    expect(lower.ok && lower.warnings.some((warning) => warning.includes('max_turns'))).toBe(false);
    const capped = await plan({ source: 'deploy', parameters: { service: 's' } }, {}, { configuredMaxTurns: 3 });
    if (!capped.ok) throw new Error(capped.message);
    expect(capped.input.maxTurns).toBe(3);
    expect(capped.warnings).toContainEqual(expect.stringMatching(/deploy\.yaml: settings\.max_turns asks for 7 turns, above this server's limit of 3 \(ERRAND_SUBAGENT_MAX_TURNS\); it runs with 3\./));
  });

  test("a recipe's max_output_tokens and check time limits are capped at the operator's, with warnings", async () => {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), 'errand-plan-limits-')));
    mkdirSync(join(folder, '.goose', 'recipes'), { recursive: true });
    writeFileSync(join(folder, '.goose', 'recipes', 'greedy.yaml'), [
      'version: 1.0.0',
      'title: Greedy',
      'description: Asks for more',
      'prompt: Write a lot.',
      'settings:',
      '  max_output_tokens: 100000',
      'retry:',
      '  max_retries: 1',
      '  timeout_seconds: 7200',
      '  checks:',
      '    - type: shell',
      '      command: "true"',
      '',
    ].join('\n'));
    const resolver = createResolverCache(loadConfig({ ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-plan-limits-data-')) }), folder)(folder);
    const limited = await plan({ source: 'greedy' }, { workingDir: folder }, { resolver, configuredMaxOutputTokens: 8_192 });
    if (!limited.ok) throw new Error(limited.message);
    expect(limited.input.maxOutputTokens).toBe(8_192);
    expect(limited.input.retry?.timeoutSeconds).toBe(600);
    expect(limited.warnings).toContainEqual(expect.stringMatching(/greedy\.yaml: settings\.max_output_tokens asks for 100000 tokens, above this server's limit of 8192 \(ERRAND_MAX_OUTPUT_TOKENS\); it runs with 8192\./));
    expect(limited.warnings).toContainEqual(expect.stringMatching(/greedy\.yaml: retry\.timeout_seconds asks for 7200 seconds, above this server's limit of 600 \(the run_command time limit\)/));
    // A model entry's own limit is the operator's word for that model.
    const entry = await plan({ source: 'greedy' }, { workingDir: folder }, { resolver, configuredMaxOutputTokens: 8_192, providers: [{ ...providers[0]!, maxOutputTokens: { 'gpt-b': 32_000 } }] });
    expect(entry.ok && entry.input.maxOutputTokens).toBe(32_000);
    // A delegate's own max_output_tokens is the caller's, as before.
    const asked = await plan({ source: 'greedy', max_output_tokens: 50_000 }, { workingDir: folder }, { resolver, configuredMaxOutputTokens: 8_192 });
    expect(asked.ok && asked.input.maxOutputTokens).toBe(50_000);
  });

  test("a recipe's time_budget and cost_budget_usd: used, capped at the operator's with warnings, never above the parent's remainder", async () => {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), 'errand-plan-caps-')));
    mkdirSync(join(folder, '.goose', 'recipes'), { recursive: true });
    writeFileSync(join(folder, '.goose', 'recipes', 'capped.yaml'), ['version: 1.0.0', 'title: Capped', 'description: Has caps', 'prompt: Work.', 'settings:', '  time_budget: 7200', '  cost_budget_usd: 3', ''].join('\n'));
    const resolver = createResolverCache(loadConfig({ ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-plan-caps-data-')) }), folder)(folder);
    const priced = [{ ...providers[0]!, prices: { 'gpt-b': { input: 2, output: 8 } } }];
    const own = await plan({ source: 'capped' }, { workingDir: folder }, { resolver, providers: priced });
    if (!own.ok) throw new Error(own.message);
    expect(own.input).toMatchObject({ timeBudgetMs: 7_200_000, costBudgetMicroUsd: 3_000_000 });
    const capped = await plan({ source: 'capped' }, { workingDir: folder }, { resolver, providers: priced, caps: { timeBudgetMs: 3_600_000, costBudgetMicroUsd: 1_000_000 } });
    if (!capped.ok) throw new Error(capped.message);
    expect(capped.input).toMatchObject({ timeBudgetMs: 3_600_000, costBudgetMicroUsd: 1_000_000 });
    expect(capped.warnings).toContainEqual(expect.stringMatching(/capped\.yaml: settings\.time_budget asks for 7200 seconds, above this server's limit of 3600 \(ERRAND_MAX_TIME_BUDGET_SECS\); it runs with 3600\./));
    expect(capped.warnings).toContainEqual(expect.stringMatching(/capped\.yaml: settings\.cost_budget_usd asks for \$3\.00, above this server's limit of \$1\.00 \(ERRAND_MAX_COST_BUDGET_USD\); it runs with \$1\.00\./));
    const inherited = await plan({ source: 'capped' }, { workingDir: folder, remainingTimeMs: 5_000, remainingCostMicroUsd: 700 }, { resolver, providers: priced });
    expect(inherited.ok && inherited.input).toMatchObject({ timeBudgetMs: 5_000, costBudgetMicroUsd: 700 });
    // The same recipe on a model without prices cannot keep its cost cap.
    expectError(await plan({ source: 'capped' }, { workingDir: folder }, { resolver }), /^a cost cap \(its settings\.cost_budget_usd\) needs a model with prices, and openai\/gpt-b has none/);
  });

  test('model: operator override > delegate > recipe > agent > configured default > parent', async () => {
    const parentRoute = { provider: 'openai', model: 'gpt-b' };
    const base = { providers, override: {}, request: {}, recipe: {}, parent: parentRoute };
    expect(chooseModel({ ...base, override: { model: 'gpt-a' }, request: { model: 'gpt-b' } })).toMatchObject({ ok: true, route: { model: 'gpt-a' } });
    expect(chooseModel({ ...base, request: { model: 'gpt-a' }, recipe: { model: 'gpt-b' } })).toMatchObject({ ok: true, route: { model: 'gpt-a' } });
    expect(chooseModel({ ...base, recipe: { model: 'gpt-a' }, agentModel: 'gpt-b' })).toMatchObject({ ok: true, route: { model: 'gpt-a' } });
    expect(chooseModel({ ...base, parent: { provider: 'openai', model: 'gpt-a' }, agentModel: 'gpt-b' })).toMatchObject({ ok: true, route: { model: 'gpt-b' } });
    expect(chooseModel({ ...base, configuredDefault: { provider: 'anthropic', model: 'claude-y' } })).toMatchObject({ ok: true, route: { provider: 'anthropic', model: 'claude-y' } });
    expect(chooseModel(base)).toMatchObject({ ok: true, route: { provider: 'openai', model: 'gpt-b' } });
    // The operator's provider override wins over the delegate's provider.
    expect(chooseModel({ ...base, override: { provider: 'anthropic' }, request: { provider: 'openai' } })).toMatchObject({ ok: true, route: { provider: 'anthropic', model: 'claude-x' } });
  });

  test('a model given without a provider is used only if it belongs to the resolved provider', async () => {
    const result = chooseModel({ providers, override: {}, request: {}, recipe: { model: 'claude-x' }, parent: { provider: 'openai', model: 'gpt-b' } });
    expect(result).toMatchObject({ ok: true, route: { provider: 'openai', model: 'gpt-b' } });
    expect(result.ok && result.warnings.join()).toMatch(/claude-x.*not one of provider "openai"/);
  });

  test('the agent model maps through the alias table (sonnet → claude-x) within its provider', async () => {
    const result = await plan({ source: 'reviewer', provider: 'anthropic' });
    expect(result.ok && result.input.route).toMatchObject({ provider: 'anthropic', model: 'claude-x' });
  });

  test('no model resolvable names the setting to set', () => {
    const result = chooseModel({ providers: [{ name: 'empty', models: ['m'] }], override: {}, request: {}, recipe: {}, parent: { provider: 'other', model: 'x' } });
    expect(result).toMatchObject({ ok: false });
    expect(!result.ok && result.failure.message).toMatch(/ERRAND_DEFAULT_MODEL/);
  });

  test('temperature: delegate > recipe settings > inherited', async () => {
    const fromRecipe = await plan({ source: 'deploy', parameters: { service: 's' } });
    expect(fromRecipe.ok && fromRecipe.input.route.temperature).toBe(0.1);
    const fromDelegate = await plan({ source: 'deploy', parameters: { service: 's' }, temperature: 0.9 });
    expect(fromDelegate.ok && fromDelegate.input.route.temperature).toBe(0.9);
    const inherited = await plan({ instructions: 'x' });
    expect(inherited.ok && inherited.input.route.temperature).toBe(0.3);
  });
});

import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { planDelegation, type PlanContext } from '../../src/activities/plan-delegation';
import { planOutput } from '../../src/activities/orchestration-activities';
import { loadConfig } from '../../src/settings/config';
import type { DelegationParent, PlanDelegationOutput } from '../../src/contracts/activities';
import type { DelegateRequest } from '../../src/contracts/delegation';
import { createResolverCache } from '../../src/worker/worker-dependencies';
import { LocalBlobStore } from '../../src/activities/blob-store';
import { claudeAgentCorpus } from '../sources/claude-agent-corpus';
import { writeFiles } from '../sources/source-files';
import { testActivitySettings } from '../support/temporal';

/**
 * Planning runs Claude Code agent files as Claude Code runs them (SEMANTICS §6): `effort` is the route's
 * reasoning effort, `permissionMode` `manual` and `auto`, `mcp__<server>` names in `tools` and
 * `disallowedTools`, and an agent whose tool lists leave it nothing refuses to start. The agents sit in
 * subfolders of the project's `.claude/agents`, found by their names.
 */

let project: string;
let context: PlanContext;

function parent(overrides: Partial<DelegationParent> = {}): DelegationParent {
  return {
    workflowId: 'errand-plan-claude',
    taskId: 'task-1',
    childDepth: 1,
    maxDepth: 1,
    workingDir: project,
    route: { provider: 'openai', model: 'gpt-a', reasoningEffort: 'low' },
    toolsets: ['developer', 'github', 'docs'],
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

const agentFile = (name: string, fields: string[]) => ['---', `name: ${name}`, `description: The ${name} agent.`, ...fields, '---', `You are ${name}.`, ''].join('\n');

beforeAll(() => {
  project = realpathSync(mkdtempSync(join(tmpdir(), 'errand-plan-claude-')));
  writeFiles(join(project, '.claude', 'agents'), {
    ...claudeAgentCorpus,
    'misc/web-researcher.md': agentFile('web-researcher', ['tools: WebFetch, WebSearch']),
    'misc/no-docs.md': agentFile('no-docs', ['disallowedTools: mcp__docs__*']),
    'misc/thinker.md': agentFile('thinker', ['tools: []', 'effort: max']),
    'misc/locked-out.md': agentFile('locked-out', ['disallowedTools: developer, mcp__github, mcp__docs']),
    'misc/jira-filer.md': agentFile('jira-filer', ['tools: mcp__jira__*, Read', 'mcpServers:', '  - jira:', '      command: npx', '      args: [-y, jira-mcp-server]']),
  });
  // The skill the corpus's test-runner preloads (a project that uses such an agent has it).
  writeFiles(join(project, '.claude', 'skills'), { 'testing-conventions/SKILL.md': '---\nname: testing-conventions\n---\nTests use real parts.\n' });
  const config = loadConfig({ ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-plan-claude-data-')) });
  const memoryStore = new LocalBlobStore(join(config.dataDir, 'blobs'));
  const resolverFor = createResolverCache(config, mkdtempSync(join(tmpdir(), 'errand-plan-claude-home-')));
  context = {
    resolver: resolverFor(project),
    providers: [{ name: 'openai', models: ['gpt-a', 'gpt-b'], defaultModel: 'gpt-a', efforts: { 'gpt-a': { efforts: ['low', 'medium', 'high'], default: 'medium' } } }],
    configuredDefault: undefined,
    override: {},
    configuredMaxTurns: 50,
    availableToolsets: ['developer', 'github', 'docs'],
    tasks: { maxBackgroundTasks: 5, waitTimeoutMs: 1_000, completedTaskTtlMs: 1_000 },
    approvalTimeoutMs: 60_000,
    mcp: { allowRecipeServers: false },
    // The corpus's backend-architect keeps project memory.
    memoryStore,
  };
});

afterAll(() => {
  if (project) rmSync(project, { recursive: true, force: true });
});

describe('effort', () => {
  test("the agent's effort is the route's, below delegate's reasoning_effort and above the parent's", async () => {
    const reviewer = await planned({ source: 'code-reviewer' });
    expect(reviewer.input.route).toEqual({ provider: 'openai', model: 'gpt-a', reasoningEffort: 'high' });
    expect(reviewer.warnings.filter((warning) => warning.includes('effort'))).toEqual([]);
    expect((await planned({ source: 'code-reviewer', reasoning_effort: 'medium' })).input.route.reasoningEffort).toBe('medium');
    // test-runner (team/qa/) asks for low; the parent's route says low too, but its own is used either way.
    expect((await planned({ source: 'test-runner' }, { route: { provider: 'openai', model: 'gpt-a', reasoningEffort: 'high' } })).input.route.reasoningEffort).toBe('low');
  });

  test('an effort the model does not offer becomes the nearest it offers, with a warning for the calling model', async () => {
    const architect = await planned({ source: 'backend-architect' });
    expect(architect.input.route.reasoningEffort).toBe('high');
    expect(architect.warnings).toContain('the agent\'s effort "xhigh" is not one model openai/gpt-a takes (valid: low, medium (default), high); the nearest, "high", is used');
    // A model that takes no effort: none is sent, and the warning says why.
    const onB = await planned({ source: 'thinker', model: 'gpt-b' });
    expect(onB.input.route).toEqual({ provider: 'openai', model: 'gpt-b' });
    expect(onB.warnings).toContain('the agent\'s effort "max" cannot be used: model openai/gpt-b takes no reasoning effort; it was not used');
  });
});

describe('permissionMode manual and auto', () => {
  test('manual is the operator policy unchanged, approvals as the parent has them', async () => {
    const runner = await planned({ source: 'test-runner' }, { approvers: 'human-or-parent' });
    expect(runner.input.toolPolicy).toBeUndefined();
    expect(runner.input.approvers).toBe('human-or-parent');
  });

  test('auto: the operator policy, and what asks is decided by a person even where the parent model could decide', async () => {
    const architect = await planned({ source: 'backend-architect' }, { approvers: 'human-or-parent', toolPolicy: [{ rules: { developer__write_file: 'ask' } }] });
    expect(architect.input.approvers).toBe('human');
    expect(architect.input.toolPolicy).toEqual([{ rules: { developer__write_file: 'ask' } }]);
    expect((await planned({ source: 'backend-architect' })).input.approvers).toBe('human');
  });
});

describe('mcp__ names in tools and disallowedTools', () => {
  test('mcp__<server> and mcp__<server>__* select a server\'s tools next to Claude names', async () => {
    const architect = await planned({ source: 'backend-architect' });
    expect(architect.input.toolFilter).toEqual({ allow: ['developer__read_file', 'developer__write_file', 'github', 'docs'] });
    expect(architect.input.toolsets).toEqual(['developer', 'github', 'docs']);
    const triager = await planned({ source: 'issue-triager' });
    expect(triager.input.toolFilter).toEqual({ allow: ['github'] });
    expect(triager.input.toolsets).toEqual(['github']);
  });

  test('mcp__<server>__* in disallowedTools takes the whole server away, so the prompt does not list it', async () => {
    const result = await planned({ source: 'no-docs' });
    expect(result.input.toolFilter).toEqual({ deny: ['docs'] });
    expect(result.input.toolsets).toEqual(['developer', 'github']);
  });

  test('mcp__<server>__<tool> in disallowedTools removes that one tool', async () => {
    const runner = await planned({ source: 'test-runner' });
    expect(runner.input.toolFilter).toEqual({
      allow: ['developer__run_command', 'developer__read_file', 'developer__write_file'],
      deny: ['github__delete_repository'],
    });
    expect(runner.input.toolsets).toEqual(['developer']);
  });

  test("an agent's own inline server is named by the name the file gives it", async () => {
    // A project folder is one tenants can write: its servers start only where the operator trusts it.
    const allowed = await planned({ source: 'jira-filer' }, {}, { mcp: { allowRecipeServers: true, trustedRecipeDirs: [join(project, '.claude', 'agents')] } });
    const jira = allowed.input.recipeServers?.[0]?.config.name;
    expect(jira).toMatch(/^recipe-jira-[0-9a-f]{8}$/);
    expect(allowed.input.toolFilter).toEqual({ allow: [String(jira), 'developer__read_file'] });
    expect(allowed.input.toolsets).toEqual(['developer', jira]);
  });
});

describe('an agent left without tools', () => {
  test('refuses to start, naming tools and what was available', async () => {
    const refused = await plan({ source: 'web-researcher' });
    expect(refused).toMatchObject({
      ok: false,
      failure: { field: 'source', code: 'no-tools-left' },
      message:
        'project .claude/agents: misc/web-researcher.md: tools (WebFetch, WebSearch) leave this agent no tool, so it cannot start; available here: Read, Write, Edit, MultiEdit, Bash, Grep, Glob, LS (the developer tools); mcp__github; mcp__docs. Name tools from those in tools, remove entries from disallowedTools, or write tools: [] for an agent meant to run without tools.',
    });
  });

  test('refuses to start, naming disallowedTools when it takes everything away', async () => {
    const refused = await plan({ source: 'locked-out' });
    expect(!refused.ok && refused.message).toMatch(/^project \.claude\/agents: misc\/locked-out\.md: disallowedTools \(developer, mcp__github, mcp__docs\) leave this agent no tool, so it cannot start; available here: .*mcp__github; mcp__docs\./);
  });

  test("an inline server that the operator does not start is not counted as available; the agent's Read still is", async () => {
    const readOnly = await planned({ source: 'jira-filer' });
    expect(readOnly.input.toolsets).toEqual(['developer']);
    expect(readOnly.warnings).toContain('the agent\'s tools entry "mcp__jira__*" names an MCP server this delegation does not have; it was ignored');
    // With no developer tools either, nothing is left: refused.
    const refused = await plan({ source: 'jira-filer' }, { toolsets: ['github'] });
    expect(!refused.ok && refused.message).toMatch(/misc\/jira-filer\.md: tools \(mcp__jira__\*, Read\) leave this agent no tool, so it cannot start; available here: mcp__github\./);
  });

  test('tools: [] asks for no tools and runs; a parent with no tools to give is not the agent\'s doing', async () => {
    const thinker = await planned({ source: 'thinker' });
    expect(thinker.input.toolsets).toEqual([]);
    const bare = await planned({ source: 'web-researcher' }, { toolsets: [] });
    expect(bare.input.toolsets).toEqual([]);
  });
});

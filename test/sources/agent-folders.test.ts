import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { maxAgentFolderDepth } from '../../src/contracts/limits/sources';
import { DirectoryStore } from '../../src/sources/directory-store';
import { recipesCheckCommand, type RecipeCheckReport } from '../../src/sources/recipes-check-command';
import { SourceResolver } from '../../src/sources/source-resolver';
import { createSearchStores } from '../../src/sources/store-config';
import { claudeAgentCorpus } from './claude-agent-corpus';
import { agentText, recipeText, writeFiles } from './source-files';

/**
 * Agent folders as Claude Code reads them (SEMANTICS §6): scanned recursively, each agent named by its
 * `name` wherever it sits, two files of one name reported, symbolic links never followed by the walk.
 * And `errand recipes check` over a folder of real-shaped Claude Code agents:
 * and no field is reported as not supported.
 */

let base: string;
let work: string;
let home: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'errand-agent-folders-'));
  work = join(base, 'project');
  home = join(base, 'home');
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true });
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

function resolverFor(): SourceResolver {
  return new SourceResolver({ stores: createSearchStores({ workingDirectory: work, homeDirectory: home }), aliases: {} });
}

describe('agent folders', () => {
  it('are scanned recursively; an agent is found by its name wherever it sits', async () => {
    writeFiles(join(work, '.claude', 'agents'), claudeAgentCorpus);
    const resolver = resolverFor();
    const listing = await resolver.list();
    expect(listing.items.map((item) => item.name)).toEqual(['code-reviewer', 'backend-architect', 'issue-triager', 'test-runner']);
    const runner = await resolver.resolve('test-runner');
    expect(runner.ok && runner.snapshot.path).toBe('team/qa/test-runner.md');
    expect(runner.ok && runner.snapshot.definition.type === 'agent' && runner.snapshot.definition.agent).toMatchObject({
      name: 'test-runner',
      permissionMode: 'manual',
      effort: 'low',
      tools: ['Bash', 'Read', 'Edit'],
      disallowedTools: ['mcp__github__delete_repository'],
    });
    // The user's agent folders are agent folders too.
    writeFiles(join(home, '.claude', 'agents'), { 'ops/deployer.md': agentText('deployer', 'Deploys.') });
    expect((await resolverFor().resolve('deployer')).ok).toBe(true);
  });

  it('a subfolder holds agents only; the top level keeps its recipes; the project directory itself is not walked', async () => {
    writeFiles(work, {
      'docs/writer.md': agentText('writer', 'not an agent folder'),
      '.goose/recipes/nested/deep.yaml': recipeText('not listed: recipe folders are not walked'),
      '.claude/agents/top-recipe.yaml': recipeText('a recipe at the top of an agent folder'),
      '.claude/agents/team/sub-recipe.yaml': recipeText('a recipe in a subfolder is not an agent'),
      '.claude/agents/team/reviewer.md': agentText('reviewer', 'Reviews.'),
    });
    const listing = await resolverFor().list();
    expect(listing.items.map((item) => item.name)).toEqual(['top-recipe', 'reviewer']);
    expect(listing.problems).toEqual([]);
  });

  it('two files with one name: the first found (top level, then subfolders in path order) wins, the other is reported', async () => {
    writeFiles(join(work, '.claude', 'agents'), {
      'reviewer.md': agentText('reviewer', 'top-level reviewer'),
      'a-team/reviewer.md': agentText('reviewer', 'a-team reviewer'),
      'b-team/critic.md': agentText('reviewer', 'b-team file named critic.md but called reviewer'),
    });
    const resolver = resolverFor();
    const listing = await resolver.list();
    expect(listing.items).toEqual([{ name: 'reviewer', kind: 'agent', description: 'top-level reviewer', requiredParameters: [] }]);
    expect(listing.problems).toEqual([
      'project .claude/agents: a-team/reviewer.md: agent name "reviewer" is also the name of reviewer.md, which is used (the first found); rename one of them',
      'project .claude/agents: b-team/critic.md: agent name "reviewer" is also the name of reviewer.md, which is used (the first found); rename one of them',
    ]);
    const resolved = await resolver.resolve('reviewer');
    expect(resolved.ok && resolved.snapshot.path).toBe('reviewer.md');
    // A name used in another store is the search order at work (project before user), not a conflict.
    writeFiles(join(home, '.claude', 'agents'), { 'reviewer.md': agentText('reviewer', 'home reviewer') });
    expect((await resolverFor().list()).problems).toHaveLength(2);
  });

  it('the walk follows no symbolic link: linked folders and files below the top are skipped and reported', async () => {
    writeFiles(base, { 'outside/secret-agent.md': agentText('secret-agent', 'outside the folder'), 'outside/team/inner.md': agentText('inner', 'outside') });
    const agents = join(work, '.claude', 'agents');
    writeFiles(agents, { 'team/lead.md': agentText('lead', 'Leads.') });
    symlinkSync(join(base, 'outside'), join(agents, 'linked-folder'));
    symlinkSync(join(base, 'outside', 'secret-agent.md'), join(agents, 'team', 'linked.md'));
    // A link inside the folder to another place inside it is skipped by the walk all the same.
    symlinkSync(join(agents, 'team'), join(agents, 'team-again'));
    const listing = await resolverFor().list();
    expect(listing.items.map((item) => item.name)).toEqual(['lead']);
    expect(listing.problems).toEqual([
      'project .claude/agents: linked-folder: skipped: agent folders are scanned without following symbolic links',
      'project .claude/agents: team-again: skipped: agent folders are scanned without following symbolic links',
      'project .claude/agents: team/linked.md: skipped: agent folders are scanned without following symbolic links',
    ]);
  });

  it(`goes ${maxAgentFolderDepth} levels deep and reports a deeper folder`, async () => {
    const agents = join(base, 'agents');
    const deepest = Array.from({ length: maxAgentFolderDepth }, (_, index) => `d${index + 1}`).join('/');
    writeFiles(agents, {
      [`${deepest}/deep.md`]: agentText('deep', 'as deep as is scanned'),
      [`${deepest}/more/too-deep.md`]: agentText('too-deep', 'one level too deep'),
    });
    const listing = await new DirectoryStore(agents, { agentFolder: true }).list();
    expect(listing.entries.map((entry) => entry.path)).toEqual([`${deepest}/deep.md`]);
    expect(listing.problems).toEqual([`${agents}: ${deepest}/more: not scanned: agent folders are scanned ${maxAgentFolderDepth} levels deep`]);
    // A folder that is not an agent folder is not walked at all.
    expect((await new DirectoryStore(agents).list()).entries).toEqual([]);
  });
});

describe('errand recipes check over a folder of Claude Code agents', () => {
  it('warns about a second agent file with a name already used', async () => {
    const folder = join(base, 'agents');
    writeFiles(folder, { 'reviewer.md': agentText('reviewer', 'one'), 'team/reviewer-v2.md': agentText('reviewer', 'two') });
    let out = '';
    const code = await recipesCheckCommand([folder, '--json'], { stdout: (text) => (out += text), stderr: (text) => (out += text) });
    const reports = JSON.parse(out) as RecipeCheckReport[];
    expect(code).toBe(0);
    expect(reports.map((report) => report.warnings)).toEqual([
      [],
      [`${join(folder, 'team', 'reviewer-v2.md')}: name: "reviewer" is also the name of ${join(folder, 'reviewer.md')}; in one agent folder the first found is used and this one is not`],
    ]);
  });

  it('loads every file; no field is "not supported"; color is quiet', async () => {
    const folder = join(base, 'agents');
    writeFiles(folder, claudeAgentCorpus);
    let out = '';
    const code = await recipesCheckCommand([folder, '--json'], { stdout: (text) => (out += text), stderr: (text) => (out += text) });
    const reports = JSON.parse(out) as RecipeCheckReport[];
    expect(code).toBe(0);
    expect(reports.map((report) => [report.name, report.ok])).toEqual([
      ['code-reviewer', true],
      ['backend-architect', true],
      ['issue-triager', true],
      ['test-runner', true],
    ]);
    const unsupported = reports.flatMap((report) => report.warnings.filter((warning) => warning.includes('not supported')).map((warning) => `${report.name}: ${warning.split(': ')[1]}`));
    expect(unsupported).toEqual([]);
    const all = reports.flatMap((report) => report.warnings);
    expect(all.filter((warning) => /: (effort|permissionMode|color|tools|disallowedTools):/.test(warning))).toEqual([]);
    expect(all.filter((warning) => warning.includes('is also the name of'))).toEqual([]);
    expect(all.filter((warning) => warning.includes('initialPrompt'))).toEqual([
      `${join(folder, 'team', 'qa', 'test-runner.md')}: initialPrompt: Claude Code sends it only when the agent runs as the main session; a delegated agent starts, in Claude Code as in errand, from the task it is given`,
    ]);
  });
});

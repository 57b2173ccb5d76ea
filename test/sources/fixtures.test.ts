import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkCorpus, formatCorpusResult } from '../../src/sources/corpus-check';
import { DirectoryStore } from '../../src/sources/directory-store';
import { checkFile, collectFiles, recipesCheckCommand } from '../../src/sources/recipes-check-command';
import { renderSource } from '../../src/sources/render-source';
import { SourceResolver } from '../../src/sources/source-resolver';

/**
 * errand's own source fixtures (test/fixtures/sources): goose-format recipes and Claude Code agents,
 * valid and invalid, each checked for exactly what errand reports about it. The goose corpus itself is
 * checked by `npm run check:corpus` (src/sources/corpus-check.ts), not here, so a lone clone passes.
 */

const fixtures = resolve(__dirname, '..', 'fixtures', 'sources');

/** What checking each fixture must give: ok or not, and a part of each expected warning or error. */
const expected: Record<string, { ok: boolean; warnings?: string[]; errors?: string[] }> = {
  'agents/bypass.md': { ok: true },
  'agents/code-reviewer.md': { ok: true, warnings: ['model: alias "sonnet" has no mapping'] },
  'agents/docs-writer.md': { ok: true },
  'agents/editor.md': { ok: true },
  'agents/planner.md': {
    ok: true,
    warnings: [
      'initialPrompt: Claude Code sends it only when the agent runs as the main session',
    ],
  },
  'agents/release-notes.md': { ok: true, warnings: ['description: not valid YAML', 'model: alias "haiku" has no mapping'] },
  'agents/test-fixer.md': { ok: true, warnings: ['description: not valid YAML (Nested mappings are not allowed in compact mappings); read as plain text'] },
  'agents/unattended.md': { ok: true },
  'invalid/bad-isolation.md': { ok: false, errors: ['isolation: expected worktree (the only isolation there is) (got "container")'] },
  'invalid/bad-max-turns.md': { ok: false, errors: ['maxTurns: expected a whole number from 1 to 10000 (got "many")'] },
  'invalid/bad-parameter.yaml': { ok: false, errors: ['parameters[0] "who": optional parameters need a default value'] },
  'invalid/bad-permission-mode.md': { ok: false, errors: ['permissionMode: expected one of default, manual, auto, plan, acceptEdits, dontAsk, bypassPermissions (got "yolo")'] },
  'invalid/bad-response.yaml': { ok: false, errors: ['response.json_schema.type: expected "object"'] },
  'invalid/bad-retry.yaml': { ok: false, errors: ['retry.checks[0].type: expected shell (the only check type goose knows) (got "http")'] },
  'invalid/no-name.md': { ok: false, errors: ['name: is required'] },
  'recipes/deploy-service.yaml': { ok: true },
  'recipes/desktop-saved.yaml': { ok: true, warnings: ['colour: unknown field, ignored'] },
  'recipes/joke-of-the-day.json': { ok: true },
  'recipes/project-analyzer/project-analyzer.yaml': { ok: true },
  'recipes/project-analyzer/subrecipes/file-stats.yaml': { ok: true },
  'recipes/project-analyzer/subrecipes/test-report.yaml': { ok: true },
  'recipes/release-check.yaml': { ok: true },
  'recipes/trip-planner/steps/activities.yaml': { ok: true },
  'recipes/trip-planner/steps/weather.yaml': { ok: true },
  'recipes/trip-planner/trip-planner.yaml': { ok: true },
};

const scratch: string[] = [];
afterAll(() => {
  for (const folder of scratch) rmSync(folder, { recursive: true, force: true });
});

describe('errand source fixtures', () => {
  it('lists every fixture file in the expectations (and nothing else)', async () => {
    const files = (await collectFiles(fixtures)).map((file) => relative(fixtures, file));
    expect(files.sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(Object.entries(expected))('%s', async (name, expectation) => {
    const report = await checkFile(join(fixtures, name));
    expect(report.ok, JSON.stringify(report)).toBe(expectation.ok);
    for (const warning of expectation.warnings ?? []) expect(report.warnings.some((line) => line.includes(warning)), `${warning}\n${report.warnings.join('\n')}`).toBe(true);
    for (const error of expectation.errors ?? []) expect(report.errors.some((line) => line.includes(error)), `${error}\n${report.errors.join('\n')}`).toBe(true);
    if (expectation.ok) expect(report.errors).toEqual([]);
    // Every warning and error names the file.
    for (const line of [...report.warnings, ...report.errors]) expect(line).toContain(name);
    // A file with nothing to report has no warnings: cosmetic keys (color) pass quietly.
    if (expectation.ok && !expectation.warnings) expect(report.warnings).toEqual([]);
  });

  it('errand recipes check over the folder fails for the invalid files only', async () => {
    let out = '';
    const io = { stdout: (text: string) => (out += text), stderr: (text: string) => (out += text) };
    expect(await recipesCheckCommand([fixtures], io)).toBe(1);
    expect(out).toContain(`${Object.keys(expected).length} file(s) checked, ${Object.values(expected).filter((entry) => !entry.ok).length} failed`);
    out = '';
    expect(await recipesCheckCommand([join(fixtures, 'recipes'), join(fixtures, 'agents')], io)).toBe(0);
    expect(out).not.toContain('FAIL');
  });

  it('reads non-strict frontmatter key by key: the description keeps its examples, the next field is its own', async () => {
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(join(fixtures, 'agents')) }], aliases: { haiku: 'claude-haiku-4-5' } });
    const notes = await resolver.resolve('release-notes');
    expect(notes.ok).toBe(true);
    if (!notes.ok || notes.snapshot.definition.type !== 'agent') return;
    const agent = notes.snapshot.definition.agent;
    expect(agent.description).toBe(
      'Drafts release notes from the commits since the last tag. Use it before a release: it reads the history, groups the changes and writes notes for users, not for developers.\n' +
        'Examples: <example> Context: a release is due. user: "write the notes for 2.3" assistant: "I\'ll use the release-notes agent." </example>',
    );
    expect(agent).toMatchObject({ model: 'claude-haiku-4-5', maxTurns: 8, instructions: expect.stringContaining('You write release notes.') });
    const fixer = await resolver.resolve('test-fixer');
    expect(fixer.ok && fixer.snapshot.definition.type === 'agent' && fixer.snapshot.definition.agent).toMatchObject({
      description: expect.stringMatching(/^Use this agent when tests fail .* Examples: <example>Context: the user changed the parser .*<\/example>$/),
      tools: ['Read', 'Edit', 'Bash'],
      inheritModel: true,
    });
    // The resolver hands the warnings on, for the delegating model's notes.
    expect(fixer.ok && fixer.warnings.join('\n')).toContain('description: not valid YAML');
  });

  it('reads every Claude Code field of the planner agent', async () => {
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(join(fixtures, 'agents')) }], aliases: {} });
    const planner = await resolver.resolve('planner');
    expect(planner.ok).toBe(true);
    if (!planner.ok || planner.snapshot.definition.type !== 'agent') return;
    expect(planner.snapshot.definition.agent).toEqual({
      name: 'planner',
      description: 'Plans a change: reads the code and writes a step-by-step plan, changing nothing.',
      model: 'claude-opus-4-5',
      inheritModel: false,
      tools: ['Read', 'Grep', 'Glob', 'Bash'],
      disallowedTools: ['Bash'],
      maxTurns: 15,
      permissionMode: 'plan',
      effort: 'high',
      mcpServerNames: ['github'],
      mcpServers: [
        { type: 'stdio', name: 'jira', cmd: 'npx', args: ['-y', 'jira-mcp-server'], envs: { JIRA_SITE: 'acme.example.com' }, env_keys: ['JIRA_TOKEN'] },
        { type: 'streamable_http', name: 'docs', uri: 'https://mcp.example.com/docs', headers: { 'X-Team': 'platform' } },
      ],
      background: true,
      isolation: 'worktree',
      memory: 'project',
      skills: ['api-conventions'],
      hooks: { preToolUse: [{ matcher: 'Bash', hooks: [{ command: './check.sh', timeoutSeconds: 60 }] }] },
      instructions: 'You plan changes. Read what you need, then write a numbered plan with the files each step touches.',
    });
  });

  it('resolves and renders sub-recipes, their fixed values rendered from the parent values and winning', async () => {
    const folder = join(fixtures, 'recipes', 'project-analyzer');
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(folder) }], aliases: {} });
    const parent = await resolver.resolve('project-analyzer');
    expect(parent.ok).toBe(true);
    if (!parent.ok) return;
    const session = { sessionRecipe: parent.snapshot, sessionValues: { target_directory: '/srv/project', include_tests: 'false' } };
    const listing = await resolver.list(session);
    expect(listing.problems).toEqual([]);
    expect(listing.items.filter((item) => item.kind === 'subrecipe')).toEqual([
      { name: 'file_stats', kind: 'subrecipe', description: 'Counts files and lines by language.', requiredParameters: [] },
      { name: 'test_report', kind: 'subrecipe', description: 'Says which tests exist under a folder and how they are run.', requiredParameters: ['audience'] },
    ]);
    const report = await resolver.resolve('test_report', session);
    expect(report.ok).toBe(true);
    if (!report.ok) return;
    expect(report.snapshot).toMatchObject({ kind: 'subrecipe', fixedValues: { directory: '/srv/project', fast_mode: 'true' }, subRecipe: { parent: 'project-analyzer', sequentialWhenRepeated: true } });
    const rendered = await renderSource(report.snapshot, { directory: '/elsewhere', audience: 'new developers' }, { workingDirectory: folder });
    expect(rendered).toMatchObject({
      ok: true,
      values: { directory: '/srv/project', fast_mode: 'true', audience: 'new developers' },
      instructions: 'Find the tests under /srv/project (do not run them) and say how they are run, for new developers.',
    });
  });

  it('resolves {{ recipe_dir }} sub-recipe paths', async () => {
    const folder = join(fixtures, 'recipes', 'trip-planner');
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(folder) }], aliases: {} });
    const parent = await resolver.resolve('trip-planner');
    expect(parent.ok).toBe(true);
    if (!parent.ok) return;
    const session = { sessionRecipe: parent.snapshot, sessionValues: { destination: 'Lisbon', days: '3' } };
    const listing = await resolver.list(session);
    expect(listing.problems).toEqual([]);
    expect(listing.items.filter((item) => item.kind === 'subrecipe').map((item) => item.name)).toEqual(['weather', 'activities']);
    const weather = await resolver.resolve('weather', session);
    expect(weather.ok && weather.snapshot.fixedValues).toEqual({ place: 'Lisbon' });
  });

  it('reads the desktop-saved form and typed extensions', async () => {
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(join(fixtures, 'recipes')) }], aliases: {} });
    const saved = await resolver.resolve('desktop-saved');
    expect(saved.ok).toBe(true);
    if (!saved.ok || saved.snapshot.definition.type !== 'recipe') return;
    const recipe = saved.snapshot.definition.recipe;
    expect(recipe.version).toBe('1.0');
    expect(recipe.extensions?.map((extension) => extension.type)).toEqual(['stdio', 'streamable_http', 'frontend', 'inline_python', 'platform']);
    expect(recipe.extensions?.[0]).toMatchObject({ name: 'fetch', cmd: 'uvx', args: ['mcp-server-fetch'], envs: { FETCH_TIMEOUT: '30' }, env_keys: ['HTTPS_PROXY'], timeout: 60 });
  });
});

describe('npm run check:corpus (checkCorpus)', () => {
  function corpus(): string {
    const folder = mkdtempSync(join(tmpdir(), 'errand-corpus-'));
    scratch.push(folder);
    cpSync(join(fixtures, 'recipes'), join(folder, 'recipes'), { recursive: true });
    cpSync(join(fixtures, 'agents'), join(folder, 'agents'), { recursive: true });
    writeFileSync(join(folder, 'README.md'), '# A corpus\n\nNot an agent file: skipped.\n');
    return folder;
  }

  it('passes when every file loads and every listed refusal fails', async () => {
    const folder = corpus();
    cpSync(join(fixtures, 'invalid', 'bad-parameter.yaml'), join(folder, 'recipes', 'bad-parameter.yaml'));
    const result = await checkCorpus(folder, { 'recipes/bad-parameter.yaml': 'the original tool wants a default' });
    expect(result.ok).toBe(true);
    expect(result.files.find((entry) => entry.file === 'recipes/bad-parameter.yaml')?.outcome).toBe('refused-as-expected');
    expect(result.files.some((entry) => entry.file === 'README.md')).toBe(false);
    expect(formatCorpusResult(folder, result)).toBe(`corpus ${folder}: 19 file(s): 18 load, 1 refused as the original tool refuses them, 0 problem(s)\n`);
  });

  it('fails, naming the files, when an accepted file does not load or the refusal list is stale', async () => {
    const folder = corpus();
    cpSync(join(fixtures, 'invalid', 'bad-retry.yaml'), join(folder, 'recipes', 'bad-retry.yaml'));
    const result = await checkCorpus(folder, { 'recipes/joke-of-the-day.json': 'listed by mistake', 'recipes/gone.yaml': 'deleted since' });
    expect(result.ok).toBe(false);
    const text = formatCorpusResult(folder, result);
    expect(text).toContain('FAIL recipes/bad-retry.yaml: the original tool accepts it, errand does not');
    expect(text).toContain('retry.checks[0].type: expected shell');
    expect(text).toContain('FAIL recipes/joke-of-the-day.json: loads, but it is listed as refused by the original tool (listed by mistake); update the list');
    expect(text).toContain('FAIL recipes/gone.yaml: listed as refused by the original tool, but not in the corpus; update the list');
    expect(text).toContain('3 problem(s)');
  });

  it('fails on a folder with no recipe or agent files', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'errand-corpus-empty-'));
    scratch.push(empty);
    const result = await checkCorpus(empty, {});
    expect(result.ok).toBe(false);
    expect(formatCorpusResult(empty, result)).toContain(`no recipe or agent files found under ${empty}`);
  });
});

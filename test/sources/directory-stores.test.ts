import { mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { maxSourceFileBytes } from '../../src/contracts/limits/sources';
import { DirectoryStore } from '../../src/sources/directory-store';
import { renderSource } from '../../src/sources/render-source';
import { SourceResolver } from '../../src/sources/source-resolver';
import { createSearchStores } from '../../src/sources/store-config';
import { agentText, recipeText, writeFiles } from './source-files';

let base: string;
let work: string;
let home: string;

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'errand-sources-'));
  work = join(base, 'project');
  home = join(base, 'home');
  mkdirSync(work, { recursive: true });
  mkdirSync(home, { recursive: true });
});

describe('discovery order', () => {
  it('searches configured, ERRAND_RECIPE_PATH, project then user folders; first name wins, and the hidden ones are reported', async () => {
    writeFiles(work, {
      'deploy.yaml': recipeText('deploy from the working directory'),
      'package.json': '{"name": "not a recipe"}',
      'notes.md': '# not an agent (the working directory holds recipes only)',
      '.goose/recipes/deploy.yaml': recipeText('deploy from .goose/recipes'),
      '.goose/recipes/lint.yaml': recipeText('lint from .goose/recipes'),
      '.claude/agents/reviewer.md': agentText('reviewer', 'project reviewer'),
    });
    writeFiles(base, {
      'configured/lint.yaml': recipeText('lint from configured'),
      'configured/build.yaml': recipeText('build from configured'),
      'env-path/build.yaml': recipeText('build from ERRAND_RECIPE_PATH'),
      'env-path/test.yaml': recipeText('test from ERRAND_RECIPE_PATH'),
    });
    writeFiles(home, {
      '.goose/recipes/test.yaml': recipeText('test from home'),
      '.goose/recipes/home-only.yaml': recipeText('home only'),
      '.claude/agents/reviewer.md': agentText('reviewer', 'home reviewer'),
      '.claude/agents/writer.md': agentText('writer', 'home writer'),
    });
    const stores = createSearchStores({
      workingDirectory: work,
      configured: [{ type: 'directory', path: join(base, 'configured') }],
      recipePath: join(base, 'env-path'),
      homeDirectory: home,
    });
    const resolver = new SourceResolver({ stores, aliases: {} });
    const listing = await resolver.list();
    const described = Object.fromEntries(listing.items.map((item) => [item.name, item.description]));
    expect(described).toEqual({
      deploy: 'deploy from the working directory',
      lint: 'lint from configured',
      reviewer: 'project reviewer',
      build: 'build from configured',
      test: 'test from ERRAND_RECIPE_PATH',
      'home-only': 'home only',
      writer: 'home writer',
    });
    // package.json in the working directory is not a recipe and is skipped silently.
    expect(listing.problems).toEqual([]);
    expect(listing.searched).toHaveLength(2 + 5 + 1 + 1 + 5 - 1);
    expect(listing.searched.slice(0, 3)).toEqual(['configured store 1 (directory configured)', 'ERRAND_RECIPE_PATH folder 1 (env-path)', 'working directory']);
    expect(listing.shadowed).toEqual([
      'ERRAND_RECIPE_PATH folder 1 (env-path): build.yaml ("build") is hidden by configured store 1 (directory configured): build.yaml — the first store in search order wins',
      'project .goose/recipes: deploy.yaml ("deploy") is hidden by working directory: deploy.yaml — the first store in search order wins',
      "project .goose/recipes: lint.yaml (\"lint\") is hidden by configured store 1 (directory configured): lint.yaml — the operator's stores win over project folders",
      'user ~/.goose/recipes: test.yaml ("test") is hidden by ERRAND_RECIPE_PATH folder 1 (env-path): test.yaml — the first store in search order wins',
      'user ~/.claude/agents: reviewer.md ("reviewer") is hidden by project .claude/agents: reviewer.md — project folders win over user-level folders',
    ]);
    const resolved = await resolver.resolve('test');
    expect(resolved.ok && resolved.snapshot.store.description).toBe('ERRAND_RECIPE_PATH folder 1 (env-path)');
    const lint = await resolver.resolve('lint');
    expect(lint.ok && lint.shadowing).toContain("the operator's stores win over project folders");
    // No listing text names a folder of this machine.
    expect(JSON.stringify(listing)).not.toContain(base);
  });

  it('reports invalid files in a store (not in the working directory) without failing the listing', async () => {
    writeFiles(work, { '.goose/recipes/broken.yaml': 'title: [unclosed', '.goose/recipes/good.yaml': recipeText('good') });
    const resolver = new SourceResolver({ stores: createSearchStores({ workingDirectory: work, homeDirectory: home }), aliases: {} });
    const listing = await resolver.list();
    expect(listing.items.map((item) => item.name)).toEqual(['good']);
    expect(listing.problems).toHaveLength(1);
    expect(listing.problems[0]).toContain('broken.yaml');
  });

  it('says which places were searched when nothing is found', async () => {
    const resolver = new SourceResolver({ stores: createSearchStores({ workingDirectory: work, homeDirectory: home }), aliases: {} });
    const text = await resolver.listingText();
    expect(text).toContain('No recipes, subrecipes or agents were found. Searched:');
    expect(text).toContain('- project .claude/agents');
    expect(text).toContain('- user ~/.goose/recipes');
  });
});

describe('listing cache', () => {
  it('serves the cached listing for 60 s and lists again after, or on a discovery call', async () => {
    const folder = join(base, 'store');
    writeFiles(folder, { 'one.yaml': recipeText('one') });
    let clock = 1_000_000;
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(folder) }], aliases: {}, now: () => clock });
    expect((await resolver.list()).items.map((item) => item.name)).toEqual(['one']);
    writeFiles(folder, { 'two.yaml': recipeText('two') });
    clock += 59_000;
    expect((await resolver.list()).items.map((item) => item.name)).toEqual(['one']);
    expect((await resolver.list({ refresh: true })).items.map((item) => item.name)).toEqual(['one', 'two']);
    writeFiles(folder, { 'three.yaml': recipeText('three') });
    clock += 60_000;
    expect((await resolver.list()).items.map((item) => item.name)).toEqual(['one', 'three', 'two']);
  });

  it('re-reads a file whose modification time changed', async () => {
    const folder = join(base, 'store');
    writeFiles(folder, { 'one.yaml': recipeText('first') });
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(folder) }], aliases: {} });
    expect((await resolver.list()).items[0]?.description).toBe('first');
    writeFiles(folder, { 'one.yaml': recipeText('second') });
    utimesSync(join(folder, 'one.yaml'), new Date(), new Date(Date.now() + 5000));
    expect((await resolver.list({ refresh: true })).items[0]?.description).toBe('second');
  });
});

describe('limits', () => {
  it('refuses files over 1 MiB and symlinks that leave the store, with clear messages', async () => {
    const folder = join(base, 'store');
    writeFiles(folder, { 'ok.yaml': recipeText('ok'), 'inside-target.yaml': recipeText('inside') });
    writeFiles(base, { 'outside/secret.yaml': recipeText('secret') });
    writeFileSync(join(folder, 'huge.yaml'), recipeText('huge', `activities:\n  - "${'x'.repeat(maxSourceFileBytes)}"\n`));
    symlinkSync(join(base, 'outside/secret.yaml'), join(folder, 'escape.yaml'));
    symlinkSync(join(folder, 'inside-target.yaml'), join(folder, 'alias.yaml'));
    const store = new DirectoryStore(folder);
    const listing = await store.list();
    expect(listing.entries.map((entry) => entry.path).sort()).toEqual(['alias.yaml', 'inside-target.yaml', 'ok.yaml']);
    expect(listing.problems).toHaveLength(2);
    expect(listing.problems.find((problem) => problem.includes('huge.yaml'))).toMatch(/refused: file is 1\.0 MiB, over the 1\.0 MiB limit/);
    expect(listing.problems.find((problem) => problem.includes('escape.yaml'))).toMatch(/refused: symlink leaves the store/);
    await expect(store.read('escape.yaml')).rejects.toThrow(/symlink leaves the store/);
    await expect(store.read('../outside/secret.yaml')).rejects.toThrow(/outside the store/);
  });
});

describe('stores under the working directory', () => {
  it('are read without following any link: a linked folder is refused, a linked file skipped, sub-paths walked', async () => {
    writeFiles(work, {
      '.goose/recipes/own.yaml': recipeText('own recipe'),
      '.goose/recipes/lib/inner.yaml': recipeText('inner recipe'),
      '.goose/recipes/alias-target.yaml': recipeText('alias target'),
    });
    writeFiles(base, { 'other/.claude/agents/private.md': agentText('private', 'private agent'), 'other/secret.yaml': recipeText('secret') });
    mkdirSync(join(work, '.claude'), { recursive: true });
    symlinkSync(join(base, 'other/.claude/agents'), join(work, '.claude/agents'));
    symlinkSync(join(work, '.goose/recipes/alias-target.yaml'), join(work, '.goose/recipes/alias.yaml'));
    symlinkSync(join(base, 'other'), join(work, '.goose/recipes/linked'));
    const stores = createSearchStores({ workingDirectory: work, homeDirectory: home, workingRoot: base });
    const recipes = stores.find((entry) => entry.store.describe() === 'project .goose/recipes')?.store;
    const agents = stores.find((entry) => entry.store.describe() === 'project .claude/agents')?.store;
    const recipeListing = await recipes?.list();
    // Even a link that stays inside the store is not followed here; the listing says so.
    expect(recipeListing?.entries.map((entry) => entry.path)).toEqual(['alias-target.yaml', 'own.yaml']);
    expect(recipeListing?.problems).toEqual(['project .goose/recipes: alias.yaml: skipped: a symbolic link, and links are not followed in folders under the working directory']);
    expect((await recipes?.read('lib/inner.yaml'))?.content).toContain('inner recipe');
    await expect(recipes?.read('linked/secret.yaml')).rejects.toThrow(/refused: linked is a symbolic link/);
    await expect(recipes?.read('alias.yaml')).rejects.toThrow(/refused: alias\.yaml is a symbolic link/);
    const agentListing = await agents?.list();
    expect(agentListing?.entries).toEqual([]);
    expect(agentListing?.problems).toEqual(['project .claude/agents: refused: the store folder is a symbolic link (or became one); links are not followed in folders under the working directory']);
    // No server path in any message.
    expect(JSON.stringify([recipeListing, agentListing])).not.toContain(base);
  });
});

describe('resolution', () => {
  it('suggests close names for unknown ones (dpeloy finds deploy)', async () => {
    const folder = join(base, 'store');
    writeFiles(folder, { 'deploy.yaml': recipeText('deploy'), 'review.yaml': recipeText('review') });
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(folder) }], aliases: {} });
    const result = await resolver.resolve('dpeloy');
    expect(result).toEqual({
      ok: false,
      reason: 'not_found',
      suggestions: ['deploy'],
      message: 'No source named "dpeloy" was found. Did you mean: deploy? Call load() with no source to list what is available.',
    });
  });

  it('snapshots a recipe as JSON and renders it with values, defaults and file parameters', async () => {
    const folder = join(base, 'store');
    writeFiles(folder, {
      'deploy.yaml': [
        'version: 1.0.0',
        'title: Deploy',
        'description: Deploy a service',
        'instructions: |',
        '  Deploy {{ service }} to {{ env }} from {{ recipe_dir }}.',
        '  Notes:',
        '    {{ notes | indent(4) }}',
        'prompt: Go{% if dry == "true" %} (dry run){% endif %}.',
        'parameters:',
        '  - {key: service, input_type: string, requirement: required, description: Service}',
        '  - {key: env, input_type: select, requirement: optional, default: dev, options: [dev, prod]}',
        '  - {key: dry, input_type: boolean, requirement: optional, default: "false"}',
        '  - {key: notes, input_type: file, requirement: required}',
        '',
      ].join('\n'),
    });
    writeFiles(work, { 'notes.txt': 'line one\nline two' });
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(folder) }], aliases: {} });
    const resolved = await resolver.resolve('deploy');
    expect(resolved.ok).toBe(true);
    if (!resolved.ok) return;
    const snapshot = resolved.snapshot;
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    expect(snapshot).toMatchObject({ kind: 'recipe', name: 'deploy', path: 'deploy.yaml', recipeDir: folder, store: { id: `dir:${folder}` } });
    expect(snapshot.version).toMatch(/^mtime:/);
    expect(snapshot.contentHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const rendered = await renderSource(snapshot, { service: 'api', dry: true, notes: 'notes.txt' }, { workingDirectory: work });
    expect(rendered).toMatchObject({
      ok: true,
      instructions: `Deploy api to dev from ${folder}.\nNotes:\n  line one\n  line two\n`,
      prompt: 'Go (dry run).',
    });
    const invalid = await renderSource(snapshot, { env: 'staging', notes: 'missing.txt' }, { workingDirectory: work });
    expect(invalid.ok).toBe(false);
    if (!invalid.ok) {
      expect(invalid.errors).toEqual([
        `${folder}: deploy.yaml: parameter "service" (string) is required: Service`,
        `${folder}: deploy.yaml: parameter "env": "staging" is not one of the options: dev, prod`,
      ]);
    }
    const missingFile = await renderSource(snapshot, { service: 'api', notes: 'missing.txt' }, { workingDirectory: work });
    expect(!missingFile.ok && missingFile.errors[0]).toMatch(/parameter "notes" \(file\): cannot read .*missing\.txt/);
  });
});

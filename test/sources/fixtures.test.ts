import { readdirSync } from 'node:fs';
import path, { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkFile } from '../../src/sources/recipes-check-command';
import { DirectoryStore } from '../../src/sources/directory-store';
import { SourceResolver } from '../../src/sources/source-resolver';
import { renderSource } from '../../src/sources/render-source';

const fixtures = path.resolve(__dirname, '../../../shared/fixtures/goose');

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = join(folder, entry.name);
    if (entry.isDirectory()) return filesUnder(full);
    return /\.(ya?ml|json|md)$/.test(entry.name) ? [full] : [];
  });
}

/** Fixtures goose itself rejects, with the reason; every other fixture must pass. */
const rejectedByGoose: Record<string, string> = {
  // goose: "Optional parameters missing default values in the recipe: push_pr".
  'recipes/documentation/src/pages/recipes/data/recipes/pull-request-generator.yaml': 'optional parameter push_pr has no default',
  // Old website catalogue entries: `extensions` is a list of strings and `author` a string; goose's
  // serde model wants extension objects and an author map, so it fails to deserialize them.
  'recipes/historical/documentation/src/pages/recipes/data/recipes/joke-of-the-day.json': 'extensions are strings, author is a string',
  'recipes/historical/documentation/src/pages/recipes/data/recipes/pull-request-generator.json': 'extensions are strings, author is a string',
};

const files = [...filesUnder(join(fixtures, 'recipes')), ...filesUnder(join(fixtures, 'agents'))];

describe('goose fixtures', () => {
  it('finds the fixture files', () => {
    expect(files.length).toBeGreaterThan(90);
  });

  it.each(files.map((file) => [relative(fixtures, file), file]))('%s', async (name, file) => {
    const report = await checkFile(file);
    const reason = rejectedByGoose[name];
    if (reason === undefined) {
      expect(report.errors).toEqual([]);
      expect(report.ok).toBe(true);
    } else {
      expect(report.ok).toBe(false);
      expect(report.errors.length).toBeGreaterThan(0);
    }
  });

  it('resolves and renders the sub-recipes of a fixture recipe, fixed values winning', async () => {
    const folder = join(fixtures, 'recipes/scripts/test-subrecipes-examples');
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(folder) }], aliases: {} });
    const parent = await resolver.resolve('project_analyzer');
    expect(parent.ok).toBe(true);
    if (!parent.ok) return;
    const declared = parent.snapshot.definition.type === 'recipe' ? parent.snapshot.definition.recipe.sub_recipes ?? [] : [];
    expect(declared.length).toBeGreaterThan(0);
    for (const subRecipe of declared) {
      const resolved = await resolver.resolve(subRecipe.name, { sessionRecipe: parent.snapshot, sessionValues: { target_directory: '/srv/project', include_tests: 'false' } });
      expect(resolved.ok, JSON.stringify(resolved)).toBe(true);
      if (!resolved.ok) continue;
      expect(resolved.snapshot.kind).toBe('subrecipe');
      expect(resolved.snapshot.fixedValues).toMatchObject({ directory: '/srv/project', fast_mode: 'true' });
      const given = Object.fromEntries(resolved.snapshot.parameters.map((parameter) => [parameter.key, 'from-model']));
      const rendered = await renderSource(resolved.snapshot, given, { workingDirectory: folder });
      expect(rendered.ok, JSON.stringify(rendered)).toBe(true);
      if (rendered.ok) expect(rendered.values).toMatchObject({ directory: '/srv/project', fast_mode: 'true' });
    }
  });

  it('resolves {{ recipe_dir }} sub-recipe paths (historical travel planner)', async () => {
    const folder = join(fixtures, 'recipes/historical/scripts/test-subrecipes-examples');
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(folder) }], aliases: {} });
    const parent = await resolver.resolve('travel_planner');
    expect(parent.ok).toBe(true);
    if (!parent.ok) return;
    const listing = await resolver.list({ sessionRecipe: parent.snapshot });
    expect(listing.problems).toEqual([]);
    expect(listing.items.filter((item) => item.kind === 'subrecipe').map((item) => item.name).sort()).toEqual(['activity_suggestions', 'weather_data'].sort());
  });

  it('maps the sonnet alias of the summon test agent through the alias table', async () => {
    const resolver = new SourceResolver({ stores: [{ store: new DirectoryStore(join(fixtures, 'agents')) }], aliases: { sonnet: 'claude-sonnet-4-5' } });
    const reviewer = await resolver.resolve('reviewer');
    expect(reviewer.ok && reviewer.snapshot.definition.type === 'agent' && reviewer.snapshot.definition.agent.model).toBe('claude-sonnet-4-5');
    expect(resolve(fixtures)).toBe(fixtures);
  });
});

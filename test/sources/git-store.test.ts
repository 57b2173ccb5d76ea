import { mkdtempSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GitStore } from '../../src/sources/git-store';
import { SourceResolver } from '../../src/sources/source-resolver';
import { createGitRepository } from '../support/git-repo';
import { recipeText } from './source-files';

describe('git-synced store', () => {
  it('clones, sees a pushed change on sync, and stays stale-but-serving when the remote is gone', async () => {
    const repository = createGitRepository({ 'recipes/deploy.yaml': recipeText('deploy v1'), 'README.md': 'not in the subfolder' });
    const cacheDirectory = mkdtempSync(join(tmpdir(), 'errand-git-cache-'));
    let clock = 5_000_000;
    const store = new GitStore({ url: repository.url, ref: 'main', subfolder: 'recipes', cacheDirectory, now: () => clock });
    const resolver = new SourceResolver({ stores: [{ store }], aliases: {}, now: () => clock });

    const first = await resolver.resolve('deploy');
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    const firstSha = store.commit;
    expect(firstSha).toMatch(/^[0-9a-f]{40}$/);
    expect(first.snapshot.version).toBe(firstSha);
    expect(first.snapshot.store.id).toBe(`git:${repository.url}#main:recipes`);

    const secondSha = repository.commitAndPush({ 'recipes/deploy.yaml': recipeText('deploy v2'), 'recipes/lint.yaml': recipeText('lint') }, 'change deploy');
    // Within the cache lifetime the old listing is served; a discovery call syncs at once.
    clock += 1_000;
    expect((await resolver.list()).items.map((item) => item.description)).toEqual(['deploy v1']);
    const refreshed = await resolver.list({ refresh: true });
    expect(refreshed.items.map((item) => `${item.name}: ${item.description}`)).toEqual(['deploy: deploy v2', 'lint: lint']);
    expect(store.commit).toBe(secondSha);
    const second = await resolver.resolve('deploy');
    expect(second.ok && second.snapshot.version).toBe(secondSha);

    renameSync(repository.barePath, `${repository.barePath}.gone`);
    const stale = await resolver.list({ refresh: true });
    expect(stale.items.map((item) => item.name)).toEqual(['deploy', 'lint']);
    expect(stale.stores[0]).toMatchObject({ stale: true });
    expect(stale.stores[0]?.error).toMatch(/git fetch failed/);
    expect(stale.problems[0]).toMatch(/git fetch failed.*showing the listing from before the failure/s);
    const stillResolves = await resolver.resolve('deploy');
    expect(stillResolves.ok).toBe(true);

    renameSync(`${repository.barePath}.gone`, repository.barePath);
    const recovered = await resolver.list({ refresh: true });
    expect(recovered.stores[0]).toMatchObject({ stale: false });
    expect(recovered.stores[0]?.error).toBeUndefined();
  });

  it('reports an unreachable repository on the first listing, with no sources', async () => {
    const cacheDirectory = mkdtempSync(join(tmpdir(), 'errand-git-cache-'));
    const store = new GitStore({ url: `file://${join(cacheDirectory, 'does-not-exist.git')}`, ref: 'main', cacheDirectory });
    const resolver = new SourceResolver({ stores: [{ store }], aliases: {} });
    const listing = await resolver.list();
    expect(listing.items).toEqual([]);
    expect(listing.stores[0]).toMatchObject({ stale: false });
    expect(listing.problems[0]).toMatch(/^git file:.* @ main: git fetch failed/);
  });

  it('overlapping syncs share one git run, and two stores on one cache folder (two workers) never collide', async () => {
    const repository = createGitRepository({ 'recipes/deploy.yaml': recipeText('deploy v1') });
    const cacheDirectory = mkdtempSync(join(tmpdir(), 'errand-git-cache-'));
    const options = { url: repository.url, ref: 'main', subfolder: 'recipes', cacheDirectory };
    const store = new GitStore(options);
    // Five delegations planned at once in one worker: one sync.
    const shas = await Promise.all(Array.from({ length: 5 }, () => store.sync()));
    expect(new Set(shas).size).toBe(1);
    // Two workers sharing the cache volume sync the same checkout at the same time, again and again.
    const other = new GitStore(options);
    repository.commitAndPush({ 'recipes/deploy.yaml': recipeText('deploy v2') }, 'v2');
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, index) => (index % 2 === 0 ? store : other).sync()));
    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    const listing = await new SourceResolver({ stores: [{ store: other }], aliases: {} }).list({ refresh: true });
    expect(listing.items.map((item) => item.description)).toEqual(['deploy v2']);
    expect(listing.problems).toEqual([]);
  });
});

import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryStore } from '../../src/sources/directory-store';
import { S3Store } from '../../src/sources/s3-store';
import { SourceCatalog } from '../../src/sources/source-catalog';
import { SourceResolver } from '../../src/sources/source-resolver';
import { SharedSources } from '../../src/sources/shared-sources';
import { createGitRepository } from '../support/git-repo';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { recipeText, writeFiles } from './source-files';

/**
 * The sources of a long-lived worker: the operator's stores are built once and shared by every working
 * directory, per-directory resolvers are bounded, and a failed read is not remembered.
 */

let s3: S3TestServer;

beforeAll(async () => {
  s3 = await startS3Server();
}, 60_000);

afterAll(async () => {
  await s3?.stop();
});

/** Puts a `git` first on PATH that logs each call's arguments to a file, then runs the real git. */
function countGitCalls(): { fetches(): number; restore(): void } {
  const folder = mkdtempSync(join(tmpdir(), 'errand-git-shim-'));
  const log = join(folder, 'calls.log');
  writeFileSync(log, '');
  const realGit = (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'git')).find((candidate) => {
    try {
      readFileSync(candidate);
      return true;
    } catch {
      return false;
    }
  });
  if (!realGit) throw new Error('git is not on PATH');
  writeFileSync(join(folder, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${realGit}' "$@"\n`);
  chmodSync(join(folder, 'git'), 0o755);
  const previous = process.env.PATH;
  process.env.PATH = `${folder}${delimiter}${previous ?? ''}`;
  return {
    fetches: () => readFileSync(log, 'utf8').split('\n').filter((line) => line.startsWith('fetch ')).length,
    restore: () => {
      process.env.PATH = previous;
    },
  };
}

describe('shared stores', () => {
  it('fetches a configured git store once for many working directories, each with its own project folders', async () => {
    const repository = createGitRepository({ 'recipes/deploy.yaml': recipeText('deploy from git') });
    const base = mkdtempSync(join(tmpdir(), 'errand-shared-'));
    const git = countGitCalls();
    try {
      const sources = new SharedSources({
        configured: [{ type: 'git', url: repository.url, ref: 'main', subfolder: 'recipes', cacheDirectory: join(base, 'git-cache') }],
        workingRoot: join(base, 'work'),
        homeDirectory: join(base, 'home'),
        aliases: {},
      });
      const directories = Array.from({ length: 6 }, (_, index) => join(base, 'work', `tenant-${index}`));
      for (const [index, directory] of directories.entries()) writeFiles(directory, { [`.goose/recipes/own-${index}.yaml`]: recipeText(`own ${index}`) });
      // Planned at once in six working directories, then again one by one.
      const first = await Promise.all(directories.map((directory) => sources.resolverFor(directory).resolve('deploy')));
      for (const [index, directory] of directories.entries()) {
        const resolver = sources.resolverFor(directory);
        expect((await resolver.resolve(`own-${index}`)).ok).toBe(true);
        // Another directory's project recipe is not this one's.
        expect((await resolver.resolve(`own-${(index + 1) % directories.length}`)).ok).toBe(false);
      }
      const versions = first.map((result) => (result.ok ? result.snapshot.version : 'not found'));
      expect(new Set(versions).size).toBe(1);
      expect(versions[0]).toMatch(/^[0-9a-f]{40}$/);
      expect(git.fetches()).toBe(1);
    } finally {
      git.restore();
    }
  });

  it('keeps at most the configured number of working directories, least recently used dropped first', async () => {
    const base = mkdtempSync(join(tmpdir(), 'errand-lru-'));
    writeFiles(base, { 'operator/shared.yaml': recipeText('shared') });
    const sources = new SharedSources({ configured: [{ type: 'directory', path: 'operator' }], workingRoot: base, homeDirectory: join(base, 'home'), aliases: {}, maxDirectories: 3 });
    const directory = (index: number) => join(base, `dir-${index}`);
    for (let index = 0; index < 5; index += 1) mkdirSync(directory(index), { recursive: true });
    const kept = [0, 1, 2].map((index) => sources.resolverFor(directory(index)));
    // dir-0 is used again, so dir-1 is the least recently used when dir-3 and dir-4 come.
    expect(sources.resolverFor(directory(0))).toBe(kept[0]);
    sources.resolverFor(directory(3));
    sources.resolverFor(directory(4));
    expect(sources.cachedDirectories).toBe(3);
    expect(sources.resolverFor(directory(0))).toBe(kept[0]);
    expect(sources.resolverFor(directory(1))).not.toBe(kept[1]);
    expect(sources.cachedDirectories).toBe(3);
    // Relative configured folders start at the working root, for every working directory.
    for (let index = 0; index < 5; index += 1) expect((await sources.resolverFor(directory(index)).resolve('shared')).ok).toBe(true);
    expect(sources.cachedDirectories).toBe(3);
  });
});

describe('failed reads are not cached', () => {
  it('an S3 read that failed once is read again at the next listing; removed files leave the cache', async () => {
    const client = new S3Client({ endpoint: s3.endpoint, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
    await client.send(new CreateBucketCommand({ Bucket: 'errand-flaky' }));
    await client.send(new PutObjectCommand({ Bucket: 'errand-flaky', Key: 'team/deploy.yaml', Body: recipeText('deploy') }));
    await client.send(new PutObjectCommand({ Bucket: 'errand-flaky', Key: 'team/lint.yaml', Body: recipeText('lint') }));
    // A real HTTP hop in front of SeaweedFS that refuses object reads while `failing` is set (an outage
    // of the object path that listings did not see).
    let failing = true;
    const target = new URL(s3.endpoint);
    const proxy: Server = createServer((incoming, outgoing) => {
      const isRead = incoming.method === 'GET' && /\/errand-flaky\/team\/deploy\.yaml/.test(incoming.url ?? '');
      if (failing && isRead) {
        outgoing.writeHead(403, { 'content-type': 'application/xml' });
        outgoing.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>');
        return;
      }
      const forwarded = httpRequest({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      incoming.pipe(forwarded);
    });
    await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
    const address = proxy.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const store = new S3Store({ bucket: 'errand-flaky', prefix: 'team', endpoint: `http://127.0.0.1:${port}`, region: s3.region, forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
      const catalog = new SourceCatalog([{ store }], { aliases: {} });
      const resolver = new SourceResolver({ catalogs: [catalog], aliases: {} });
      const broken = await resolver.list({ refresh: true });
      expect(broken.items.map((item) => item.name)).toEqual(['lint']);
      expect(broken.problems).toEqual([expect.stringContaining('reading deploy.yaml failed: AccessDenied')]);
      failing = false;
      // Same object, same ETag: the failure was the read's, not the file's, so it is read again, by the
      // next lookup already (not after the listing's 60 s).
      expect((await resolver.resolve('deploy')).ok).toBe(true);
      const recovered = await resolver.list();
      expect(recovered.items.map((item) => item.name)).toEqual(['deploy', 'lint']);
      expect(recovered.problems).toEqual([]);
      expect(catalog.cachedParses).toBe(2);
    } finally {
      await new Promise<void>((done) => proxy.close(() => done()));
      client.destroy();
    }
  });

  it('drops the parses of files that are no longer listed, and of old versions', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'errand-parses-'));
    writeFiles(folder, { 'one.yaml': recipeText('one'), 'two.yaml': recipeText('two') });
    const catalog = new SourceCatalog([{ store: new DirectoryStore(folder) }], { aliases: {} });
    await catalog.list({ refresh: true });
    expect(catalog.cachedParses).toBe(2);
    rmSync(join(folder, 'two.yaml'));
    for (let version = 0; version < 5; version += 1) {
      writeFileSync(join(folder, 'one.yaml'), recipeText(`one v${version}`));
      // A version per write (an mtime), even when the writes fall in one millisecond.
      utimesSync(join(folder, 'one.yaml'), 1_000_000 + version, 1_000_000 + version);
      const listing = await catalog.list({ refresh: true });
      expect(listing.sources.map((source) => source.description)).toEqual([`one v${version}`]);
    }
    expect(catalog.cachedParses).toBe(1);
  });
});

import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxSourceFileBytes } from '../../src/contracts/limits/sources';
import { S3Store } from '../../src/sources/s3-store';
import { SourceResolver } from '../../src/sources/source-resolver';
import { startS3Server, type S3TestServer } from '../support/s3-server';
import { agentText, recipeText } from './source-files';

let server: S3TestServer;
let client: S3Client;

beforeAll(async () => {
  server = await startS3Server();
  console.info(`SeaweedFS S3 answered after ${server.startupMs} ms (log: ${server.logPath})`);
  client = new S3Client({ endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } });
});

afterAll(async () => {
  client?.destroy();
  await server?.stop();
});

function storeFor(bucket: string, prefix: string, endpoint = server.endpoint): S3Store {
  return new S3Store({ bucket, prefix, endpoint, region: server.region, forcePathStyle: true, credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey } });
}

async function put(bucket: string, key: string, body: string): Promise<void> {
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}

describe('S3 store', () => {
  it('lists a prefix, resolves with the ETag as version, revalidates, and refuses big files', async () => {
    await client.send(new CreateBucketCommand({ Bucket: 'errand-sources' }));
    await put('errand-sources', 'team/deploy.yaml', recipeText('deploy v1'));
    await put('errand-sources', 'team/reviewer.md', agentText('reviewer', 'reviews'));
    await put('errand-sources', 'team/nested/ignored.yaml', recipeText('nested'));
    await put('errand-sources', 'other/outside.yaml', recipeText('outside'));
    await put('errand-sources', 'team/huge.yaml', recipeText('huge', `activities:\n  - "${'x'.repeat(maxSourceFileBytes)}"\n`));
    let clock = 1_000;
    const store = storeFor('errand-sources', 'team');
    const resolver = new SourceResolver({ stores: [{ store }], aliases: {}, now: () => clock });
    const listing = await resolver.list();
    expect(listing.items.map((item) => `${item.kind} ${item.name}`)).toEqual(['recipe deploy', 'agent reviewer']);
    expect(listing.problems).toEqual([expect.stringMatching(/^S3 s3:\/\/errand-sources\/team\/: huge\.yaml: refused: file is 1\.0 MiB/)]);
    const resolved = await resolver.resolve('deploy');
    expect(resolved.ok).toBe(true);
    if (!resolved.ok) return;
    expect(resolved.snapshot.version).toMatch(/^[0-9a-f]{32}$/);
    expect(resolved.snapshot.recipeDir).toBe('s3://errand-sources/team');
    // Unchanged object: the conditional GET answers 304 and the cached content is used.
    expect(await store.read('deploy.yaml')).toEqual({ content: recipeText('deploy v1'), version: resolved.snapshot.version });
    await put('errand-sources', 'team/deploy.yaml', recipeText('deploy v2'));
    clock += 61_000;
    const changed = await resolver.resolve('deploy');
    expect(changed.ok && changed.snapshot.definition.type === 'recipe' && changed.snapshot.definition.recipe.description).toBe('deploy v2');
    expect(changed.ok && changed.snapshot.version).not.toBe(resolved.snapshot.version);
  });

  it('pages past 1000 keys', async () => {
    await client.send(new CreateBucketCommand({ Bucket: 'errand-many' }));
    const keys = Array.from({ length: 1005 }, (_, index) => `many/a-${String(index).padStart(4, '0')}.txt`);
    for (let start = 0; start < keys.length; start += 50) {
      await Promise.all(keys.slice(start, start + 50).map((key) => put('errand-many', key, 'filler')));
    }
    await put('errand-many', 'many/zz-deploy.yaml', recipeText('after the first page'));
    const resolver = new SourceResolver({ stores: [{ store: storeFor('errand-many', 'many/') }], aliases: {} });
    const listing = await resolver.list();
    expect(listing.items.map((item) => item.name)).toEqual(['zz-deploy']);
    expect(listing.problems).toEqual([]);
  });

  it('keeps serving the last good listing, marked stale, when the server is down', async () => {
    const stale = await startS3Server();
    try {
      const staleClient = new S3Client({ endpoint: stale.endpoint, region: stale.region, forcePathStyle: true, credentials: { accessKeyId: stale.accessKeyId, secretAccessKey: stale.secretAccessKey } });
      await staleClient.send(new CreateBucketCommand({ Bucket: 'errand-stale' }));
      await staleClient.send(new PutObjectCommand({ Bucket: 'errand-stale', Key: 'p/deploy.yaml', Body: recipeText('deploy') }));
      staleClient.destroy();
      const store = new S3Store({ bucket: 'errand-stale', prefix: 'p', endpoint: stale.endpoint, region: stale.region, forcePathStyle: true, credentials: { accessKeyId: stale.accessKeyId, secretAccessKey: stale.secretAccessKey } });
      const resolver = new SourceResolver({ stores: [{ store }], aliases: {} });
      expect((await resolver.list()).items.map((item) => item.name)).toEqual(['deploy']);
      await stale.stop();
      const listing = await resolver.list({ refresh: true });
      expect(listing.items.map((item) => item.name)).toEqual(['deploy']);
      expect(listing.stores[0]).toMatchObject({ stale: true });
      expect(listing.stores[0]?.error).toMatch(/^S3 s3:\/\/errand-stale\/p\/: listing failed: /);
      const resolved = await resolver.resolve('deploy');
      expect(resolved.ok).toBe(true);
    } finally {
      await stale.stop();
    }
  });
});

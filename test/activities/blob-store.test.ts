import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  BlobConflictError,
  isBlobConflictError,
  isBlobKeyError,
  LocalBlobStore,
  validateBlobKey,
  type BlobStore,
} from '../../src/activities/blob-store';
import { AgentMemory, isAgentMemoryConflict } from '../../src/activities/agent-memory';
import { S3BlobStore } from '../../src/activities/s3-blob-store';
import { s3ConditionalWriteRetryMs } from '../../src/contracts/limits/activities';
import { startS3Server, type S3TestServer } from '../support/s3-server';

/** Behaviour every BlobStore implementation must have. */
function blobStoreContract(makeStore: () => BlobStore): void {
  it('stores and reads back, and answers undefined for a missing key', async () => {
    const store = makeStore();
    await store.put('a/b/c.json', '{"x":1}');
    expect(await store.get('a/b/c.json')).toBe('{"x":1}');
    expect(await store.get('a/b/missing.json')).toBeUndefined();
    expect(await store.get('a/b')).toBeUndefined();
  });

  it('treats a retried put of the same body as a no-op', async () => {
    const store = makeStore();
    await store.put('retry/key', 'same body — ünïcode');
    await store.put('retry/key', 'same body — ünïcode');
    expect(await store.get('retry/key')).toBe('same body — ünïcode');
  });

  it('refuses a put of a different body with a typed error', async () => {
    const store = makeStore();
    await store.put('immutable/key', 'first');
    const error: unknown = await store.put('immutable/key', 'second').catch((caught: unknown) => caught);
    expect(isBlobConflictError(error)).toBe(true);
    expect(error).toBeInstanceOf(BlobConflictError);
    expect(String(error)).toContain('blob "immutable/key" already exists with a different body');
    expect(await store.get('immutable/key')).toBe('first');
  });

  it('resolves racing puts of one key: same body all succeed, different bodies exactly one wins', async () => {
    const store = makeStore();
    await Promise.all(Array.from({ length: 8 }, () => store.put('race/same', 'body')));
    expect(await store.get('race/same')).toBe('body');
    const outcomes = await Promise.allSettled(Array.from({ length: 8 }, (_, index) => store.put('race/different', `body ${index}`)));
    const winners = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(winners).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(isBlobConflictError(outcome.reason)).toBe(true);
    }
    const stored = await store.get('race/different');
    expect(stored).toMatch(/^body \d$/);
  });

  it('lists keys by string prefix, sorted', async () => {
    const store = makeStore();
    for (const key of ['list/b/2', 'list/a/1', 'list/ab', 'list/b/1', 'other/x']) await store.put(key, key);
    expect(await store.list('list/')).toEqual(['list/a/1', 'list/ab', 'list/b/1', 'list/b/2']);
    expect(await store.list('list/a')).toEqual(['list/a/1', 'list/ab']);
    expect(await store.list('list/b/')).toEqual(['list/b/1', 'list/b/2']);
    expect(await store.list('nothing/')).toEqual([]);
  });

  it('deletes an entry (its key is gone from gets and lists); deleting a missing key is no error', async () => {
    const store = makeStore();
    for (const key of ['gone/a/1', 'gone/a/2', 'gone/b']) await store.put(key, key);
    await store.delete('gone/a/1');
    expect(await store.get('gone/a/1')).toBeUndefined();
    expect(await store.list('gone/')).toEqual(['gone/a/2', 'gone/b']);
    await store.delete('gone/a/1');
    await store.delete('gone/never');
    await expect(store.delete('../escape')).rejects.toThrow(/is invalid/);
  });

  it('keeps only the last revisions of an agent memory file, and an edit based on a pruned revision is a conflict', async () => {
    const store = makeStore();
    const memory = new AgentMemory(store, { tenant: 'acme', scope: 'user', agent: 'pruner' }, { revisionsKept: 3 });
    for (let revision = 1; revision <= 6; revision += 1) await memory.write('MEMORY.md', `revision ${revision}`);
    const folder = 'agent-memory/acme/user/pruner/f/MEMORY.md/';
    expect(await store.list(folder)).toEqual([4, 5, 6].map((revision) => `${folder}@000000000${revision}`));
    expect(await memory.readRevision('MEMORY.md')).toEqual({ revision: 6, content: 'revision 6' });
    // An edit made from revision 2 (pruned since) must not land behind the latest as revision 3.
    await expect(memory.write('MEMORY.md', 'made from revision 2', { basedOn: 2 })).rejects.toSatisfy(isAgentMemoryConflict);
    expect(await store.list(folder)).toHaveLength(3);
    await memory.write('MEMORY.md', 'made from revision 6', { basedOn: 6 });
    expect(await store.list(folder)).toEqual([5, 6, 7].map((revision) => `${folder}@000000000${revision}`));
    expect(await memory.read('MEMORY.md')).toBe('made from revision 6');
  });

  it('validates keys with a clear error', async () => {
    const store = makeStore();
    for (const key of ['', '/abs', 'a/../b', '..', 'a//b', 'a/', 'a/.hidden', 'sp ace', 'x'.repeat(513), 'a/ü']) {
      const error: unknown = await store.put(key, 'x').catch((caught: unknown) => caught);
      expect(isBlobKeyError(error), JSON.stringify(key)).toBe(true);
      expect(String(error)).toContain('Valid keys are "/"-separated segments');
    }
    await expect(store.get('../escape')).rejects.toThrow(/blob key "..\/escape" is invalid: it has a ".." segment/);
    await expect(store.list('../')).rejects.toThrow(/is invalid/);
  });
}

describe('LocalBlobStore', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'errand-blobs-'));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  blobStoreContract(() => new LocalBlobStore(root));

  it('never shows a partial file and leaves no temp files behind', async () => {
    const store = new LocalBlobStore(root);
    const body = 'x'.repeat(4 * 1024 * 1024);
    let partialSeen = false;
    let reading = true;
    const reader = (async () => {
      while (reading) {
        const seen = await store.get('big/blob');
        if (seen !== undefined && seen.length !== body.length) partialSeen = true;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await Promise.all(Array.from({ length: 4 }, () => store.put('big/blob', body)));
    reading = false;
    await reader;
    expect(partialSeen).toBe(false);
    expect(await readdir(path.join(root, 'big'))).toEqual(['blob']);
  });

  it('ignores temp files of puts in progress when listing', async () => {
    const store = new LocalBlobStore(root);
    await store.put('dir/real', 'x');
    await writeFile(path.join(root, 'dir', '.tmp-real-abc'), 'partial');
    expect(await store.list('dir/')).toEqual(['dir/real']);
  });

  it('accepts the documented key characters', () => {
    expect(() => validateBlobKey('outcomes/answers/errand-ab_c+2f=1@x/0000000001.json')).not.toThrow();
  });
});

describe('S3BlobStore (SeaweedFS)', () => {
  let server: S3TestServer;
  let client: S3Client;
  let bucketCount = 0;
  let bucket: string;

  beforeAll(async () => {
    server = await startS3Server();
    client = new S3Client({
      endpoint: server.endpoint,
      region: server.region,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
      forcePathStyle: true,
    });
  });
  afterAll(async () => {
    client?.destroy();
    await server?.stop();
  });
  beforeEach(async () => {
    bucketCount += 1;
    bucket = `errand-blobs-${bucketCount}`;
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  });

  const makeStore = (): BlobStore =>
    new S3BlobStore({
      bucket,
      prefix: 'tenant-a/blobs',
      endpoint: server.endpoint,
      region: server.region,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
      forcePathStyle: true,
    });

  blobStoreContract(makeStore);

  it('keeps its prefix: keys of another prefix in the same bucket are not listed', async () => {
    const store = makeStore();
    const other = new S3BlobStore({
      bucket,
      prefix: 'tenant-b/',
      endpoint: server.endpoint,
      region: server.region,
      credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
      forcePathStyle: true,
    });
    await store.put('k/1', 'a');
    await other.put('k/1', 'b');
    expect(await store.list('k/')).toEqual(['k/1']);
    expect(await store.get('k/1')).toBe('a');
    expect(await other.get('k/1')).toBe('b');
  });

  it('after a 501 to a conditional put, retries without the header, and uses it again after the retry window', async () => {
    // A real HTTP proxy in front of the S3 server that answers the first conditional PUT with 501, as a
    // proxy or a server mid-upgrade might; everything else is forwarded unchanged (signatures stay valid).
    const puts: { conditional: boolean; status: number }[] = [];
    let refuseNext = true;
    const target = new URL(server.endpoint);
    const proxy: Server = createServer((incoming, outgoing) => {
      const conditional = incoming.headers['if-none-match'] !== undefined;
      if (incoming.method === 'PUT' && conditional && refuseNext) {
        refuseNext = false;
        puts.push({ conditional, status: 501 });
        incoming.resume();
        outgoing.writeHead(501, { 'content-type': 'application/xml' });
        outgoing.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>A header you provided implies functionality that is not implemented</Message></Error>');
        return;
      }
      const forwarded = httpRequest({ hostname: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
        if (incoming.method === 'PUT') puts.push({ conditional, status: answer.statusCode ?? 0 });
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolveListen) => proxy.listen(0, '127.0.0.1', () => resolveListen()));
    try {
      let clock = 1_000;
      const store = new S3BlobStore(
        {
          bucket,
          prefix: 'proxied',
          endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
          region: server.region,
          credentials: { accessKeyId: server.accessKeyId, secretAccessKey: server.secretAccessKey },
          forcePathStyle: true,
        },
        undefined,
        () => clock,
      );
      await store.put('a', 'first');
      await store.put('b', 'second');
      clock += s3ConditionalWriteRetryMs + 1;
      await store.put('c', 'third');
      expect(puts).toEqual([
        { conditional: true, status: 501 },
        { conditional: false, status: 200 },
        { conditional: false, status: 200 },
        { conditional: true, status: 200 },
      ]);
      expect([await store.get('a'), await store.get('b'), await store.get('c')]).toEqual(['first', 'second', 'third']);
      await expect(store.put('a', 'another body')).rejects.toSatisfy(isBlobConflictError);
    } finally {
      await new Promise<void>((resolveClose) => proxy.close(() => resolveClose()));
    }
  });
});

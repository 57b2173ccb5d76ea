import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalBlobStore, type BlobStore } from '../../src/activities/blob-store';
import {
  ConversationStore,
  conversationSegment,
  isConversationMessageConflictError,
  isConversationMessageMissingError,
} from '../../src/activities/conversation-store';
import type { ChatMessage } from '../../src/contracts/model';

/** A BlobStore that counts calls, wrapped around the real local store. */
class CountingBlobStore implements BlobStore {
  gets = 0;
  puts = 0;
  constructor(private readonly inner: BlobStore) {}
  put(key: string, body: string): Promise<void> {
    this.puts += 1;
    return this.inner.put(key, body);
  }
  get(key: string): Promise<string | undefined> {
    this.gets += 1;
    return this.inner.get(key);
  }
  list(prefix: string): Promise<string[]> {
    return this.inner.list(prefix);
  }
  delete(key: string): Promise<void> {
    return this.inner.delete(key);
  }
}

const userMessage = (index: number): ChatMessage => ({ role: 'user', content: `message ${index}` });

describe('ConversationStore', () => {
  let root: string;
  let blobs: CountingBlobStore;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'errand-conversations-'));
    blobs = new CountingBlobStore(new LocalBlobStore(root));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('appends and reads every message kind', async () => {
    const store = new ConversationStore(blobs);
    const messages: ChatMessage[] = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'list files' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'developer__list_directory', arguments: { path: '.', nested: { a: [1, null] } } }] },
      { role: 'tool', toolCallId: 'c1', toolName: 'developer__list_directory', content: 'nothing', isError: true },
      { role: 'assistant', content: 'done' },
    ];
    for (const [seq, message] of messages.entries()) await store.append('errand-abc/task-1', seq, message);
    expect(await store.read('errand-abc/task-1', 5)).toEqual(messages);
    // A fresh store (another worker) reads the same from the blob store.
    expect(await new ConversationStore(blobs).read('errand-abc/task-1', 5)).toEqual(messages);
    expect(await new ConversationStore(blobs).readRange('errand-abc/task-1', 3, 2)).toEqual(messages.slice(3));
    expect(await store.read('errand-abc/task-1', 0)).toEqual([]);
  });

  it('is idempotent per seq and refuses a different message at a taken seq', async () => {
    const store = new ConversationStore(blobs);
    await store.append('c', 0, { role: 'assistant', content: 'hi', toolCalls: [{ id: '1', name: 'n', arguments: { b: 1, a: 2 } }] });
    // Same message with another key order: still the same message.
    await store.append('c', 0, { toolCalls: [{ arguments: { a: 2, b: 1 }, name: 'n', id: '1' }], content: 'hi', role: 'assistant' });
    const error: unknown = await store.append('c', 0, { role: 'assistant', content: 'bye' }).catch((caught: unknown) => caught);
    expect(isConversationMessageConflictError(error)).toBe(true);
    expect(String(error)).toContain('message 0 of conversation "c" already exists with different content');
    expect(await store.read('c', 1)).toEqual([{ role: 'assistant', content: 'hi', toolCalls: [{ id: '1', name: 'n', arguments: { b: 1, a: 2 } }] }]);
  });

  it('names the missing seq when the count is past what was stored', async () => {
    const store = new ConversationStore(blobs);
    await store.append('c', 0, userMessage(0));
    await store.append('c', 1, userMessage(1));
    const error: unknown = await new ConversationStore(blobs).read('c', 4).catch((caught: unknown) => caught);
    expect(isConversationMessageMissingError(error)).toBe(true);
    expect(String(error)).toContain('message 2 of conversation "c" is missing from the blob store (expected messages 0..3)');
    await expect(store.read('c', 3)).rejects.toThrow('message 2 of conversation "c" is missing');
  });

  it('rejects invalid arguments and messages with clear errors', async () => {
    const store = new ConversationStore(blobs);
    await expect(store.append('c', -1, userMessage(0))).rejects.toThrow('seq must be an integer >= 0, got -1');
    await expect(store.read('c', 1.5)).rejects.toThrow('count must be an integer >= 0, got 1.5');
    // @ts-expect-error: a message of the wrong shape, as corrupt input would be
    await expect(store.append('c', 0, { role: 'robot', content: 'x' })).rejects.toThrow('message 0 of conversation "c" is not a valid chat message');
  });

  it('reads a long conversation with few blob reads: chunks plus an in-process cache', async () => {
    const writer = new ConversationStore(blobs, { chunkSize: 50 });
    for (let seq = 0; seq < 500; seq += 1) await writer.append('long', seq, userMessage(seq));
    const chunkKeys = await blobs.list(`conversations/long/chunks/`);
    expect(chunkKeys).toHaveLength(10);

    // A cold worker: one read per chunk, not one per message.
    const reader = new ConversationStore(blobs, { chunkSize: 50 });
    blobs.gets = 0;
    const all = await reader.read('long', 500);
    expect(all).toHaveLength(500);
    expect(all[499]).toEqual(userMessage(499));
    expect(blobs.gets).toBe(10);

    // Warm: the same or a shorter read costs nothing; a longer one reads only the new messages.
    blobs.gets = 0;
    expect(await reader.read('long', 500)).toHaveLength(500);
    expect(await reader.readRange('long', 250, 3)).toEqual([userMessage(250), userMessage(251), userMessage(252)]);
    expect(blobs.gets).toBe(0);
    await writer.append('long', 500, userMessage(500));
    await writer.append('long', 501, userMessage(501));
    expect(await reader.read('long', 502)).toHaveLength(502);
    expect(blobs.gets).toBe(2);

    // The worker that appends keeps its cache current: its next read needs no blob read at all.
    blobs.gets = 0;
    expect((await writer.read('long', 502))[501]).toEqual(userMessage(501));
    expect(blobs.gets).toBe(0);
  });

  it('seals a chunk on read when appends left it unsealed', async () => {
    const writer = new ConversationStore(blobs, { chunkSize: 4 });
    // Out of order: when seq 3 (the chunk's last) is appended, seq 2 is not there yet, so no chunk is written.
    for (const seq of [0, 1, 3, 2, 4]) await writer.append('gappy', seq, userMessage(seq));
    expect(await blobs.list('conversations/gappy/chunks/')).toEqual([]);
    const reader = new ConversationStore(blobs, { chunkSize: 4 });
    expect(await reader.read('gappy', 5)).toEqual([0, 1, 2, 3, 4].map(userMessage));
    expect(await blobs.list('conversations/gappy/chunks/')).toEqual(['conversations/gappy/chunks/00000000.json']);
    blobs.gets = 0;
    expect(await new ConversationStore(blobs, { chunkSize: 4 }).read('gappy', 5)).toHaveLength(5);
    expect(blobs.gets).toBe(2);
  });

  it('evicts least recently used conversations from the cache', async () => {
    const store = new ConversationStore(blobs, { cacheEntries: 2 });
    for (const id of ['a', 'b', 'c']) await store.append(id, 0, userMessage(0));
    blobs.gets = 0;
    await store.read('c', 1);
    await store.read('b', 1);
    expect(blobs.gets).toBe(0);
    await store.read('a', 1);
    expect(blobs.gets).toBe(1);
  });

  it('escapes conversation ids into one key segment without collisions', () => {
    expect(conversationSegment('errand-abc/task-1')).toBe('errand-abc+2ftask-1');
    expect(conversationSegment('errand-abc+2ftask-1')).toBe('errand-abc+2b2ftask-1');
    expect(conversationSegment('..')).toBe('+2e.');
    expect(conversationSegment('é')).toBe('+c3+a9');
  });
});

import { z } from 'zod';
import type { JsonObject, JsonValue } from '../contracts/json';
import {
  conversationCacheEntries,
  conversationCacheMaxChars,
  conversationChunkSize,
  conversationReadConcurrency,
} from '../contracts/limits/activities';
import type { ChatMessage } from '../contracts/model';
import { isBlobConflictError, type BlobStore } from './blob-store';

/*
 * Layout in the blob store (all entries immutable):
 *
 *   conversations/<id>/messages/<seq, 10 digits>.json   one message, canonical JSON
 *   conversations/<id>/chunks/<index, 8 digits>.json    JSON array of messages index*S .. index*S+S-1
 *
 * where S = conversationChunkSize and <id> is the conversation id escaped into one key segment.
 *
 * Every message is first written alone, because an append must be idempotent per seq and a blob cannot
 * be appended to. When the last message of a chunk is appended, the whole chunk is also written as one
 * blob (or later, by the first read that has to gather that chunk from single messages). A read of n
 * messages then costs about n/S chunk reads plus at most S-1 single reads for the unsealed tail, instead
 * of n reads. On top of that, an in-process LRU keeps each recently used conversation's longest known
 * prefix, so a worker driving a conversation turn after turn reads only what was appended elsewhere.
 * Caching is safe because entries never change once written.
 *
 * Messages are stored as canonical JSON (keys sorted) so "same message" does not depend on key order,
 * and a chunk is the concatenation of its messages' canonical JSON, so two workers sealing the same
 * chunk write byte-identical bodies and the second put is a no-op.
 */

/** Marker values of conversation store errors (recognised without `instanceof`, DESIGN.md convention 5). */
export const ConversationErrorKind = {
  missing: 'ConversationMessageMissing',
  conflict: 'ConversationMessageConflict',
  invalid: 'ConversationMessageInvalid',
} as const;

/** A message the caller expects (seq < the count it passed) is not in the store. */
export class ConversationMessageMissingError extends Error {
  readonly errandError = ConversationErrorKind.missing;
  constructor(
    readonly conversationId: string,
    readonly seq: number,
    expectedRange: string,
  ) {
    super(`message ${seq} of conversation ${JSON.stringify(conversationId)} is missing from the blob store (expected messages ${expectedRange})`);
    this.name = 'ConversationMessageMissingError';
  }
}

/** An append of a different message at a seq that is already taken (messages are immutable). */
export class ConversationMessageConflictError extends Error {
  readonly errandError = ConversationErrorKind.conflict;
  constructor(
    readonly conversationId: string,
    readonly seq: number,
  ) {
    super(`message ${seq} of conversation ${JSON.stringify(conversationId)} already exists with different content; messages are immutable`);
    this.name = 'ConversationMessageConflictError';
  }
}

/** A stored message (or an argument of append/read) that does not have the expected shape. */
export class ConversationMessageInvalidError extends Error {
  readonly errandError = ConversationErrorKind.invalid;
  constructor(message: string) {
    super(message);
    this.name = 'ConversationMessageInvalidError';
  }
}

/** Whether `error` is a ConversationMessageMissingError, by marker. */
export function isConversationMessageMissingError(error: unknown): error is ConversationMessageMissingError {
  return typeof error === 'object' && error !== null && 'errandError' in error && error.errandError === ConversationErrorKind.missing;
}

/** Whether `error` is a ConversationMessageConflictError, by marker. */
export function isConversationMessageConflictError(error: unknown): error is ConversationMessageConflictError {
  return typeof error === 'object' && error !== null && 'errandError' in error && error.errandError === ConversationErrorKind.conflict;
}

const jsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]),
);

const toolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.record(z.string(), jsonValueSchema), invalidArguments: z.string().optional() });

/** Shape of a stored ChatMessage (contracts/model.ts); stored data is checked on the way back in. */
const chatMessageSchema: z.ZodType<ChatMessage> = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    toolCalls: z.array(toolCallSchema).optional(),
    // Extended thinking, kept so the Anthropic adapter can send it back with the tool results.
    reasoning: z.array(z.object({ text: z.string(), signature: z.string().optional(), redactedData: z.string().optional() })).optional(),
  }),
  z.object({ role: z.literal('tool'), toolCallId: z.string(), toolName: z.string(), content: z.string(), isError: z.boolean().optional() }),
]);

/** Tuning knobs; the defaults come from contracts/limits.ts. Tests use a small chunk size. */
export interface ConversationStoreOptions {
  chunkSize?: number;
  cacheEntries?: number;
  cacheMaxChars?: number;
}

/**
 * Append-only conversations (lists of ChatMessage) on a BlobStore. The workflow owns the message count;
 * the store only keeps messages by seq. See the layout comment at the top of this file.
 */
export class ConversationStore {
  private readonly chunkSize: number;
  private readonly cacheEntries: number;
  private readonly cacheMaxChars: number;
  /** conversation id → canonical JSON of messages 0..n-1. Map order is recency order (LRU). */
  private readonly cache = new Map<string, string[]>();
  private cachedChars = 0;

  constructor(
    private readonly blobs: BlobStore,
    options: ConversationStoreOptions = {},
  ) {
    this.chunkSize = options.chunkSize ?? conversationChunkSize;
    this.cacheEntries = options.cacheEntries ?? conversationCacheEntries;
    this.cacheMaxChars = options.cacheMaxChars ?? conversationCacheMaxChars;
    if (!Number.isInteger(this.chunkSize) || this.chunkSize < 1) throw new Error(`chunkSize must be an integer >= 1, got ${this.chunkSize}`);
  }

  /**
   * Stores `message` as message `seq`. Idempotent: the same message again is a no-op (activity retries).
   * A different message at a taken seq throws ConversationMessageConflictError.
   */
  async append(conversationId: string, seq: number, message: ChatMessage, outcome?: JsonObject): Promise<void> {
    assertSeq('seq', seq);
    const parsed = chatMessageSchema.safeParse(message);
    if (!parsed.success) {
      throw new ConversationMessageInvalidError(`message ${seq} of conversation ${JSON.stringify(conversationId)} is not a valid chat message: ${z.prettifyError(parsed.error)}`);
    }
    // The outcome travels in the same blob (one write per step, decision 0002); readers of messages never see it.
    const raw = canonicalJson(outcome ? { ...parsed.data, outcome } : parsed.data);
    try {
      await this.blobs.put(messageKey(conversationId, seq), raw);
    } catch (error) {
      if (isBlobConflictError(error)) throw new ConversationMessageConflictError(conversationId, seq);
      throw error;
    }
    // Keep the cached prefix current, so the next turn on this worker reads nothing from the store.
    const cached = this.cache.get(conversationId) ?? (seq === 0 ? [] : undefined);
    if (cached !== undefined && cached.length === seq) this.extendCache(conversationId, cached, [raw]);
    if ((seq + 1) % this.chunkSize === 0) await this.sealChunkIfComplete(conversationId, Math.floor(seq / this.chunkSize));
  }

  /**
   * Message `seq` with the outcome an activity stored with it, or undefined when it is not stored yet: how
   * a retried activity finds the work an earlier attempt finished.
   */
  async readStored(conversationId: string, seq: number): Promise<{ message: ChatMessage; outcome?: JsonObject } | undefined> {
    assertSeq('seq', seq);
    const cached = this.cache.get(conversationId);
    // Every message is written alone before any chunk holds it, so one single read finds it.
    const raw = cached !== undefined && cached.length > seq ? cached[seq] : await this.blobs.get(messageKey(conversationId, seq));
    if (raw === undefined) return undefined;
    const message = parseMessage(raw, conversationId, seq);
    const stored: unknown = JSON.parse(raw);
    const outcome = typeof stored === 'object' && stored !== null && 'outcome' in stored ? stored.outcome : undefined;
    return { message, ...(isJsonObject(outcome) ? { outcome } : {}) };
  }

  /** Messages 0..count-1. Throws ConversationMessageMissingError naming the first missing seq. */
  read(conversationId: string, count: number): Promise<ChatMessage[]> {
    return this.readRange(conversationId, 0, count);
  }

  /** Messages start..start+count-1. Throws ConversationMessageMissingError naming the first missing seq. */
  async readRange(conversationId: string, start: number, count: number): Promise<ChatMessage[]> {
    assertSeq('start', start);
    assertSeq('count', count);
    const end = start + count;
    const raws = await this.readRaw(conversationId, start, end);
    // Every raw here was validated once, when it was written or loaded (see readRaw): parse it only.
    return raws.map(trustedMessage);
  }

  /** Canonical JSON of messages start..end-1, from the cache where possible. */
  private async readRaw(conversationId: string, start: number, end: number): Promise<string[]> {
    if (start === end) return [];
    const cached = this.cache.get(conversationId) ?? [];
    if (cached.length >= end) {
      this.touch(conversationId, cached);
      return cached.slice(start, end);
    }
    // Contiguous with the cached prefix: read only the rest and extend the prefix.
    if (start <= cached.length) {
      const loaded = validated(await this.load(conversationId, cached.length, end, start, end), conversationId, cached.length);
      const current = this.cache.get(conversationId) ?? [];
      if (current.length === cached.length) this.extendCache(conversationId, current, loaded);
      return [...cached, ...loaded].slice(start, end);
    }
    return validated(await this.load(conversationId, start, end, start, end), conversationId, start);
  }

  /** Reads messages from..to-1 from the blob store, using chunk blobs where they can save reads. */
  private async load(conversationId: string, from: number, to: number, askedStart: number, askedEnd: number): Promise<string[]> {
    const pieces: Promise<string[]>[] = [];
    let seq = from;
    // One piece per chunk the range touches; bounded by (to - from) / chunkSize + 2.
    while (seq < to) {
      const chunkIndex = Math.floor(seq / this.chunkSize);
      const chunkEnd = (chunkIndex + 1) * this.chunkSize;
      const pieceEnd = Math.min(to, chunkEnd);
      // A chunk can be sealed only if it is complete, which the caller vouches for when it asks for
      // messages up to or past its end. For a single message a single read is as cheap.
      pieces.push(
        chunkEnd <= to && pieceEnd - seq > 1
          ? this.loadFromChunk(conversationId, chunkIndex, seq, pieceEnd, askedStart, askedEnd)
          : this.loadSingles(conversationId, seq, pieceEnd, askedStart, askedEnd),
      );
      seq = pieceEnd;
    }
    return (await Promise.all(pieces)).flat();
  }

  /**
   * Messages from..to-1 of one complete chunk: from its sealed blob, else from single messages — sealing
   * the chunk for later readers when the whole chunk had to be read anyway.
   */
  private async loadFromChunk(conversationId: string, chunkIndex: number, from: number, to: number, askedStart: number, askedEnd: number): Promise<string[]> {
    const chunkStart = chunkIndex * this.chunkSize;
    const sealed = await this.blobs.get(chunkKey(conversationId, chunkIndex));
    if (sealed !== undefined) {
      const parsed = parseJson(sealed);
      if (!Array.isArray(parsed) || parsed.length !== this.chunkSize) {
        throw new ConversationMessageInvalidError(`chunk ${chunkIndex} of conversation ${JSON.stringify(conversationId)} does not hold ${this.chunkSize} messages`);
      }
      return parsed.slice(from - chunkStart, to - chunkStart).map((message: JsonValue) => canonicalJson(message));
    }
    const raws = await this.loadSingles(conversationId, from, to, askedStart, askedEnd);
    if (from === chunkStart && to === chunkStart + this.chunkSize) {
      await this.blobs.put(chunkKey(conversationId, chunkIndex), chunkBody(raws));
    }
    return raws;
  }

  /** Single messages from..to-1, read with bounded concurrency. */
  private async loadSingles(conversationId: string, from: number, to: number, askedStart: number, askedEnd: number): Promise<string[]> {
    const result: string[] = [];
    for (let batchStart = from; batchStart < to; batchStart += conversationReadConcurrency) {
      const batchEnd = Math.min(to, batchStart + conversationReadConcurrency);
      const seqs = Array.from({ length: batchEnd - batchStart }, (_, index) => batchStart + index);
      const bodies = await Promise.all(seqs.map((seq) => this.blobs.get(messageKey(conversationId, seq))));
      bodies.forEach((body, index) => {
        if (body === undefined) {
          throw new ConversationMessageMissingError(conversationId, batchStart + index, `${askedStart}..${askedEnd - 1}`);
        }
        result.push(body);
      });
    }
    return result;
  }

  /** Writes the chunk blob once all its messages exist; a gap (out-of-order append) leaves it to a later read. */
  private async sealChunkIfComplete(conversationId: string, chunkIndex: number): Promise<void> {
    const chunkStart = chunkIndex * this.chunkSize;
    const chunkEnd = chunkStart + this.chunkSize;
    let raws: string[];
    const cached = this.cache.get(conversationId);
    if (cached !== undefined && cached.length >= chunkEnd) {
      raws = cached.slice(chunkStart, chunkEnd);
    } else {
      try {
        raws = await this.loadSingles(conversationId, chunkStart, chunkEnd, chunkStart, chunkEnd);
      } catch (error) {
        if (isConversationMessageMissingError(error)) return;
        throw error;
      }
    }
    await this.blobs.put(chunkKey(conversationId, chunkIndex), chunkBody(raws));
  }

  private touch(conversationId: string, messages: string[]): void {
    this.cache.delete(conversationId);
    this.cache.set(conversationId, messages);
  }

  private extendCache(conversationId: string, current: string[], added: string[]): void {
    const addedChars = added.reduce((sum, raw) => sum + raw.length, 0);
    const next = current.concat(added);
    this.cachedChars += addedChars;
    this.touch(conversationId, next);
    // Evict least recently used conversations (Map iteration order) until within both bounds.
    for (const [oldestId, oldest] of this.cache) {
      if (this.cache.size <= this.cacheEntries && this.cachedChars <= this.cacheMaxChars) break;
      this.cache.delete(oldestId);
      this.cachedChars -= oldest.reduce((sum, raw) => sum + raw.length, 0);
    }
  }
}

function assertSeq(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ConversationMessageInvalidError(`${name} must be an integer >= 0, got ${String(value)}`);
  }
}

/** Checks raws read from the blob store (messages from..): each becomes trusted once it passed. */
function validated(raws: string[], conversationId: string, from: number): string[] {
  raws.forEach((raw, index) => parseMessage(raw, conversationId, from + index));
  return raws;
}

/** A message from a raw that passed the schema before (written by append, or checked when loaded). */
function trustedMessage(raw: string): ChatMessage {
  const parsed = JSON.parse(raw) as ChatMessage & { outcome?: unknown };
  delete parsed.outcome;
  return parsed;
}

function parseMessage(raw: string, conversationId: string, seq: number): ChatMessage {
  const parsed = chatMessageSchema.safeParse(JSON.parse(raw));
  if (!parsed.success) {
    throw new ConversationMessageInvalidError(`stored message ${seq} of conversation ${JSON.stringify(conversationId)} is not a valid chat message: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** JSON text parsed: a JSON value by construction (JSON.parse makes nothing else). */
function parseJson(text: string): JsonValue {
  return JSON.parse(text) as JsonValue;
}

/** JSON with object keys sorted at every level and undefined properties dropped. */
function canonicalJson(value: JsonValue | ChatMessage | (ChatMessage & { outcome: JsonObject })): string {
  // The round trip drops undefined properties; what it parses is JSON by construction.
  return JSON.stringify(sortKeys(parseJson(JSON.stringify(value))));
}

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(value).sort()) {
      const child = value[key];
      if (child !== undefined) sorted[key] = sortKeys(child);
    }
    return sorted;
  }
  return value;
}

function chunkBody(raws: string[]): string {
  return `[${raws.join(',')}]`;
}

/**
 * A conversation id as one key segment. Characters outside `[A-Za-z0-9_.-]` (and a leading `.`) become
 * `+` and two hex digits per UTF-8 byte; `+` itself is escaped, so distinct ids never share a segment.
 */
export function conversationSegment(conversationId: string): string {
  if (conversationId.length === 0) throw new ConversationMessageInvalidError('conversation id is empty');
  let segment = '';
  for (const byte of Buffer.from(conversationId, 'utf8')) {
    const character = String.fromCharCode(byte);
    segment += /[A-Za-z0-9_.-]/.test(character) && !(segment.length === 0 && character === '.') ? character : `+${byte.toString(16).padStart(2, '0')}`;
  }
  return segment;
}

function messageKey(conversationId: string, seq: number): string {
  return `conversations/${conversationSegment(conversationId)}/messages/${String(seq).padStart(10, '0')}.json`;
}

function chunkKey(conversationId: string, chunkIndex: number): string {
  return `conversations/${conversationSegment(conversationId)}/chunks/${String(chunkIndex).padStart(8, '0')}.json`;
}

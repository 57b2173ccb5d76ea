/**
 * A workflow run's journal in errand's blob store (SEMANTICS §7, decision 0038): the run's history holds
 * only a reference. A reference names a small immutable head: a base (a whole journal, itself by
 * reference), the entries added since, and the keys dropped from the base since. Each update writes a new
 * head with the few new entries; the base is written again only when the head has grown past
 * {@link journalDeltaMaxEntries}, so a 1,000-agent run writes a few dozen whole journals, not a thousand.
 * Blobs are content-addressed: an activity retried after a lost worker writes the same keys again.
 */
import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../contracts/failures';
import type { WorkflowJournal, WorkflowJournalEntry } from '../contracts/workflow-script';
import { canonicalJson } from '../domain/workflow-journal';
import type { JsonValue } from '../contracts/json';
import type { BlobStore } from './blob-store';

/** Entries (added or dropped) a head holds before they are folded into a new base. */
export const journalDeltaMaxEntries = 64;

interface JournalHead {
  base: string | null;
  delta: WorkflowJournal;
  removed: string[];
}

/** The content-addressed key of a JSON value under `prefix`. */
export function contentKey(prefix: string, body: string): string {
  return `${prefix}/${createHash('sha256').update(body).digest('hex')}.json`;
}

/** Stores a JSON value under its content key and returns the key. */
export async function putByContent(blobs: BlobStore, prefix: string, value: JsonValue): Promise<string> {
  const body = canonicalJson(value);
  const key = contentKey(prefix, body);
  await blobs.put(key, body);
  return key;
}

/** Reads a JSON blob a run refers to; a missing one is a non-retryable failure naming it. */
export async function readJsonBlob<T>(blobs: BlobStore, key: string, what: string): Promise<T> {
  const body = await blobs.get(key);
  if (body === undefined) throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `${what} ${key} is missing from the blob store`, nonRetryable: true });
  return JSON.parse(body) as T;
}

async function readHead(blobs: BlobStore, ref: string | null): Promise<JournalHead> {
  if (ref === null) return { base: null, delta: {}, removed: [] };
  return readJsonBlob<JournalHead>(blobs, ref, 'the workflow journal');
}

/** The whole journal a reference names (`null`: empty). */
export async function loadJournal(blobs: BlobStore, ref: string | null): Promise<WorkflowJournal> {
  const head = await readHead(blobs, ref);
  const base = head.base === null ? {} : await readJsonBlob<WorkflowJournal>(blobs, head.base, 'the workflow journal base');
  const journal: WorkflowJournal = { ...base };
  for (const key of head.removed) delete journal[key];
  return Object.assign(journal, head.delta);
}

/**
 * Writes the journal with `add` recorded and `remove` dropped; returns its reference. An entry already in
 * the journal stays (the first result recorded under a key wins, as in the journal's own rule).
 */
export async function updateJournal(blobs: BlobStore, ref: string | null, add: Record<string, WorkflowJournalEntry>, remove: readonly string[]): Promise<string> {
  const head = await readHead(blobs, ref);
  const delta: WorkflowJournal = { ...head.delta };
  const removed = new Set(head.removed);
  for (const key of remove) {
    delete delta[key];
    removed.add(key);
  }
  let base: WorkflowJournal | undefined;
  for (const [key, entry] of Object.entries(add)) {
    if (Object.hasOwn(delta, key)) continue;
    if (head.base !== null && !removed.has(key)) {
      base ??= await readJsonBlob<WorkflowJournal>(blobs, head.base, 'the workflow journal base');
      if (Object.hasOwn(base, key)) continue;
    }
    delta[key] = entry;
  }
  let next: JournalHead = { base: head.base, delta, removed: [...removed].sort() };
  if (Object.keys(delta).length + removed.size > journalDeltaMaxEntries) {
    const whole: WorkflowJournal = head.base === null ? {} : { ...(await readJsonBlob<WorkflowJournal>(blobs, head.base, 'the workflow journal base')) };
    for (const key of removed) delete whole[key];
    Object.assign(whole, delta);
    next = { base: await putByContent(blobs, 'workflow-journals', whole as unknown as JsonValue), delta: {}, removed: [] };
  }
  return putByContent(blobs, 'workflow-journals', next as unknown as JsonValue);
}

import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../contracts/failures';
import { isBlobConflictError, type BlobStore } from './blob-store';

/**
 * What makes an activity idempotent (decision 0002): its outcome is stored by key before it returns, and
 * a retry (lost worker, server restart) finds it and returns it instead of doing the work again.
 */

/** Parses a stored JSON outcome written by {@link storeOutcome}. */
export function parseStored<T>(text: string, key: string): T {
  try {
    return JSON.parse(text) as T; // written by storeOutcome with JSON.stringify of the same type
  } catch (error) {
    throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `stored outcome ${key} is not valid JSON: ${String(error)}`, nonRetryable: true });
  }
}

/** The stored outcome under `key`, if there is one. */
export async function storedOutcome<T>(blobs: BlobStore, key: string): Promise<T | undefined> {
  const stored = await blobs.get(key);
  return stored === undefined ? undefined : parseStored<T>(stored, key);
}

/**
 * Stores an outcome; the first writer wins. An attempt that timed out may still be running and store a
 * different answer than its retry: whichever stored first is the outcome, and the other reads it and
 * continues with it, so the conversation is appended byte for byte the same by both.
 */
export async function storeOutcome<T>(blobs: BlobStore, key: string, outcome: T): Promise<T> {
  try {
    await blobs.put(key, JSON.stringify(outcome));
    return outcome;
  } catch (error) {
    if (!isBlobConflictError(error)) throw error;
    const stored = await blobs.get(key);
    if (stored === undefined) throw error;
    return parseStored<T>(stored, key);
  }
}

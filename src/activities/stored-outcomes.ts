import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { FailureType } from '../contracts/failures';
import type { LiveText } from '../contracts/live-text';
import { modelHeartbeatIntervalMs } from '../contracts/limits';
import { isBlobConflictError, type BlobStore } from './blob-store';

/**
 * What makes an activity idempotent (decision 0002): its outcome is stored by key before it returns, and
 * a retry (lost worker, server restart) finds it and returns it instead of doing the work again.
 */

/**
 * Runs `work` while heartbeating, so a lost worker is noticed and a cancellation is delivered. `details`
 * (when given) is sent with each heartbeat: the text a model has written so far, which peek, the API and
 * the Web UI show while the call runs. Heartbeat details cost no history, and losing them with a worker
 * loses nothing: the final answer is stored as always.
 */
export async function withHeartbeat<T>(work: (signal: AbortSignal) => Promise<T>, details?: () => LiveText | undefined): Promise<T> {
  const context = Context.current();
  // A local activity has no heartbeats (its workflow task is kept alive instead); cancellation still reaches it.
  const timer = context.info.isLocal ? undefined : setInterval(() => {
    const live = details?.();
    if (live) context.heartbeat(live);
    else context.heartbeat();
  }, modelHeartbeatIntervalMs);
  try {
    return await work(context.cancellationSignal);
  } catch (error) {
    if (context.cancellationSignal.aborted) {
      // The text written so far goes with the cancellation, so a run cancelled mid-answer can report it
      // as its partial output (it is bounded: the last few KB).
      const live = details?.();
      throw live ? new CancelledFailure('cancelled while the model was writing', [live]) : new CancelledFailure('cancelled while running');
    }
    throw error;
  } finally {
    clearInterval(timer);
  }
}

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

import { ApplicationFailure } from '@temporalio/common';
import type { TextPart } from '../contracts/agent-wire';
import { FailureType } from '../contracts/failures';
import { readTextParts, type MissingTextPart, type TextPartStores } from './text-part-reader';

export type { TextPartStores } from './text-part-reader';

/** A missing stored text fails the activity: non-retryable, it will not appear on a retry. */
function failMissing(missing: MissingTextPart): never {
  const message = missing.kind === 'message'
    ? `message ${missing.seq} of conversation ${missing.conversationId} is missing`
    : `stored message ${missing.blobKey} is missing from the blob store`;
  throw ApplicationFailure.create({ type: FailureType.blobMissing, message, nonRetryable: true });
}

/**
 * The text of a message assembled from parts (text-part-reader.ts): a missing text is a non-retryable
 * `blobMissing`.
 */
export function resolveTextParts(parts: readonly TextPart[], stores: TextPartStores): Promise<string> {
  return readTextParts(parts, stores, failMissing);
}

import { ApplicationFailure } from '@temporalio/common';
import type { TextPart } from '../contracts/agent-wire';
import { FailureType } from '../contracts/failures';
import { escapeChildWords } from '../domain/child-words';
import type { BlobStore } from './blob-store';
import type { ConversationStore } from './conversation-store';

/** Where the texts that parts refer to are stored. */
export interface TextPartStores {
  conversations: ConversationStore;
  blobs: BlobStore;
}

/**
 * The text of a message assembled from parts: inline text, a stored message's text, or a stored blob (a
 * task's own words escaped as child-words.ts says). A missing text is a non-retryable `blobMissing`.
 */
export async function resolveTextParts(parts: readonly TextPart[], stores: TextPartStores): Promise<string> {
  const texts = await Promise.all(parts.map(async (part) => {
    if (typeof part === 'string') return part;
    if ('ref' in part) {
      const [message] = await stores.conversations.readRange(part.ref.conversationId, part.ref.seq, 1);
      if (!message) throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `message ${part.ref.seq} of conversation ${part.ref.conversationId} is missing`, nonRetryable: true });
      // A task's own words that were cut from the workflow's text: escaped here, as the inline ones were there.
      return part.childWords ? escapeChildWords(message.content) : message.content;
    }
    const body = await stores.blobs.get(part.blobKey);
    if (body === undefined) throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `stored message ${part.blobKey} is missing from the blob store`, nonRetryable: true });
    return part.childWords ? escapeChildWords(body) : body;
  }));
  return texts.join('');
}

import type { TextPart } from '../contracts/agent-wire';
import { escapeChildWords } from '../domain/child-words';
import type { BlobStore } from './blob-store';
import type { ConversationStore } from './conversation-store';

/** Where the texts that parts refer to are stored. */
export interface TextPartStores {
  conversations: Pick<ConversationStore, 'readRange'>;
  blobs: Pick<BlobStore, 'get'>;
}

/** A part whose stored text is not there. */
export type MissingTextPart = { kind: 'message'; conversationId: string; seq: number } | { kind: 'blob'; blobKey: string };

/**
 * The text of a message assembled from parts: inline text, a stored message's text, or a stored blob. A
 * part marked `childWords` is a task's own words that were cut from the workflow's text; it is escaped here
 * (child-words.ts) as the inline ones were there. This is the one reader for every side that turns parts
 * into text: the worker's activities (a model's conversation, hooks) and the MCP server (a client's model),
 * so a task's words reach no model unescaped. `missing` says what a part that is not stored becomes: the
 * activities fail, the MCP server says so in the text.
 */
export async function readTextParts(parts: readonly TextPart[], stores: TextPartStores, missing: (part: MissingTextPart) => string): Promise<string> {
  const texts = await Promise.all(parts.map(async (part) => {
    if (typeof part === 'string') return part;
    if ('ref' in part) {
      const [message] = await stores.conversations.readRange(part.ref.conversationId, part.ref.seq, 1);
      const text = message?.content ?? missing({ kind: 'message', conversationId: part.ref.conversationId, seq: part.ref.seq });
      return part.childWords && message ? escapeChildWords(text) : text;
    }
    const body = await stores.blobs.get(part.blobKey);
    const text = body ?? missing({ kind: 'blob', blobKey: part.blobKey });
    return part.childWords && body !== undefined ? escapeChildWords(text) : text;
  }));
  return texts.join('');
}

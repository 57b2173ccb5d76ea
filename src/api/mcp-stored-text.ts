import type { BlobStore } from '../activities/blob-store';
import { ConversationStore } from '../activities/conversation-store';
import { readTextParts, type MissingTextPart } from '../activities/text-part-reader';
import type { TextPart } from '../contracts/agent-wire';

/** A missing part, named in the text the client reads. */
function sayMissing(missing: MissingTextPart): string {
  return missing.kind === 'message'
    ? `(message ${missing.seq} of ${missing.conversationId} is missing from the store)`
    : `(stored text ${missing.blobKey} is missing from the store)`;
}

/**
 * Reads the whole text of a tool result's parts for an MCP client: a long result or notice reaches the
 * workflow by reference (a stored message or blob), and an MCP client gets the text itself, a task's words
 * escaped as a session's model gets them (the same reader as the worker's, text-part-reader.ts). A part that
 * is missing from the store (or cannot be read) is named in the text rather than failing the whole call.
 */
export function storedTextReader(blobs: BlobStore): (parts: TextPart[]) => Promise<string> {
  const conversations = new ConversationStore(blobs);
  const stores = {
    blobs,
    // A store that cannot be read reads as missing, for the client as for a deleted text.
    conversations: { readRange: (conversationId: string, seq: number, count: number) => conversations.readRange(conversationId, seq, count).catch(() => []) },
  };
  return (parts) => readTextParts(parts, stores, sayMissing);
}

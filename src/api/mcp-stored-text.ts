import type { BlobStore } from '../activities/blob-store';
import { ConversationStore } from '../activities/conversation-store';
import type { TextPart } from '../contracts/agent-wire';

/**
 * Reads the whole text of a tool result's parts for an MCP client: a long result or notice reaches the
 * workflow by reference (a stored message or blob), and an MCP client gets the text itself. A part that is
 * missing from the store is named in the text rather than failing the whole call.
 */
export function storedTextReader(blobs: BlobStore): (parts: TextPart[]) => Promise<string> {
  const conversations = new ConversationStore(blobs);
  return async (parts) => {
    const texts = await Promise.all(parts.map(async (part) => {
      if (typeof part === 'string') return part;
      if ('ref' in part) {
        const [message] = await conversations.readRange(part.ref.conversationId, part.ref.seq, 1).catch(() => []);
        return message?.content ?? `(message ${part.ref.seq} of ${part.ref.conversationId} is missing from the store)`;
      }
      return (await blobs.get(part.blobKey)) ?? `(stored text ${part.blobKey} is missing from the store)`;
    }));
    return texts.join('');
  };
}

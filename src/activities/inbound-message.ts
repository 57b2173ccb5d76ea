import { createHash } from 'node:crypto';
import type { BlobStore } from '../activities/blob-store';
import { inboundMessageInlineChars } from '../contracts/limits/workflow';
import type { SendMessageInput } from '../contracts/subagent-messages';

/**
 * A message for a session or continuable subagent, ready for the `sendMessage` update. A long message is
 * stored in the blob store first (content-addressed, so a retry stores the same key) and only its key
 * goes through workflow history: the worker reads the text when it appends the message, so the body is
 * never in history at all (issue: history per turn must not carry message bodies twice).
 */
export async function inboundMessage(blobs: BlobStore | undefined, text: string, extra: Pick<SendMessageInput, 'messageId' | 'from'> = {}): Promise<SendMessageInput> {
  if (!blobs || text.length <= inboundMessageInlineChars) return { message: text, ...extra };
  const key = `inbound/${createHash('sha256').update(text, 'utf8').digest('hex')}.txt`;
  await blobs.put(key, text);
  return { messageKey: key, messageChars: text.length, ...extra };
}

import type { BlobStore } from '../activities/blob-store';
import { ConversationStore } from '../activities/conversation-store';
import type { SubagentResultView } from '../contracts/delegation-api';

/** A result as a child workflow returns it: slimmed for its parent's history (src/domain/child-result.ts). */
export type SlimResultView = SubagentResultView & { structuredCut?: boolean };

/**
 * The result with its whole output: a child delegated by a session or subagent returns a preview and a
 * reference (`outputCut`, SEMANTICS §4), and whoever reads it through the API gets the text itself, read
 * from the conversation store (a structured result's JSON gives back its `structured` too). One read, only
 * for an output longer than the inline limit. A message missing from the store leaves the preview, still
 * marked `outputCut`.
 */
export async function withWholeOutput(result: SlimResultView, blobs: BlobStore | undefined): Promise<SubagentResultView> {
  const { structuredCut, ...view } = result;
  if (!view.outputCut || !view.outputRef || !blobs) return view;
  const [message] = await new ConversationStore(blobs).readRange(view.outputRef.conversationId, view.outputRef.seq, 1).catch(() => []);
  if (!message) return view;
  const { outputCut: _cut, ...whole } = view;
  const text = message.content;
  const structured = structuredCut && whole.status === 'completed' ? jsonObject(text) : undefined;
  return whole.status === 'completed'
    ? { ...whole, output: text, ...(structured ? { structured } : {}) }
    : { ...whole, partialOutput: text };
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

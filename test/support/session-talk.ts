import type { WorkflowHandle } from '@temporalio/client';
import { sendMessageUpdate, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';

/** Sends a session a user message (the update returns once the message is queued). */
export async function say(handle: WorkflowHandle, message: string): Promise<void> {
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message }] });
}

/** Polls the transcript until `count` assistant replies exist and the session waits (bounded); returns them. */
export async function replies(handle: WorkflowHandle, count: number, timeoutMs = 30_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const view: TranscriptView = await handle.query(transcriptQuery);
    const texts = view.entries.filter((entry) => entry.role === 'assistant').map((entry) => entry.text);
    if (texts.length >= count && view.state === 'waiting') return texts;
    if (Date.now() > deadline) throw new Error(`expected ${count} replies, have ${texts.length} (state ${view.state})`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

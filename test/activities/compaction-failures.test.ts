import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { beforeEach, describe, expect, test } from 'vitest';
import { classifyAndThrow } from '../../src/activities/agent-loop-failures';
import { LocalBlobStore } from '../../src/activities/blob-store';
import { compactConversation, summaryKey, windowedMessages } from '../../src/activities/compaction';
import { ConversationStore } from '../../src/activities/conversation-store';
import { FailureType } from '../../src/contracts/failures';
import { compactionMaxCalls } from '../../src/contracts/limits';
import type { ChatMessage } from '../../src/contracts/model';
import { createScriptedModel } from '../../src/llm/scripted-model';

/**
 * Compaction's own failures are what they are (review N7): a history too large to fold within
 * `compactionMaxCalls` summarising calls, or a stored summary that is gone, fails with a type of its own
 * and is not retried — as a retryable model outage it was retried up to six times, each time repeating
 * every summarising call. Real blob and conversation stores in a temp folder; the summariser is the
 * scripted stand-in.
 */

let blobs: LocalBlobStore;
let conversations: ConversationStore;

beforeEach(async () => {
  blobs = new LocalBlobStore(await mkdtemp(path.join(os.tmpdir(), 'errand-compaction-failures-')));
  conversations = new ConversationStore(blobs);
});

/** What the activity wrapper does with an error from compaction (agent-loop-activities.ts). */
function classified(error: unknown): ApplicationFailure {
  try {
    classifyAndThrow(error);
  } catch (thrown) {
    if (thrown instanceof ApplicationFailure) return thrown;
    throw thrown;
  }
}

describe('compaction failures', () => {
  test('a history that needs more summarising calls than allowed fails as CompactionFailed, not retryable, after exactly the allowed calls', async () => {
    const messages: ChatMessage[] = [{ role: 'system', content: 'You work.' }, { role: 'user', content: 'The task.' }];
    for (let turn = 0; turn < 80; turn += 1) {
      messages.push({ role: 'assistant', content: '', toolCalls: [{ id: `c${turn}`, name: 'developer__read_file', arguments: { path: 'a.txt' } }] });
      messages.push({ role: 'tool', toolCallId: `c${turn}`, toolName: 'developer__read_file', content: `${turn} ${'y'.repeat(3_000)}` });
    }
    for (const [index, message] of messages.entries()) await conversations.append('long', index, message);
    const summariser = createScriptedModel(() => ({ text: 'Read a.txt again.' }));
    const error = await compactConversation(
      { workflowId: 'wf', conversationId: 'long', length: messages.length, route: { provider: 'p', model: 'm' } },
      { conversations, blobs, model: summariser, route: { provider: 'p', model: 'm' }, contextWindow: 2_000 },
    ).then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ApplicationFailure);
    const failure = classified(error);
    expect(failure.type).toBe(FailureType.compactionFailed);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toMatch(new RegExp(`compaction needed more than ${compactionMaxCalls} summarising calls`));
    expect(summariser.totalCalls).toBe(compactionMaxCalls);
    expect(summariser.rejectedCalls).toEqual([]);
  });

  test('a missing or unreadable stored summary is BlobMissing, not retryable', async () => {
    await conversations.append('gone', 0, { role: 'user', content: 'The task.' });
    const window = { head: 1, summaryKey: summaryKey('gone', 1), tailStart: 1, compactions: 1 };
    const missing = classified(await windowedMessages(conversations, blobs, 'gone', 1, window).then(() => undefined, (thrown: unknown) => thrown));
    expect(missing.type).toBe(FailureType.blobMissing);
    expect(missing.nonRetryable).toBe(true);
    expect(missing.message).toMatch(/compaction summary .* is missing from the blob store/);
    await blobs.put(window.summaryKey, 'not json');
    const unreadable = classified(await windowedMessages(conversations, blobs, 'gone', 1, window).then(() => undefined, (thrown: unknown) => thrown));
    expect(unreadable.type).toBe(FailureType.blobMissing);
    expect(unreadable.nonRetryable).toBe(true);
    expect(unreadable.message).toMatch(/is not valid JSON/);
  });
});

import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { beforeEach, describe, expect, test } from 'vitest';
import { classifyAndThrow } from '../../src/activities/agent-loop-failures';
import { LocalBlobStore } from '../../src/activities/blob-store';
import { compactConversation, summaryKey, verbatimTailBudget, windowedMessages } from '../../src/activities/compaction';
import { ConversationStore } from '../../src/activities/conversation-store';
import { FailureType } from '../../src/contracts/failures';
import { compactionMaxCalls, compactionTailShare } from '../../src/contracts/limits/workflow';
import type { ChatMessage } from '../../src/contracts/model';
import { estimateTokens } from '../../src/domain/token-estimate';
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

  /** A conversation of `turns` read_file turns of about `chars` characters each, stored as `id`. */
  async function storeTurns(id: string, turns: number, chars: number): Promise<ChatMessage[]> {
    const messages: ChatMessage[] = [{ role: 'system', content: 'You work.' }, { role: 'user', content: 'The task.' }];
    for (let turn = 0; turn < turns; turn += 1) {
      messages.push({ role: 'assistant', content: '', toolCalls: [{ id: `c${turn}`, name: 'developer__read_file', arguments: { path: 'a.txt' } }] });
      messages.push({ role: 'tool', toolCallId: `c${turn}`, toolName: 'developer__read_file', content: `${turn} ${'y'.repeat(chars)}` });
    }
    for (const [index, message] of messages.entries()) await conversations.append(id, index, message);
    return messages;
  }

  test('an empty summary replaces nothing: the call fails as a retryable model outage and no summary is stored (review N8)', async () => {
    const messages = await storeTurns('empty', 12, 400);
    const summariser = createScriptedModel(() => ({ text: '   ' }));
    const error = await compactConversation(
      { workflowId: 'wf', conversationId: 'empty', length: messages.length, route: { provider: 'p', model: 'm' } },
      { conversations, blobs, model: summariser, route: { provider: 'p', model: 'm' }, contextWindow: 4_000 },
    ).then(() => undefined, (thrown: unknown) => thrown);
    const failure = classified(error);
    expect(failure.type).toBe(FailureType.modelUnavailable);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toMatch(/^the model answered an empty summary for compaction \(finish reason stop\)/);
    expect(await blobs.list('summaries/')).toEqual([]);
  });

  test('a summary cut off at its token limit is kept and says so (review N8)', async () => {
    const messages = await storeTurns('cut', 12, 400);
    const summariser = createScriptedModel(() => ({ text: 'Read a.txt twelve times; it holds', finishReason: 'length' }));
    const output = await compactConversation(
      { workflowId: 'wf', conversationId: 'cut', length: messages.length, route: { provider: 'p', model: 'm' } },
      { conversations, blobs, model: summariser, route: { provider: 'p', model: 'm' }, contextWindow: 4_000 },
    );
    expect(output.compacted).toBe(true);
    if (!output.compacted) return;
    const window = await windowedMessages(conversations, blobs, 'cut', messages.length, output.window);
    const summary = window.find((message) => message.content.includes('Read a.txt twelve times'));
    expect(summary?.content).toContain('Read a.txt twelve times; it holds\n[this summary was cut off at its limit of 400 tokens; details of the older turns may be missing]');
  });

  test('with large tool specs, the kept tail leaves room under the threshold, so the next turn does not compact again (review N8)', async () => {
    const contextWindow = 8_000;
    const messages = await storeTurns('tools', 30, 400);
    const thresholdTokens = Math.floor(contextWindow * 0.8);
    const toolTokens = Math.floor(contextWindow * 0.5);
    const headTokens = estimateTokens(messages.slice(0, 2));
    // Without the budget, the tail takes its share of the window whatever the tools take.
    expect(verbatimTailBudget(contextWindow, headTokens, {})).toBe(contextWindow * compactionTailShare);
    const budget = verbatimTailBudget(contextWindow, headTokens, { budget: { thresholdTokens, toolTokens } });
    expect(budget).toBeLessThan(contextWindow * compactionTailShare);
    const summariser = createScriptedModel(() => ({ text: 'Read a.txt thirty times.' }));
    const output = await compactConversation(
      { workflowId: 'wf', conversationId: 'tools', length: messages.length, route: { provider: 'p', model: 'm' }, budget: { thresholdTokens, toolTokens } },
      { conversations, blobs, model: summariser, route: { provider: 'p', model: 'm' }, contextWindow },
    );
    expect(output.compacted).toBe(true);
    if (!output.compacted) return;
    // The prompt after compaction (messages plus tool specs) is under the threshold, with room for a new turn.
    const oneTurn = estimateTokens(messages.slice(2, 4));
    expect(output.tokensAfter + toolTokens + oneTurn).toBeLessThanOrEqual(thresholdTokens);
    expect(summariser.rejectedCalls).toEqual([]);
  });
});

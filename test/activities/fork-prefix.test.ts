import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { beforeEach, describe, expect, test } from 'vitest';
import { LocalBlobStore } from '../../src/activities/blob-store';
import { compactConversation, windowedMessages } from '../../src/activities/compaction';
import { ConversationStore } from '../../src/activities/conversation-store';
import type { ChatMessage } from '../../src/contracts/model';
import type { ConversationPrefix } from '../../src/contracts/subagent';
import { createScriptedModel } from '../../src/llm/scripted-model';

/**
 * A fork's conversation continues its parent's by reference (decision 0011): the messages a model call
 * sees are the parent's (as the parent's model saw them, compaction included), then the fork's own; the
 * fork's compaction summarises only its own turns and keeps the parent's verbatim. Real blob store and
 * conversation store in a temp folder; the summarising model is the scripted stand-in.
 */

let blobs: LocalBlobStore;
let conversations: ConversationStore;

beforeEach(async () => {
  blobs = new LocalBlobStore(await mkdtemp(path.join(os.tmpdir(), 'errand-fork-prefix-')));
  conversations = new ConversationStore(blobs);
});

async function store(conversationId: string, messages: ChatMessage[], from = 0): Promise<void> {
  for (const [index, message] of messages.entries()) await conversations.append(conversationId, from + index, message);
}

const parentTurns: ChatMessage[] = [
  { role: 'system', content: 'You are the parent.' },
  { role: 'user', content: 'Look at the repository.' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'developer__list_directory', arguments: { path: '.' } }] },
  { role: 'tool', toolCallId: 'c1', toolName: 'developer__list_directory', content: 'a.txt\nb.txt' },
  { role: 'assistant', content: 'Two files.' },
  { role: 'user', content: 'Now split the work.' },
];

describe('windowedMessages with a prefix', () => {
  test('the parent\'s messages 0..n-1, then the fork\'s own; the parent\'s later messages stay out', async () => {
    await store('parent', [...parentTurns, { role: 'assistant', content: '', toolCalls: [{ id: 'c2', name: 'delegate', arguments: { fork: true, instructions: 'x' } }] }]);
    await store('fork', [{ role: 'user', content: 'Fork task.' }, { role: 'assistant', content: 'Done.' }]);
    const prefix: ConversationPrefix = { conversationId: 'parent', length: parentTurns.length };
    const messages = await windowedMessages(conversations, blobs, 'fork', 2, undefined, prefix);
    expect(messages).toEqual([...parentTurns, { role: 'user', content: 'Fork task.' }, { role: 'assistant', content: 'Done.' }]);
  });

  test('a compacted parent: the fork sees what the parent\'s model saw (its summary); a fork of a fork sees both prefixes', async () => {
    await store('parent', parentTurns);
    await blobs.put('summaries/parent/0000000004.json', JSON.stringify({ text: 'The parent listed two files.', head: 2, tailStart: 4, usage: { inputTokens: 0, outputTokens: 0 } }));
    const window = { head: 2, summaryKey: 'summaries/parent/0000000004.json', tailStart: 4, compactions: 1 };
    await store('fork', [{ role: 'user', content: 'Fork task.' }, { role: 'assistant', content: 'Working.' }, { role: 'user', content: 'More.' }]);
    await store('grandchild', [{ role: 'user', content: 'Grandchild task.' }]);
    const forkPrefix: ConversationPrefix = { conversationId: 'parent', length: 6, window };
    const nested: ConversationPrefix = { conversationId: 'fork', length: 3, prefix: forkPrefix };
    const messages = await windowedMessages(conversations, blobs, 'grandchild', 1, undefined, nested);
    expect(messages.map((message) => message.content)).toEqual([
      'You are the parent.',
      'Look at the repository.\n\n[Summary of the earlier conversation, written when it grew too long for the context window]\nThe parent listed two files.',
      'Two files.',
      'Now split the work.',
      'Fork task.',
      'Working.',
      'More.',
      'Grandchild task.',
    ]);
  });
});

describe('compaction of a fork', () => {
  test('summarises only the fork\'s own turns; the parent\'s prefix and the fork\'s task stay verbatim', async () => {
    await store('parent', parentTurns);
    const long = 'x'.repeat(2_000);
    const own: ChatMessage[] = [{ role: 'user', content: 'Fork task.' }];
    for (let turn = 0; turn < 6; turn += 1) {
      own.push({ role: 'assistant', content: '', toolCalls: [{ id: `f${turn}`, name: 'developer__read_file', arguments: { path: 'a.txt' } }] });
      own.push({ role: 'tool', toolCallId: `f${turn}`, toolName: 'developer__read_file', content: `${turn} ${long}` });
    }
    await store('fork', own);
    // Several summarising calls may fold the turns in chunks; each answers with the summary so far.
    const summariser = createScriptedModel(() => ({ text: 'The fork read a.txt six times.' }));
    const prefix: ConversationPrefix = { conversationId: 'parent', length: parentTurns.length };
    const result = await compactConversation(
      { workflowId: 'wf', conversationId: 'fork', length: own.length, route: { provider: 'p', model: 'm' }, prefix },
      { conversations, blobs, model: summariser, route: { provider: 'p', model: 'm' }, contextWindow: 4_000 },
    );
    expect(result.compacted).toBe(true);
    if (!result.compacted) return;
    // The head is the fork's own task: the prefix stands before it and is never summarised.
    expect(result.window.head).toBe(1);
    const summarised = summariser.requests.map((request) => request.messages[1]?.content ?? '');
    expect(summarised.length).toBeGreaterThan(0);
    for (const prompt of summarised) {
      expect(prompt).toContain("The agent's task (kept verbatim, do not summarise it):\nFork task.");
      expect(prompt).not.toContain('Look at the repository.');
    }
    const after = await windowedMessages(conversations, blobs, 'fork', own.length, result.window, prefix);
    expect(after.slice(0, parentTurns.length)).toEqual(parentTurns);
    expect(after[parentTurns.length]?.content).toMatch(/^Fork task\.\n\n\[Summary of the earlier conversation/);
    expect(summariser.rejectedCalls).toEqual([]);
  });
});

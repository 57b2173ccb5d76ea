import { ApplicationFailure } from '@temporalio/common';
import type { CompactConversationInput, CompactConversationOutput } from '../contracts/activities';
import { FailureType } from '../contracts/failures';
import {
  compactionChunkShare,
  compactionMaxCalls,
  compactionMessageMaxChars,
  compactionSummaryMaxTokens,
  compactionTailShare,
} from '../contracts/limits/workflow';
import { addUsage, zeroUsage, type ChatMessage, type ModelRoute, type TokenUsage } from '../contracts/model';
import type { ContextWindowState, ConversationPrefix } from '../contracts/subagent';
import { estimateMessageTokens, estimateTokens } from '../domain/token-estimate';
import type { ChatModel } from '../llm/model-port';
import { isBlobConflictError, type BlobStore } from './blob-store';
import { conversationSegment, type ConversationStore } from './conversation-store';

/**
 * Context compaction (SEMANTICS §5): older turns of a conversation are summarised by the model into one
 * stored summary; the system prompt, the task and the last turns stay verbatim. The conversation store
 * itself is never rewritten — a compaction state (`head`, `summaryKey`, `tailStart`) says which stored
 * messages a summary stands for, and {@link windowedMessages} builds the prompt from it.
 */

/** Blob key of the summary that ends at `tailStart`. */
export function summaryKey(conversationId: string, tailStart: number): string {
  return `summaries/${conversationSegment(conversationId)}/${String(tailStart).padStart(10, '0')}.json`;
}

/** The text of a stored summary (stored as `{text, head, tailStart, usage}`). */
async function readSummary(blobs: BlobStore, key: string): Promise<string> {
  const raw = await blobs.get(key);
  // A stored summary that is missing or unreadable stays so: no retry of the activity can fix it (review N7).
  if (raw === undefined) throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `the compaction summary ${key} is missing from the blob store`, nonRetryable: true });
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `the compaction summary ${key} is not valid JSON: ${String(error)}`, nonRetryable: true });
  }
  if (typeof parsed !== 'object' || parsed === null || !('text' in parsed) || typeof parsed.text !== 'string') {
    throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `the compaction summary ${key} is not valid (no "text")`, nonRetryable: true });
  }
  return parsed.text;
}

/** The text that stands for the summarised turns, as the model reads it. */
function summaryBlock(text: string): string {
  return `[Summary of the earlier conversation, written when it grew too long for the context window]\n${text}`;
}

/**
 * The messages a model call sees: all of them, or — after a compaction — the head (system prompt and
 * task, with the summary added to the task's message so roles keep alternating), then the verbatim tail.
 * A fork's conversation continues another one (`prefix`): the model first sees what the parent's model saw
 * of the parent's turns (read from the parent's stored messages, with the parent's compaction state), then
 * the fork's own messages. The prefix is never summarised by the fork's compaction (decision 0011).
 */
export async function windowedMessages(
  conversations: ConversationStore,
  blobs: BlobStore,
  conversationId: string,
  length: number,
  window: ContextWindowState | undefined,
  prefix?: ConversationPrefix,
): Promise<ChatMessage[]> {
  // Recursion is bounded by the delegation depth: a fork of a fork is one level deeper each time.
  const before = prefix ? await windowedMessages(conversations, blobs, prefix.conversationId, prefix.length, prefix.window, prefix.prefix) : [];
  if (!window) return [...before, ...(await conversations.read(conversationId, length))];
  const head = await conversations.readRange(conversationId, 0, window.head);
  const summary = await readSummary(blobs, window.summaryKey);
  const tail = await conversations.readRange(conversationId, window.tailStart, length - window.tailStart);
  return [...before, ...withSummary(head, summary), ...tail];
}

/** The head with the summary appended to its last user message (or added as a user message). */
function withSummary(head: ChatMessage[], summary: string): ChatMessage[] {
  const last = head[head.length - 1];
  if (last?.role === 'user') return [...head.slice(0, -1), { role: 'user', content: `${last.content}\n\n${summaryBlock(summary)}` }];
  return [...head, { role: 'user', content: summaryBlock(summary) }];
}

/** Where the verbatim head ends: after the first user message (the task; in a fork, its own task after the parent's turns). */
function headLength(messages: ChatMessage[]): number {
  const firstUser = messages.findIndex((message) => message.role === 'user');
  return firstUser < 0 ? Math.min(1, messages.length) : firstUser + 1;
}

/** One message as plain text for the summarising call (long ones cut in the middle). */
function render(message: ChatMessage): string {
  const cut = (text: string) => text.length <= compactionMessageMaxChars ? text : `${text.slice(0, compactionMessageMaxChars / 2)}\n[… ${text.length - compactionMessageMaxChars} characters left out …]\n${text.slice(-compactionMessageMaxChars / 2)}`;
  switch (message.role) {
    case 'system':
      return `[system] ${cut(message.content)}`;
    case 'user':
      return `[user] ${cut(message.content)}`;
    case 'assistant': {
      const calls = (message.toolCalls ?? []).map((call) => `\n  (called ${call.name} with ${cut(JSON.stringify(call.arguments))})`).join('');
      return `[assistant] ${cut(message.content)}${calls}`;
    }
    case 'tool':
      return `[result of ${message.toolName}${message.isError ? ', an error' : ''}] ${cut(message.content)}`;
  }
}

const summariserInstructions =
  'You compress the history of a working session between a user and an AI agent so the agent can continue the work. ' +
  'Write a faithful, dense summary: the goal, decisions made, facts learned (file names, commands, results, errors), ' +
  'what was done and what remains. Keep exact identifiers. Do not add anything that is not in the history. Plain text only.';

/** What compaction needs. */
export interface CompactionDependencies {
  conversations: ConversationStore;
  blobs: BlobStore;
  /** The model of the route, and its context window. */
  model: ChatModel;
  route: ModelRoute;
  contextWindow: number;
  abortSignal?: AbortSignal;
}

/**
 * Summarises the turns between the current window's tail start and a new cut point, chosen so that the
 * verbatim tail fits its share of the context window and starts at an assistant message (so a tool call
 * is never separated from its result). Idempotent: a retry finds the stored summary and reuses it.
 */
export async function compactConversation(input: CompactConversationInput, deps: CompactionDependencies): Promise<CompactConversationOutput & { usage: TokenUsage }> {
  const messages = await deps.conversations.read(input.conversationId, input.length);
  const head = input.window?.head ?? headLength(messages);
  const summarisedUpTo = input.window?.tailStart ?? head;
  const before = await windowedMessages(deps.conversations, deps.blobs, input.conversationId, input.length, input.window, input.prefix);
  const tokensBefore = estimateTokens(before);

  const tailBudget = verbatimTailBudget(deps.contextWindow, estimateTokens(messages.slice(0, head)), input) * (input.aggressive ? 0.4 : 1);
  const cuts: number[] = [];
  for (let index = summarisedUpTo + 1; index < messages.length; index += 1) {
    if (messages[index]?.role === 'assistant') cuts.push(index);
  }
  if (cuts.length === 0) return { compacted: false, reason: 'there are no completed turns after the last summary to summarise', usage: zeroUsage };
  let tailTokens = 0;
  const suffixTokens: number[] = new Array<number>(messages.length + 1).fill(0);
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    tailTokens += message ? estimateMessageTokens(message) : 0;
    suffixTokens[index] = tailTokens;
  }
  // The earliest cut whose tail fits keeps the most verbatim; if none fits, keep only the last turn.
  const tailStart = cuts.find((cut) => (suffixTokens[cut] ?? 0) <= tailBudget) ?? cuts[cuts.length - 1] ?? summarisedUpTo;
  const key = summaryKey(input.conversationId, tailStart);

  let usage: TokenUsage = zeroUsage;
  const stored = await deps.blobs.get(key);
  if (stored === undefined) {
    const previous = input.window ? await readSummary(deps.blobs, input.window.summaryKey) : undefined;
    const task = messages.slice(0, head).filter((message) => message.role === 'user').map((message) => message.content).join('\n');
    const result = await summarise(task, previous, messages.slice(summarisedUpTo, tailStart), deps);
    usage = result.usage;
    const body = JSON.stringify({ text: result.text, head, tailStart, usage });
    try {
      await deps.blobs.put(key, body);
    } catch (error) {
      // Another attempt stored its summary first: the first writer wins, and this one is used.
      if (!isBlobConflictError(error)) throw error;
    }
  }
  const window: ContextWindowState = { head, summaryKey: key, tailStart, compactions: (input.window?.compactions ?? 0) + 1 };
  const after = await windowedMessages(deps.conversations, deps.blobs, input.conversationId, input.length, window, input.prefix);
  return { compacted: true, window, summarisedMessages: tailStart - summarisedUpTo, tokensBefore, tokensAfter: estimateTokens(after), usage };
}

/** Most tokens a summary may take: a tenth of the context window, at most {@link compactionSummaryMaxTokens}. */
function summaryMaxTokens(contextWindow: number): number {
  return Math.max(64, Math.min(compactionSummaryMaxTokens, Math.floor(contextWindow / 10)));
}

/**
 * How many tokens of recent turns compaction keeps verbatim: a share of the context window, but never
 * more than half of what the threshold leaves once the tool specs, the kept head and the summary are in
 * the prompt. Sized by messages alone, a conversation with large toolsets landed over the threshold right
 * after compacting and compacted again at every turn, one summarising call per turn (review N8).
 */
export function verbatimTailBudget(contextWindow: number, headTokens: number, input: Pick<CompactConversationInput, 'budget'>): number {
  const share = contextWindow * compactionTailShare;
  if (!input.budget) return share;
  const room = input.budget.thresholdTokens - input.budget.toolTokens - headTokens - summaryMaxTokens(contextWindow);
  return Math.max(0, Math.min(share, room / 2));
}

/** Folds the messages into the previous summary in chunks that each fit a share of the context window. */
async function summarise(task: string, previous: string | undefined, messages: ChatMessage[], deps: CompactionDependencies): Promise<{ text: string; usage: TokenUsage }> {
  const chunkBudget = deps.contextWindow * compactionChunkShare;
  const maxOutputTokens = summaryMaxTokens(deps.contextWindow);
  let summary = previous;
  let usage: TokenUsage = zeroUsage;
  let index = 0;
  for (let calls = 0; index < messages.length; calls += 1) {
    if (calls >= compactionMaxCalls) {
      throw ApplicationFailure.create({
        type: FailureType.compactionFailed,
        message: `compaction needed more than ${compactionMaxCalls} summarising calls; the conversation is too large to compact`,
        nonRetryable: true,
      });
    }
    const chunk: string[] = [];
    let tokens = 0;
    while (index < messages.length) {
      const message = messages[index];
      if (!message) break;
      const text = render(message);
      const cost = estimateTokens([{ role: 'user', content: text }]);
      if (chunk.length > 0 && tokens + cost > chunkBudget) break;
      chunk.push(text);
      tokens += cost;
      index += 1;
    }
    const prompt = [
      `The agent's task (kept verbatim, do not summarise it):\n${task.length > compactionMessageMaxChars ? `${task.slice(0, compactionMessageMaxChars)}…` : task}\n`,
      summary ? `The summary so far:\n${summary}\n` : '',
      `The next part of the history:\n${chunk.join('\n')}`,
      '\nWrite the updated summary of everything above.',
    ].join('\n');
    const response = await deps.model.generate(
      { route: deps.route, messages: [{ role: 'system', content: summariserInstructions }, { role: 'user', content: prompt }], tools: [], maxOutputTokens },
      deps.abortSignal ? { abortSignal: deps.abortSignal } : {},
    );
    usage = addUsage(usage, response.usage);
    const text = response.text.trim();
    if (text.length === 0) {
      // An empty summary would silently replace the history it stands for (review N8): a failed call,
      // retried with the activity like any model outage; the stored summary is written only once all succeed.
      throw ApplicationFailure.create({
        type: FailureType.modelUnavailable,
        message: `the model answered an empty summary for compaction (finish reason ${response.finishReason}); nothing was replaced, the compaction is tried again`,
      });
    }
    // A summary cut off at its token limit is kept (it is the best there is) and says so, for the agent reading it.
    summary = response.finishReason === 'length' ? `${text}\n[this summary was cut off at its limit of ${maxOutputTokens} tokens; details of the older turns may be missing]` : text;
  }
  if (summary === undefined) throw ApplicationFailure.create({ type: FailureType.compactionFailed, message: 'compaction had no turns to summarise', nonRetryable: true });
  return { text: summary, usage };
}

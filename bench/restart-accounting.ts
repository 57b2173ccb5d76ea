import type { RecordedRequest } from '../test/support/scripted-openai-server';
import type { ConversationStore } from '../src/activities/conversation-store';
import { mapLimit } from './harness';
import { openAIMessages } from './scripted-answers';

/**
 * Which model calls a worker restart made the model server answer again, split the way the issue asks:
 * (a) calls whose answer had already been stored before the kill (must be none: a retried modelTurn reads
 * the stored answer, `ConversationStore.readStored`), and (b) calls that were in flight at the kill and were
 * asked again (at most one per delegation that had a call in flight).
 *
 * A model call is named by its delegation and its position: the number of assistant messages in the request
 * (the k-th answer of the conversation). "Stored" is what the conversation store holds while no worker runs
 * (read after the old worker died and before the new one polls), so it is exact, not inferred from timing.
 */

/** One delegation: its tag in the model requests and its conversation id in the store. */
export interface TrackedDelegation {
  tag: string;
  conversationId: string;
}

/** The answers (positions) each delegation had stored, by tag. */
export type StoredAnswers = Map<string, Set<number>>;

/** The position of a request: how many answers the conversation already had. */
export function answerPosition(record: RecordedRequest): number {
  return openAIMessages(record.body).filter((message) => message.role === 'assistant').length;
}

/** Reads, for every delegation, the positions of the model answers stored in its conversation. */
export async function storedAnswers(conversations: ConversationStore, delegations: readonly TrackedDelegation[]): Promise<StoredAnswers> {
  const result: StoredAnswers = new Map();
  await mapLimit(delegations, 8, async ({ tag, conversationId }) => {
    const positions = new Set<number>();
    let answers = 0;
    for (let seq = 0; ; seq += 1) {
      const stored = await conversations.readStored(conversationId, seq);
      if (stored === undefined) break;
      if (stored.message.role !== 'assistant') continue;
      // Only a model call stores its answer with an outcome; that is the record a retry reuses.
      if (stored.outcome !== undefined) positions.add(answers);
      answers += 1;
    }
    result.set(tag, positions);
  });
  return result;
}

/** The split for one kill. */
export interface RestartRepeats {
  /** (a) requests after the kill for an answer stored before it. */
  storedAsked: number;
  /** (b) requests after the kill for a call that had a request in flight (or answered but unstored) at the kill. */
  inFlightAsked: number;
  /** Delegations that had a model call in flight at the kill (the bound of b). */
  inFlightDelegations: number;
  /** Most (b) requests of one delegation. */
  maxInFlightAskedPerDelegation: number;
  /** Requests in flight at the kill that the server saw aborted. */
  abortedAtKill: number;
}

/**
 * Splits the requests received after `killedAt` into (a) and (b). `tagOf` names a request's delegation
 * (undefined: not one of ours).
 */
export function restartRepeats(requests: readonly RecordedRequest[], tagOf: (record: RecordedRequest) => string | undefined, stored: StoredAnswers, killedAt: number): RestartRepeats {
  const askedBefore = new Map<string, Set<number>>();
  let abortedAtKill = 0;
  for (const record of requests) {
    const tag = tagOf(record);
    if (tag === undefined || !stored.has(tag) || record.receivedAt >= killedAt) continue;
    const position = answerPosition(record);
    if (stored.get(tag)?.has(position)) continue;
    // Asked before the kill but not stored: in flight when the worker died (aborted, or answered and lost).
    const open = askedBefore.get(tag) ?? new Set<number>();
    open.add(position);
    askedBefore.set(tag, open);
    if (record.aborted) abortedAtKill += 1;
  }
  let storedAsked = 0;
  const inFlightAskedBy = new Map<string, number>();
  for (const record of requests) {
    const tag = tagOf(record);
    if (tag === undefined || record.receivedAt < killedAt) continue;
    const answers = stored.get(tag);
    if (answers === undefined) continue;
    const position = answerPosition(record);
    if (answers.has(position)) storedAsked += 1;
    else if (askedBefore.get(tag)?.has(position)) inFlightAskedBy.set(tag, (inFlightAskedBy.get(tag) ?? 0) + 1);
  }
  const perDelegation = [...inFlightAskedBy.values()];
  return {
    storedAsked,
    inFlightAsked: perDelegation.reduce((sum, count) => sum + count, 0),
    inFlightDelegations: askedBefore.size,
    maxInFlightAskedPerDelegation: perDelegation.length > 0 ? Math.max(...perDelegation) : 0,
    abortedAtKill,
  };
}

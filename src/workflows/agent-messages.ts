import { ApplicationFailure } from '@temporalio/workflow';
import { FailureType } from '../contracts/failures';
import { defaultMaxQueuedMessages, maxMessageLength, previewLength, recentMessageIdCount } from '../contracts/limits';
import type { QueuedMessage } from '../contracts/carried-agent-state';
import type { SendMessageInput, SendMessageResult } from '../contracts/subagent-messages';
import { preview } from '../domain/subagent-prompt';
import { updateRefusal } from './update-refusal';

/** What queueing a message needs of the agent it is for. */
export interface MessageQueueHost {
  pendingMessages: QueuedMessage[];
  recentMessageIds: string[];
}

/**
 * Refuses a message past the queue's cap (review N12): the queue is carried across continue-as-new, and an
 * unbounded one could push that input past Temporal's payload limit. A repeated delivery of a message the
 * queue already took is not refused (it is dropped as a duplicate). The failure's type lets the API answer 429.
 */
export function validateQueueRoom(agent: MessageQueueHost, input: SendMessageInput, maxQueued = defaultMaxQueuedMessages): void {
  if (input?.messageId !== undefined && agent.recentMessageIds.includes(input.messageId)) return;
  if (agent.pendingMessages.length < maxQueued) return;
  throw ApplicationFailure.create({
    type: FailureType.messageQueueFull,
    nonRetryable: true,
    message: `${agent.pendingMessages.length} messages are already queued; the limit is ${maxQueued} (ERRAND_MAX_QUEUED_MESSAGES): send it again once the queue has room`,
  });
}

/** Validates a message for an agent (the sendMessage update's validator). Throws with the reason. */
export function validateMessage(input: SendMessageInput): void {
  const hasText = typeof input?.message === 'string';
  const hasKey = typeof input?.messageKey === 'string';
  if (hasText === hasKey) throw updateRefusal(FailureType.invalidInput, 'give the message as `message` (text) or `messageKey` (a stored message), not both and not neither');
  if (hasText && (input.message ?? '').trim().length === 0) throw updateRefusal(FailureType.invalidInput, 'message must be a non-empty string');
  const length = hasText ? (input.message ?? '').length : (input.messageChars ?? 0);
  if (length > maxMessageLength) throw updateRefusal(FailureType.invalidInput, `message is ${length} characters; the limit is ${maxMessageLength}`);
}

/**
 * Queues an accepted message (dropping a repeated delivery of the same message id). The ids are kept in a
 * bounded list on the agent so a retried delivery is recognised also after continue-as-new.
 */
export function acceptMessage(agent: MessageQueueHost, input: SendMessageInput, startsAtOnce: boolean): SendMessageResult {
  if (input.messageId !== undefined && agent.recentMessageIds.includes(input.messageId)) {
    return { accepted: true, queuedTurns: agent.pendingMessages.length, duplicate: true };
  }
  if (input.messageId !== undefined) {
    agent.recentMessageIds.push(input.messageId);
    if (agent.recentMessageIds.length > recentMessageIdCount) agent.recentMessageIds.splice(0, agent.recentMessageIds.length - recentMessageIdCount);
  }
  const text = input.message;
  agent.pendingMessages.push({
    ...(text !== undefined ? { text } : {}),
    ...(input.messageKey !== undefined ? { key: input.messageKey } : {}),
    preview: text !== undefined ? preview(text, previewLength) : `(stored message, ${input.messageChars ?? 0} characters)`,
  });
  return { accepted: true, queuedTurns: startsAtOnce ? 0 : agent.pendingMessages.length };
}

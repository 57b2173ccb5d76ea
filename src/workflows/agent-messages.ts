import { ApplicationFailure } from '@temporalio/workflow';
import { FailureType } from '../contracts/failures';
import { defaultMaxQueuedMessages, maxMessageLength } from '../contracts/limits/workflow';
import type { AgentStateView } from '../contracts/agent-state';
import type { SendMessageInput } from '../contracts/subagent-messages';
import { isRepeatedDelivery } from '../domain/message-queue';
import { updateRefusal } from './update-refusal';

/** What queueing a message needs of the agent it is for. */
export type MessageQueueHost = Pick<AgentStateView, 'pendingMessages' | 'recentMessageIds'>;

/**
 * Refuses a message past the queue's cap (review N12): the queue is carried across continue-as-new, and an
 * unbounded one could push that input past Temporal's payload limit. A repeated delivery of a message the
 * queue already took is not refused (it is dropped as a duplicate). The failure's type lets the API answer 429.
 */
export function validateQueueRoom(agent: MessageQueueHost, input: SendMessageInput, maxQueued = defaultMaxQueuedMessages): void {
  if (isRepeatedDelivery(agent, input?.messageId)) return;
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

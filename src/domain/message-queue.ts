import type { AgentState, AgentStateView } from '../contracts/agent-state';
import type { QueuedMessage } from '../contracts/carried-agent-state';
import { previewLength, recentMessageIdCount } from '../contracts/limits/workflow';
import type { SendMessageInput, SendMessageResult } from '../contracts/subagent-messages';
import { preview } from './subagent-prompt';

/*
 * The agent's message queue (decision 0040): messages accepted by a session or continuable subagent wait
 * here for their turn, and the ids of the latest ones are kept so a retried delivery is recognised, also
 * after continue-as-new. Pure functions over AgentState.
 */

/** Whether the queue already took a message with this id (a repeated delivery). */
export function isRepeatedDelivery(state: Pick<AgentStateView, 'recentMessageIds'>, messageId: string | undefined): boolean {
  return messageId !== undefined && state.recentMessageIds.includes(messageId);
}

/**
 * Queues an accepted message; a repeated delivery of the same message id is dropped. `startsAtOnce`: the
 * agent waits with an empty queue, so the message runs now (the result says no turn is queued before it).
 */
export function queueMessage(state: AgentState, input: SendMessageInput, startsAtOnce: boolean): { state: AgentState; result: SendMessageResult } {
  if (isRepeatedDelivery(state, input.messageId)) {
    return { state, result: { accepted: true, queuedTurns: state.pendingMessages.length, duplicate: true } };
  }
  const recentMessageIds = input.messageId !== undefined ? [...state.recentMessageIds, input.messageId].slice(-recentMessageIdCount) : state.recentMessageIds;
  const text = input.message;
  const message: QueuedMessage = {
    ...(text !== undefined ? { text } : {}),
    ...(input.messageKey !== undefined ? { key: input.messageKey } : {}),
    preview: text !== undefined ? preview(text, previewLength) : `(stored message, ${input.messageChars ?? 0} characters)`,
  };
  const pendingMessages = [...state.pendingMessages, message];
  return { state: { ...state, recentMessageIds, pendingMessages }, result: { accepted: true, queuedTurns: startsAtOnce ? 0 : pendingMessages.length } };
}

/** Takes the next queued message (undefined when the queue is empty). */
export function takeNextMessage(state: AgentState): { state: AgentState; message: QueuedMessage | undefined } {
  const [message, ...rest] = state.pendingMessages;
  return message ? { state: { ...state, pendingMessages: rest }, message } : { state, message: undefined };
}

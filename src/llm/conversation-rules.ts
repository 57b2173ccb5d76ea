import type { ChatMessage } from '../contracts/model';

/**
 * The conversation rules real providers enforce, checked on errand's own messages: what the in-process
 * scripted model rejects, so a conversation that would fail at a real provider fails in the tests too.
 * Where providers differ, the strictest rule wins:
 *
 * - every assistant tool call is answered by exactly one tool result with its id, before any other
 *   message (OpenAI and Anthropic both answer 400 otherwise), and no tool result answers a call that is
 *   not pending;
 * - system messages come only before the conversation (Anthropic takes system text only at the top, and
 *   the AI SDK's Anthropic provider refuses to send a system message in the middle);
 * - the first message after the system messages is a user message (Anthropic);
 * - user text is not empty or only whitespace (Anthropic: "text content blocks must be non-empty").
 *
 * Consecutive user messages, and a tool result followed by user text, are allowed: providers merge them
 * into one turn (the AI SDK does so for Anthropic).
 */

/** A broken rule, phrased as the provider that enforces it phrases it. */
export interface ConversationViolation {
  message: string;
  /** The request field at fault, OpenAI style (`messages.[3].role`). */
  param: string;
}

/** The first rule `messages` break, or undefined when the conversation is valid. */
export function findConversationViolation(messages: readonly ChatMessage[]): ConversationViolation | undefined {
  let started = false;
  /** Ids of the latest assistant message's tool calls that have no result yet. */
  let pending: string[] = [];
  let pendingFrom = -1;

  for (const [index, message] of messages.entries()) {
    if (pending.length > 0 && message.role !== 'tool') return unansweredCalls(pendingFrom, pending);
    switch (message.role) {
      case 'system':
        if (started) {
          return {
            message: `messages.[${index}]: a system message after the conversation has started is not accepted (Anthropic takes system text only before the first message; send it as user text)`,
            param: `messages.[${index}].role`,
          };
        }
        break;
      case 'user':
        started = true;
        if (message.content.trim() === '') {
          return {
            message: message.content === '' ? 'messages: text content blocks must be non-empty' : 'messages: text content blocks must contain non-whitespace text',
            param: `messages.[${index}].content`,
          };
        }
        break;
      case 'assistant':
        if (!started) return { message: 'messages: first message must use the "user" role', param: `messages.[${index}].role` };
        pending = (message.toolCalls ?? []).map((call) => call.id);
        pendingFrom = index;
        break;
      case 'tool': {
        started = true;
        const at = pending.indexOf(message.toolCallId);
        if (at < 0) {
          return {
            message: `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (tool_call_id ${message.toolCallId} answers no pending call)`,
            param: `messages.[${index}].role`,
          };
        }
        pending.splice(at, 1);
        break;
      }
    }
  }
  if (pending.length > 0) return unansweredCalls(pendingFrom, pending);
  return undefined;
}

function unansweredCalls(index: number, ids: string[]): ConversationViolation {
  return {
    message:
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
      `The following tool_call_ids did not have response messages: ${ids.join(', ')}`,
    param: `messages.[${index}].role`,
  };
}

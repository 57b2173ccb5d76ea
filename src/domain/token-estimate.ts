import type { ChatMessage, ToolSpec } from '../contracts/model';

/**
 * A conservative estimate of how many tokens a prompt takes, without a tokenizer: UTF-8 bytes / 3,
 * rounded up (real tokenizers average 3.5–4.5 bytes per token for English and code), plus a small
 * overhead per message and tool. Both the compaction threshold and the strict stand-in use this one
 * estimator, so a conversation errand considers within bounds is within bounds for the stand-in too.
 */

const bytesPerToken = 3;
const messageOverheadTokens = 4;
const toolOverheadTokens = 8;

/** Estimated tokens of one text. */
export function estimateTextTokens(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
  }
  return Math.ceil(bytes / bytesPerToken);
}

/** Estimated tokens of one message (content, tool calls and their arguments, framing). */
export function estimateMessageTokens(message: ChatMessage): number {
  let tokens = messageOverheadTokens + estimateTextTokens(message.content);
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) tokens += estimateTextTokens(call.name) + estimateTextTokens(JSON.stringify(call.arguments)) + messageOverheadTokens;
  }
  if (message.role === 'tool') tokens += estimateTextTokens(message.toolName);
  return tokens;
}

/** Estimated tokens of a prompt: its messages and the tool specs sent with it. */
export function estimatePromptTokens(messages: readonly ChatMessage[], tools: readonly ToolSpec[] = []): number {
  let tokens = 0;
  for (const message of messages) tokens += estimateMessageTokens(message);
  for (const tool of tools) tokens += toolOverheadTokens + estimateTextTokens(tool.name) + estimateTextTokens(tool.description) + estimateTextTokens(JSON.stringify(tool.inputSchema));
  return tokens;
}

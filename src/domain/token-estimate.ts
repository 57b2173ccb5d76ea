import type { ChatMessage, ToolSpec } from '../contracts/model';
import {
  estimateCharsPerToken,
  estimateMessageOverheadTokens,
  estimateRequestOverheadTokens,
  estimateToolOverheadTokens,
} from '../contracts/limits/workflow';

/**
 * The one token estimate of errand: compaction decides with it when a conversation is near the model's
 * context window, and the scripted stand-in model (in process and over HTTP) checks its context window and
 * output-token limit with it, so what the tests enforce is what errand plans with.
 *
 * It is a deliberately pessimistic character count, not a tokenizer (there is no tokenizer that fits
 * every provider, and workflow code must stay pure): ASCII text counts `estimateCharsPerToken` characters
 * per token, every other character (CJK, emoji, accented letters) a whole token, and each message, tool
 * call and tool spec adds a few tokens of framing. Pure and deterministic: safe in workflow code.
 */

/** Estimated tokens of a piece of text. */
export function estimateTextTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  // By UTF-16 code unit rather than a string iterator (several times faster on long texts); a surrogate
  // pair counts once, as one code point, like the iterator counts it.
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) {
      ascii += 1;
      continue;
    }
    other += 1;
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) index += 1;
    }
  }
  return Math.ceil(ascii / estimateCharsPerToken + other);
}

/**
 * The longest prefix of `text` whose estimate is at most `maxTokens` tokens: what a model that stops at
 * its output-token limit would have written of `text`.
 */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (estimateTextTokens(text) <= maxTokens) return text;
  if (maxTokens <= 0) return '';
  // Walk by code points so a surrogate pair is never split; the estimate only grows as the prefix does.
  let ascii = 0;
  let other = 0;
  let end = 0;
  for (const character of text) {
    const isAscii = character.charCodeAt(0) < 0x80;
    const nextAscii = ascii + (isAscii ? 1 : 0);
    const nextOther = other + (isAscii ? 0 : 1);
    if (Math.ceil(nextAscii / estimateCharsPerToken + nextOther) > maxTokens) break;
    ascii = nextAscii;
    other = nextOther;
    end += character.length;
  }
  return text.slice(0, end);
}

/** Estimated tokens of one tool call as the model writes it (name, id and JSON arguments). */
export function estimateToolCallTokens(call: { id: string; name: string; arguments: unknown }): number {
  return estimateToolOverheadTokens + estimateTextTokens(call.id) + estimateTextTokens(call.name) + estimateTextTokens(JSON.stringify(call.arguments) ?? '');
}

/**
 * Estimated tokens of one message. A tool result counts its content and call id, not its tool name:
 * the vendors' wire formats do not carry the name, so an estimate made from a request body (the
 * stand-in's) and one made from errand's own messages agree.
 */
export function estimateMessageTokens(message: ChatMessage): number {
  switch (message.role) {
    case 'system':
    case 'user':
      return estimateMessageOverheadTokens + estimateTextTokens(message.content);
    case 'assistant':
      // Thinking sent back counts too (Anthropic); erring high where a provider drops it is the safe side.
      return (
        estimateMessageOverheadTokens +
        estimateTextTokens(message.content) +
        (message.toolCalls ?? []).reduce((sum, call) => sum + estimateToolCallTokens(call), 0) +
        (message.reasoning ?? []).reduce((sum, block) => sum + estimateTextTokens(block.text), 0)
      );
    case 'tool':
      return estimateMessageOverheadTokens + estimateTextTokens(message.toolCallId) + estimateTextTokens(message.content);
  }
}

/** Estimated tokens of one offered tool: name, description and input schema. */
export function estimateToolSpecTokens(tool: ToolSpec): number {
  return (
    estimateToolOverheadTokens +
    estimateTextTokens(tool.name) +
    estimateTextTokens(tool.description) +
    schemaTokens(tool.inputSchema)
  );
}

/** Tokens of each input schema seen (schemas are shared objects, offered again on every call). */
const schemaTokenCache = new WeakMap<object, number>();

function schemaTokens(schema: object): number {
  let tokens = schemaTokenCache.get(schema);
  if (tokens === undefined) {
    tokens = estimateTextTokens(JSON.stringify(schema));
    schemaTokenCache.set(schema, tokens);
  }
  return tokens;
}

/**
 * Estimated prompt tokens of a model request: every message, every offered tool, and the request's own
 * framing. A request fits a context window when this plus its output-token limit is at most the window.
 */
export function estimateTokens(messages: readonly ChatMessage[], tools: readonly ToolSpec[] = []): number {
  return (
    estimateRequestOverheadTokens +
    messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0) +
    tools.reduce((sum, tool) => sum + estimateToolSpecTokens(tool), 0)
  );
}

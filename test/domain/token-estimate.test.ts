import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSpec } from '../../src/contracts/model';
import { estimateCharsPerToken, estimateMessageOverheadTokens, estimateRequestOverheadTokens } from '../../src/contracts/limits/workflow';
import {
  estimateMessageTokens,
  estimateTextTokens,
  estimateTokens,
  estimateToolSpecTokens,
  truncateToTokens,
} from '../../src/domain/token-estimate';

describe('token estimate', () => {
  it('counts ASCII text at estimateCharsPerToken characters per token, rounded up', () => {
    expect(estimateTextTokens('')).toBe(0);
    expect(estimateTextTokens('a')).toBe(1);
    expect(estimateTextTokens('a'.repeat(70))).toBe(Math.ceil(70 / estimateCharsPerToken));
    expect(estimateTextTokens('a'.repeat(71))).toBe(Math.ceil(71 / estimateCharsPerToken));
  });

  it('counts every non-ASCII character as a whole token, surrogate pairs once', () => {
    expect(estimateTextTokens('日本語')).toBe(3);
    expect(estimateTextTokens('😀😀')).toBe(2);
    expect(estimateTextTokens('déjà')).toBe(Math.ceil(2 / estimateCharsPerToken + 2));
  });

  it('is never below a quarter of the characters (a common tokenizer ratio), so it errs high', () => {
    for (const text of ['The quick brown fox jumps over the lazy dog.', '{"path":"src/index.ts","lines":[1,2,3]}', 'x'.repeat(1000)]) {
      expect(estimateTextTokens(text)).toBeGreaterThanOrEqual(Math.ceil(text.length / 4));
    }
  });

  it('adds framing per message, counts tool calls and tool results, but not the tool name of a result', () => {
    const user: ChatMessage = { role: 'user', content: 'hello' };
    expect(estimateMessageTokens(user)).toBe(estimateMessageOverheadTokens + estimateTextTokens('hello'));

    const withCall: ChatMessage = { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'read', arguments: { path: 'a' } }] };
    const withoutCall: ChatMessage = { role: 'assistant', content: '' };
    expect(estimateMessageTokens(withCall)).toBeGreaterThan(estimateMessageTokens(withoutCall) + estimateTextTokens('{"path":"a"}'));

    const result = (toolName: string): ChatMessage => ({ role: 'tool', toolCallId: 'call_1', toolName, content: 'file body' });
    expect(estimateMessageTokens(result('read'))).toBe(estimateMessageTokens(result('a_much_longer_tool_name')));
  });

  it('estimates a request as its messages, its tools and a fixed framing', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: 'Look around' },
    ];
    const tool: ToolSpec = { name: 'list', description: 'List a directory', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } };
    const bare = estimateTokens(messages);
    expect(bare).toBe(estimateRequestOverheadTokens + estimateMessageTokens(messages[0]!) + estimateMessageTokens(messages[1]!));
    expect(estimateTokens(messages, [tool])).toBe(bare + estimateToolSpecTokens(tool));
    expect(estimateTokens([])).toBe(estimateRequestOverheadTokens);
  });

  it('grows with every added message (monotonic), so a longer conversation never looks smaller', () => {
    const messages: ChatMessage[] = [];
    let previous = estimateTokens(messages);
    for (let turn = 0; turn < 20; turn += 1) {
      messages.push({ role: turn % 2 === 0 ? 'user' : 'assistant', content: `turn ${turn}` });
      const next = estimateTokens(messages);
      expect(next).toBeGreaterThan(previous);
      previous = next;
    }
  });

  it('truncates to the longest prefix within a token limit', () => {
    const text = 'abcdefghij'.repeat(10);
    const cut = truncateToTokens(text, 5);
    expect(text.startsWith(cut)).toBe(true);
    expect(estimateTextTokens(cut)).toBeLessThanOrEqual(5);
    expect(estimateTextTokens(text.slice(0, cut.length + 1))).toBeGreaterThan(5);
    expect(truncateToTokens(text, 1000)).toBe(text);
    expect(truncateToTokens(text, 0)).toBe('');
    expect(truncateToTokens('😀😀😀', 2)).toBe('😀😀');
  });
});

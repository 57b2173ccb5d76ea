import { describe, expect, it } from 'vitest';
import { storedAnswer } from '../../src/activities/first-writer-wins';

/** A model answer's usage is stored beside it (decision 0002); a retry that reuses the answer reuses its cost. */
describe('the usage stored with a model answer', () => {
  const message = { role: 'assistant' as const, content: 'done' };

  it('reads back the cached tokens and the cost with the token counts', () => {
    const outcome = { usage: { inputTokens: 1_000, outputTokens: 50, cachedInputTokens: 400, cacheWriteInputTokens: 100, costMicroUsd: 1_950 }, finishReason: 'stop' };
    expect(storedAnswer({ message, outcome }, 'conversation-1', 3).usage).toEqual({ inputTokens: 1_000, outputTokens: 50, cachedInputTokens: 400, cacheWriteInputTokens: 100, costMicroUsd: 1_950 });
  });

  it('reads an unpriced call as unpriced, and a usage stored before costs were kept as tokens only', () => {
    expect(storedAnswer({ message, outcome: { usage: { inputTokens: 10, outputTokens: 2, unpricedCalls: 1 } } }, 'conversation-1', 3).usage).toEqual({ inputTokens: 10, outputTokens: 2, unpricedCalls: 1 });
    expect(storedAnswer({ message, outcome: { usage: { inputTokens: 10, outputTokens: 2 } } }, 'conversation-1', 3).usage).toEqual({ inputTokens: 10, outputTokens: 2 });
  });

  it('ignores what is not a count', () => {
    expect(storedAnswer({ message, outcome: { usage: { inputTokens: 10, outputTokens: 2, costMicroUsd: 'a lot' } } }, 'conversation-1', 3).usage).toEqual({ inputTokens: 10, outputTokens: 2 });
  });
});

import { describe, expect, test } from 'vitest';
import { peekDurations } from '../../src/api/delegation-facts';

describe("a peek's durations", () => {
  const peek = { startedAt: 1_000, lastActivityAt: 4_000 };

  test('while it runs: up to now', () => {
    expect(peekDurations(peek, undefined, 10_000)).toEqual({ elapsedMs: 9_000, idleMs: 6_000 });
  });

  test('once it has ended: up to its end, however late it is asked', () => {
    expect(peekDurations(peek, 5_000, 10_000)).toEqual({ elapsedMs: 4_000, idleMs: 1_000 });
    expect(peekDurations(peek, 5_000, 99_000)).toEqual({ elapsedMs: 4_000, idleMs: 1_000 });
  });

  test('never negative (clocks of different machines)', () => {
    expect(peekDurations(peek, undefined, 500)).toEqual({ elapsedMs: 0, idleMs: 0 });
  });
});

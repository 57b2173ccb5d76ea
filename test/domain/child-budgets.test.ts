import { describe, expect, test } from 'vitest';
import type { TaskRecord } from '../../src/contracts/carried-agent-state';
import { fitChildCaps, heldByChildren, heldRefusal, leftForChildren } from '../../src/domain/child-budgets';

function task(id: string, state: TaskRecord['state'], spent: { tokens?: number; costMicroUsd?: number }, reserved?: TaskRecord['reserved']): TaskRecord {
  return {
    taskId: id,
    workflowId: `parent/${id}`,
    description: id,
    mode: 'background',
    state,
    startedAt: 0,
    totalUsage: { inputTokens: spent.tokens ?? 0, outputTokens: 0, ...(spent.costMicroUsd !== undefined ? { costMicroUsd: spent.costMicroUsd } : {}) },
    ...(reserved ? { reserved } : {}),
  };
}

describe('budgets that add up', () => {
  test('live children hold their caps less what they spent; ended ones hold nothing', () => {
    const tasks = [
      task('task-1', 'running', { tokens: 300, costMicroUsd: 40_000 }, { tokens: 1_000, costMicroUsd: 100_000 }),
      task('task-2', 'waiting', { tokens: 0 }, { tokens: 500 }),
      task('task-3', 'completed', { tokens: 900, costMicroUsd: 90_000 }, { tokens: 1_000, costMicroUsd: 100_000 }),
      // Over its cap by its last call: it holds nothing more, never less than nothing.
      task('task-4', 'running', { tokens: 1_200, costMicroUsd: 120_000 }, { tokens: 1_000, costMicroUsd: 100_000 }),
      task('task-5', 'running', { tokens: 50 }),
    ];
    expect(heldByChildren(tasks)).toEqual({ tokens: 700 + 500, costMicroUsd: 60_000 });
    expect(leftForChildren({ tokens: 5_000, timeMs: 60_000, costMicroUsd: 250_000 }, tasks)).toEqual({ tokens: 3_800, timeMs: 60_000, costMicroUsd: 190_000 });
    expect(leftForChildren({ costMicroUsd: 10_000 }, tasks)).toEqual({ costMicroUsd: 0 });
    expect(leftForChildren({}, tasks)).toEqual({});
  });

  test('ten $0.10 children of a parent with $0.25 left: two get $0.10, the third the $0.05 left, the rest are refused', () => {
    const tasks: TaskRecord[] = [];
    const outcomes: string[] = [];
    for (let n = 1; n <= 10; n += 1) {
      const fitted = fitChildCaps({ costBudgetMicroUsd: 100_000, timeBudgetMs: 600_000 }, { costMicroUsd: 250_000, timeMs: 300_000 }, tasks);
      if (!fitted.ok) {
        outcomes.push(fitted.message);
        continue;
      }
      expect(fitted.caps.timeBudgetMs).toBe(300_000);
      expect(fitted.reserved).toEqual({ costMicroUsd: fitted.caps.costBudgetMicroUsd });
      outcomes.push(String(fitted.caps.costBudgetMicroUsd));
      tasks.push(task(`task-${n}`, 'running', { costMicroUsd: 0 }, fitted.reserved));
    }
    expect(outcomes.slice(0, 3)).toEqual(['100000', '100000', '50000']);
    expect(outcomes.slice(3)).toEqual(Array.from({ length: 7 }, () => 'your running tasks (task-1, task-2, task-3) hold the $0.25 left of your cost budget; wait for one of them to end (load with its task id) or cancel one, then delegate again.'));
  });

  test('what a child did not spend goes back when it settles', () => {
    const first = task('task-1', 'running', { tokens: 0 }, { tokens: 1_000 });
    expect(heldRefusal({ tokens: 1_000 }, [first])).toContain('hold the 1000 tokens left');
    first.state = 'completed';
    first.totalUsage = { inputTokens: 250, outputTokens: 50 };
    // The parent's remainder now counts the 300 spent; the 700 unspent are free again.
    const fitted = fitChildCaps({ tokenBudget: 2_000 }, { tokens: 700 }, [first]);
    expect(fitted).toEqual({ ok: true, caps: { tokenBudget: 700 }, reserved: { tokens: 700 } });
  });

  test('a parent without caps reserves nothing; nothing left at all is said so', () => {
    expect(fitChildCaps({ tokenBudget: 2_000 }, {}, [])).toEqual({ ok: true, caps: { tokenBudget: 2_000 } });
    expect(heldRefusal({ costMicroUsd: 0 }, [])).toBe('nothing is left of your cost budget.');
  });

  test("a fork's first prompt is checked against the caps it is fitted to", () => {
    const sibling = task('task-1', 'running', { tokens: 0, costMicroUsd: 0 }, { tokens: 9_000, costMicroUsd: 90_000 });
    const fork = fitChildCaps({ tokenBudget: 10_000 }, { tokens: 10_000 }, [sibling], { tokens: 4_000, fork: true });
    expect(fork).toEqual({ ok: false, message: "the fork's first prompt is estimated at 4000 tokens, more than the 1000 tokens of what is left of your budget after what your running tasks hold; wait for a task to end or cancel one." });
    const priced = fitChildCaps({ costBudgetMicroUsd: 100_000 }, { costMicroUsd: 100_000 }, [sibling], { tokens: 4_000, costMicroUsd: 16_000, fork: false });
    expect(priced).toMatchObject({ ok: false, message: expect.stringContaining("the subagent's first prompt is estimated at $0.016, more than the $0.01 of") });
    expect(fitChildCaps({ tokenBudget: 10_000 }, { tokens: 10_000 }, [], { tokens: 4_000, fork: true })).toMatchObject({ ok: true, caps: { tokenBudget: 10_000 } });
  });
});

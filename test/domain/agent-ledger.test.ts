import { describe, expect, test } from 'vitest';
import type { TaskRecord } from '../../src/contracts/carried-agent-state';
import { appendBeforeNextTurn, beginTurn, countToolCall, pendingStored, pruneTasks, recordAnswer, recordToolCalls, totalUsage } from '../../src/domain/agent-ledger';
import { newAgentState } from '../../src/domain/agent-state';

const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

function endedTask(taskId: string, readAt: number | undefined, tokens: number): TaskRecord {
  return { taskId, workflowId: `p~${taskId}`, description: taskId, mode: 'background', state: 'completed', startedAt: 0, ...(readAt !== undefined ? { readAt } : {}), totalUsage: usage(tokens, tokens) };
}

describe('the agent ledger', () => {
  test('a turn, its answer and its tool calls move the counters; the answer\'s text becomes the last text', () => {
    let state = beginTurn(newAgentState(0));
    state = recordAnswer(state, { text: 'hello', textTruncated: false, usage: usage(10, 2) }, 50);
    state = recordToolCalls(state, [{ name: 'read_file', argumentsPreview: '{}' }, { name: 'grep', argumentsPreview: '{"q":1}' }]);
    expect(state).toMatchObject({ turns: 1, runTurns: 1, length: 3, toolCalls: 2, lastActivityAt: 50, usage: usage(10, 2), lastAssistantText: 'hello' });
    expect(state.lastText).toEqual({ seq: 0, text: 'hello', truncated: false });
    expect(state.lastToolCall).toEqual({ name: 'grep', argumentsPreview: '{"q":1}', turn: 1 });
    // An answer without text keeps the last text; an MCP client's call counts with no sequence number.
    state = countToolCall(recordAnswer(state, { text: '', textTruncated: false, usage: usage(1, 1) }, 60), { name: 'load', argumentsPreview: '{}' });
    expect(state).toMatchObject({ length: 4, toolCalls: 3, usage: usage(11, 3), lastAssistantText: 'hello' });
  });

  test('messages for the next model call take their numbers at once and leave once stored', () => {
    let state = appendBeforeNextTurn({ ...newAgentState(0), length: 2 }, [{ role: 'user', content: 'a' }]);
    state = appendBeforeNextTurn(state, [{ role: 'user', content: 'b' }]);
    expect(state.pending).toEqual({ startSeq: 2, messages: [{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }] });
    expect(state.length).toBe(4);
    expect(pendingStored(state, 3)).toBe(state);
    expect(pendingStored(state, 2)).not.toHaveProperty('pending');
  });

  test('an expired task record leaves the registry, not the total (SEMANTICS §6)', () => {
    const state = { ...newAgentState(0), usage: usage(1, 1), tasks: [endedTask('task-1', 10, 100), endedTask('task-2', undefined, 5)] };
    expect(totalUsage(state, true)).toEqual(usage(106, 106));
    const pruned = pruneTasks(state, 10 + 60_001, 60_000, 50);
    expect(pruned.tasks.map((task) => task.taskId)).toEqual(['task-2']);
    expect(pruned.retiredUsage).toEqual(usage(100, 100));
    expect(totalUsage(pruned, true)).toEqual(usage(106, 106));
    // A run from before the retired-usage ledger leaves it out of its total, as it did.
    expect(totalUsage(pruned, false)).toEqual(usage(6, 6));
    // The state it was pruned from is unchanged.
    expect(state.tasks).toHaveLength(2);
    expect(pruneTasks(pruned, 10 + 60_001, 60_000, 50)).toBe(pruned);
  });
});

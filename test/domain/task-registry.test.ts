import { describe, expect, test } from 'vitest';
import type { SubagentPeek, SubagentResult } from '../../src/contracts/subagent-result';
import type { TaskLimits } from '../../src/contracts/subagent';
import type { TaskRecord } from '../../src/contracts/carried-agent-state';
import {
  addTask,
  admissionError,
  busySlots,
  carriedRegistry,
  emptyRegistry,
  expireTasks,
  findTask,
  isLive,
  isStaleProgress,
  liveContinuables,
  markRead,
  recordSettlement,
  retireUsage,
  usageOfView,
  type TaskRegistry,
} from '../../src/domain/task-registry';
import { addUsage, zeroUsage } from '../../src/contracts/model';

const limits: TaskLimits = { maxBackgroundTasks: 2, maxContinuables: 2, waitTimeoutMs: 1_000, completedTaskTtlMs: 10_000 };

function result(status: SubagentResult['status'], output = 'done'): SubagentResult {
  return { workflowId: 'w', status, output: status === 'completed' ? output : '', partialOutput: status === 'completed' ? '' : output, turns: 1, toolCalls: 0, usage: { inputTokens: 1, outputTokens: 1, costMicroUsd: 0, costUsd: 0 }, durationMs: 5 };
}

function add(registry: TaskRegistry, mode: TaskRecord['mode'], now = 0): TaskRecord {
  const task = addTask(registry, { parentWorkflowId: 'parent', mode, description: mode, now });
  task.state = 'running';
  return task;
}

describe('task registry', () => {
  test('ids and workflow ids are derived from the parent and count up', () => {
    const registry = emptyRegistry();
    const first = addTask(registry, { parentWorkflowId: 'errand-1', mode: 'background', description: 'a', now: 1 });
    const second = addTask(registry, { parentWorkflowId: 'errand-1', mode: 'foreground', description: 'b', now: 2 });
    expect([first.taskId, first.workflowId, second.taskId]).toEqual(['task-1', 'errand-1~task-1', 'task-2']);
    expect(findTask(registry, 'task-2')).toBe(second);
    expect(first.state).toBe('starting');
  });

  test('a run from before the id rule (its patch not taken) names its children with /', () => {
    const registry = emptyRegistry();
    const legacy = addTask(registry, { parentWorkflowId: 'errand-1', mode: 'background', description: 'a', now: 1, legacyId: true });
    const current = addTask(registry, { parentWorkflowId: 'errand-1', mode: 'background', description: 'b', now: 2 });
    expect([legacy.workflowId, current.workflowId]).toEqual(['errand-1/task-1', 'errand-1~task-2']);
  });

  test('a slot is held by background tasks running a turn; foreground tasks and waiting continuables hold none', () => {
    const registry = emptyRegistry();
    add(registry, 'foreground');
    const background = add(registry, 'background');
    const continuable = add(registry, 'continuable');
    expect(busySlots(registry)).toBe(2);
    expect(admissionError(registry, 'background', limits, 20)).toMatch(/2 background tasks are running and the limit is 2/);
    expect(admissionError(registry, 'foreground', limits, 20)).toBeUndefined();
    recordSettlement(continuable, result('completed'), false, { inputTokens: 0, outputTokens: 0 }, 10);
    expect(continuable.state).toBe('waiting');
    expect(busySlots(registry)).toBe(1);
    expect(admissionError(registry, 'background', limits, 20)).toBeUndefined();
    background.state = 'waiting_approval'; // a call waiting for a person still holds its slot
    expect(busySlots(registry)).toBe(1);
  });

  test('a "running" progress report that counts no more turns than the recorded settlement is stale; one from a new activation is not', () => {
    const registry = emptyRegistry();
    const continuable = add(registry, 'continuable');
    recordSettlement(continuable, { ...result('completed'), turns: 3 }, false, { inputTokens: 0, outputTokens: 0 }, 10);
    const peek = (state: 'running' | 'waiting_approval', turns: number) => ({ state, turns, toolCalls: 0, usage: { inputTokens: 0, outputTokens: 0 }, lastToolCall: null, lastAssistantText: null, maxTurns: 10 }) as SubagentPeek;
    expect(isStaleProgress(continuable, peek('running', 3))).toBe(true);
    expect(isStaleProgress(continuable, peek('running', 4))).toBe(false);
    // A call that waits for a decision is news whatever the count.
    expect(isStaleProgress(continuable, peek('waiting_approval', 3))).toBe(false);
    continuable.state = 'running'; // the parent sent it a message
    expect(isStaleProgress(continuable, peek('running', 3))).toBe(false);
  });

  test('live continuables are capped separately, waiting ones included', () => {
    const registry = emptyRegistry();
    for (const task of [add(registry, 'continuable'), add(registry, 'continuable')]) recordSettlement(task, result('completed'), false, { inputTokens: 0, outputTokens: 0 }, 1);
    expect(liveContinuables(registry)).toBe(2);
    expect(admissionError(registry, 'continuable', limits, 20)).toMatch(/2 continuable tasks are alive and the limit is 2/);
    expect(admissionError(registry, 'background', limits, 20)).toBeUndefined();
  });

  test('a final settlement ends the task; later settlements are stale and ignored', () => {
    const registry = emptyRegistry();
    const task = add(registry, 'background');
    expect(recordSettlement(task, result('failed', 'partial'), true, { inputTokens: 3, outputTokens: 4 }, 7)).toBe(true);
    expect([task.state, task.settledAt, isLive(task)]).toEqual(['failed', 7, false]);
    expect(recordSettlement(task, result('completed'), true, { inputTokens: 9, outputTokens: 9 }, 8)).toBe(false);
    expect(task.state).toBe('failed');
    expect(task.totalUsage).toEqual({ inputTokens: 3, outputTokens: 4 });
  });

  test('the TTL counts from the first read; unread results stay', () => {
    const registry = emptyRegistry();
    const read = add(registry, 'background');
    const unread = add(registry, 'background');
    recordSettlement(read, result('completed'), true, { inputTokens: 0, outputTokens: 0 }, 0);
    recordSettlement(unread, result('completed'), true, { inputTokens: 0, outputTokens: 0 }, 0);
    markRead(read, 50_000);
    markRead(read, 90_000); // a second read does not restart the TTL
    expect(expireTasks(registry, 59_000, 10_000, 100)).toEqual([]);
    expect(expireTasks(registry, 60_001, 10_000, 100).map((task) => task.taskId)).toEqual([read.taskId]);
    expect(expireTasks(registry, 10_000_000, 10_000, 100)).toEqual([]);
    expect(registry.tasks.map((task) => task.taskId)).toEqual([unread.taskId]);
  });

  test('over the cap, the oldest ended tasks go first (read ones before unread); live ones never', () => {
    const registry = emptyRegistry();
    const live = add(registry, 'background');
    const ended = [1, 2, 3, 4].map(() => {
      const task = add(registry, 'background');
      recordSettlement(task, result('completed'), true, { inputTokens: 0, outputTokens: 0 }, 0);
      return task;
    });
    markRead(ended[2] as TaskRecord, 1);
    const dropped = expireTasks(registry, 2, 10_000, 3);
    expect(dropped.map((task) => task.taskId).sort()).toEqual([ended[0]?.taskId, ended[2]?.taskId].sort());
    expect(registry.tasks).toContain(live);
    expect(registry.tasks).toHaveLength(3);
  });

  test("an expired record's tokens and cost stay in the total through the retired-usage ledger", () => {
    const registry = emptyRegistry();
    const priced = add(registry, 'foreground');
    const other = add(registry, 'background');
    recordSettlement(priced, result('completed'), true, { inputTokens: 1_000, outputTokens: 200, costMicroUsd: 3_600 }, 0);
    recordSettlement(other, result('completed'), true, { inputTokens: 10, outputTokens: 5, costMicroUsd: 60 }, 0);
    markRead(priced, 100);
    const own = { inputTokens: 50, outputTokens: 5, costMicroUsd: 140 };
    const total = (ledger: typeof zeroUsage) => registry.tasks.reduce((sum, task) => addUsage(sum, task.totalUsage), addUsage(own, ledger));
    const before = total(zeroUsage);
    const ledger = retireUsage(zeroUsage, expireTasks(registry, 100 + 1_001, 1_000, 100));
    expect(registry.tasks).toEqual([other]);
    expect(ledger).toEqual({ inputTokens: 1_000, outputTokens: 200, costMicroUsd: 3_600 });
    expect(total(ledger)).toEqual(before);
    expect(before).toEqual({ inputTokens: 1_060, outputTokens: 210, costMicroUsd: 3_800 });
    // The ledger only grows: a later drop adds to it.
    markRead(other, 2_000);
    expect(retireUsage(ledger, expireTasks(registry, 3_001, 1_000, 100))).toEqual({ inputTokens: 1_010, outputTokens: 205, costMicroUsd: 3_660 });
  });

  test("a result's usage view settles as a record's usage (without the dollars)", () => {
    expect(usageOfView({ inputTokens: 3, outputTokens: 4, costMicroUsd: 12, costUsd: 0.000012 })).toEqual({ inputTokens: 3, outputTokens: 4, costMicroUsd: 12 });
  });

  test('carried records hold previews and the reference, never whole outputs', () => {
    const registry = emptyRegistry();
    const task = add(registry, 'background');
    const long = 'x'.repeat(5_000);
    recordSettlement(task, { ...result('completed', long), outputRef: { conversationId: 'c', seq: 9 } }, true, { inputTokens: 0, outputTokens: 0 }, 0);
    const carried = carriedRegistry(registry, 400);
    const carriedResult = carried.tasks[0]?.result;
    expect(carriedResult?.output.length).toBe(400);
    expect(carriedResult?.outputCut).toBe(true);
    expect(carriedResult?.outputRef).toEqual({ conversationId: 'c', seq: 9 });
    expect(task.result?.output).toBe(long);
    expect(carried.nextTaskNumber).toBe(2);
  });
});

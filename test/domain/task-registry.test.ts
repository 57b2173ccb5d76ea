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
  markDelivering,
  markRead,
  recordSettlement,
  replaceTask,
  retireUsage,
  usageOfView,
  type NewTask,
  type TaskRegistry,
} from '../../src/domain/task-registry';
import { addUsage, zeroUsage, type TokenUsage } from '../../src/contracts/model';

const limits: TaskLimits = { maxBackgroundTasks: 2, maxContinuables: 2, waitTimeoutMs: 1_000, completedTaskTtlMs: 10_000 };

function result(status: SubagentResult['status'], output = 'done'): SubagentResult {
  return { workflowId: 'w', status, output: status === 'completed' ? output : '', partialOutput: status === 'completed' ? '' : output, turns: 1, toolCalls: 0, usage: { inputTokens: 1, outputTokens: 1, costMicroUsd: 0, costUsd: 0 }, durationMs: 5 };
}

/** A registry kept whole as the workflow's owner keeps it: each change replaces it (the functions change nothing they are given). */
class Registry implements TaskRegistry {
  tasks: TaskRecord[] = [];
  nextTaskNumber = 1;

  add(init: NewTask): TaskRecord {
    const added = addTask(this, init);
    Object.assign(this, added.registry);
    return added.task;
  }

  /** Changes a task's record through `change` and returns the record now held. */
  change(taskId: string, change: (task: TaskRecord) => TaskRecord | undefined): TaskRecord | undefined {
    const task = findTask(this, taskId);
    const changed = task ? change(task) : undefined;
    if (changed) this.tasks = replaceTask(this, changed);
    return changed;
  }

  get(taskId: string): TaskRecord {
    const task = findTask(this, taskId);
    if (!task) throw new Error(`no ${taskId}`);
    return task;
  }

  settle(taskId: string, ...rest: [SubagentResult, boolean, TokenUsage, number]): boolean {
    return this.change(taskId, (task) => recordSettlement(task, ...rest)) !== undefined;
  }

  expire(now: number, ttlMs: number, maxRecords: number): TaskRecord[] {
    const expired = expireTasks(this, now, ttlMs, maxRecords);
    this.tasks = expired.tasks;
    return expired.dropped;
  }
}

function add(registry: Registry, mode: TaskRecord['mode'], now = 0): string {
  const task = registry.add({ parentWorkflowId: 'parent', mode, description: mode, now });
  registry.change(task.taskId, (record) => ({ ...record, state: 'running' }));
  return task.taskId;
}

describe('task registry', () => {
  test('ids and workflow ids are derived from the parent and count up', () => {
    const empty = emptyRegistry();
    const first = addTask(empty, { parentWorkflowId: 'errand-1', mode: 'background', description: 'a', now: 1 });
    const second = addTask(first.registry, { parentWorkflowId: 'errand-1', mode: 'foreground', description: 'b', now: 2 });
    expect([first.task.taskId, first.task.workflowId, second.task.taskId]).toEqual(['task-1', 'errand-1~task-1', 'task-2']);
    expect(findTask(second.registry, 'task-2')).toBe(second.task);
    expect(first.task.state).toBe('starting');
    // Nothing it is given changes: the registries before stay as they were.
    expect(empty).toEqual({ tasks: [], nextTaskNumber: 1 });
    expect(first.registry.tasks).toHaveLength(1);
  });

  test('a run from before the id rule (its patch not taken) names its children with /', () => {
    const registry = new Registry();
    const legacy = registry.add({ parentWorkflowId: 'errand-1', mode: 'background', description: 'a', now: 1, legacyId: true });
    const current = registry.add({ parentWorkflowId: 'errand-1', mode: 'background', description: 'b', now: 2 });
    expect([legacy.workflowId, current.workflowId]).toEqual(['errand-1/task-1', 'errand-1~task-2']);
  });

  test('a slot is held by background tasks running a turn; foreground tasks and waiting continuables hold none', () => {
    const registry = new Registry();
    add(registry, 'foreground');
    const background = add(registry, 'background');
    const continuable = add(registry, 'continuable');
    expect(busySlots(registry)).toBe(2);
    expect(admissionError(registry, 'background', limits, 20)).toMatch(/2 background tasks are running and the limit is 2/);
    expect(admissionError(registry, 'foreground', limits, 20)).toBeUndefined();
    const running = registry.get(continuable);
    registry.settle(continuable, result('completed'), false, { inputTokens: 0, outputTokens: 0 }, 10);
    expect(registry.get(continuable).state).toBe('waiting');
    expect(running.state).toBe('running'); // the record given is not changed: a new one replaces it
    expect(busySlots(registry)).toBe(1);
    expect(admissionError(registry, 'background', limits, 20)).toBeUndefined();
    registry.change(background, (task) => ({ ...task, state: 'waiting_approval' })); // a call waiting for a person still holds its slot
    expect(busySlots(registry)).toBe(1);
  });

  test('a "running" progress report that counts no more turns than the recorded settlement is stale; one from a new activation is not', () => {
    const registry = new Registry();
    const continuable = add(registry, 'continuable');
    registry.settle(continuable, { ...result('completed'), turns: 3 }, false, { inputTokens: 0, outputTokens: 0 }, 10);
    const peek = (state: 'running' | 'waiting_approval', turns: number) => ({ state, turns, toolCalls: 0, usage: { inputTokens: 0, outputTokens: 0 }, lastToolCall: null, lastAssistantText: null, maxTurns: 10 }) as SubagentPeek;
    expect(isStaleProgress(registry.get(continuable), peek('running', 3))).toBe(true);
    expect(isStaleProgress(registry.get(continuable), peek('running', 4))).toBe(false);
    // A call that waits for a decision is news whatever the count.
    expect(isStaleProgress(registry.get(continuable), peek('waiting_approval', 3))).toBe(false);
    registry.change(continuable, markDelivering); // the parent sent it a message
    expect(isStaleProgress(registry.get(continuable), peek('running', 3))).toBe(false);
  });

  test('live continuables are capped separately, waiting ones included', () => {
    const registry = new Registry();
    for (const task of [add(registry, 'continuable'), add(registry, 'continuable')]) registry.settle(task, result('completed'), false, { inputTokens: 0, outputTokens: 0 }, 1);
    expect(liveContinuables(registry)).toBe(2);
    expect(admissionError(registry, 'continuable', limits, 20)).toMatch(/2 continuable tasks are alive and the limit is 2/);
    expect(admissionError(registry, 'background', limits, 20)).toBeUndefined();
  });

  test('a final settlement ends the task; later settlements are stale and ignored', () => {
    const registry = new Registry();
    const task = add(registry, 'background');
    expect(registry.settle(task, result('failed', 'partial'), true, { inputTokens: 3, outputTokens: 4 }, 7)).toBe(true);
    expect([registry.get(task).state, registry.get(task).settledAt, isLive(registry.get(task))]).toEqual(['failed', 7, false]);
    expect(recordSettlement(registry.get(task), result('completed'), true, { inputTokens: 9, outputTokens: 9 }, 8)).toBeUndefined();
    expect(registry.settle(task, result('completed'), true, { inputTokens: 9, outputTokens: 9 }, 8)).toBe(false);
    expect(registry.get(task).state).toBe('failed');
    expect(registry.get(task).totalUsage).toEqual({ inputTokens: 3, outputTokens: 4 });
  });

  test('the TTL counts from the first read; unread results stay', () => {
    const registry = new Registry();
    const read = add(registry, 'background');
    const unread = add(registry, 'background');
    registry.settle(read, result('completed'), true, { inputTokens: 0, outputTokens: 0 }, 0);
    registry.settle(unread, result('completed'), true, { inputTokens: 0, outputTokens: 0 }, 0);
    registry.change(read, (task) => markRead(task, 50_000));
    registry.change(read, (task) => markRead(task, 90_000)); // a second read does not restart the TTL
    expect(registry.expire(59_000, 10_000, 100)).toEqual([]);
    expect(registry.expire(60_001, 10_000, 100).map((task) => task.taskId)).toEqual([read]);
    expect(registry.expire(10_000_000, 10_000, 100)).toEqual([]);
    expect(registry.tasks.map((task) => task.taskId)).toEqual([unread]);
  });

  test('over the cap, the oldest ended tasks go first (read ones before unread); live ones never', () => {
    const registry = new Registry();
    const live = add(registry, 'background');
    const ended = [1, 2, 3, 4].map(() => {
      const task = add(registry, 'background');
      registry.settle(task, result('completed'), true, { inputTokens: 0, outputTokens: 0 }, 0);
      return task;
    });
    registry.change(ended[2] as string, (task) => markRead(task, 1));
    const before = registry.tasks;
    const dropped = registry.expire(2, 10_000, 3);
    expect(dropped.map((task) => task.taskId).sort()).toEqual([ended[0], ended[2]].sort());
    expect(registry.tasks.map((task) => task.taskId)).toContain(live);
    expect(registry.tasks).toHaveLength(3);
    expect(before).toHaveLength(5); // the list given is not changed
  });

  test("an expired record's tokens and cost stay in the total through the retired-usage ledger", () => {
    const registry = new Registry();
    const priced = add(registry, 'foreground');
    const other = add(registry, 'background');
    registry.settle(priced, result('completed'), true, { inputTokens: 1_000, outputTokens: 200, costMicroUsd: 3_600 }, 0);
    registry.settle(other, result('completed'), true, { inputTokens: 10, outputTokens: 5, costMicroUsd: 60 }, 0);
    registry.change(priced, (task) => markRead(task, 100));
    const own = { inputTokens: 50, outputTokens: 5, costMicroUsd: 140 };
    const total = (ledger: typeof zeroUsage) => registry.tasks.reduce((sum, task) => addUsage(sum, task.totalUsage), addUsage(own, ledger));
    const before = total(zeroUsage);
    const ledger = retireUsage(zeroUsage, registry.expire(100 + 1_001, 1_000, 100));
    expect(registry.tasks.map((task) => task.taskId)).toEqual([other]);
    expect(ledger).toEqual({ inputTokens: 1_000, outputTokens: 200, costMicroUsd: 3_600 });
    expect(total(ledger)).toEqual(before);
    expect(before).toEqual({ inputTokens: 1_060, outputTokens: 210, costMicroUsd: 3_800 });
    // The ledger only grows: a later drop adds to it.
    registry.change(other, (task) => markRead(task, 2_000));
    expect(retireUsage(ledger, registry.expire(3_001, 1_000, 100))).toEqual({ inputTokens: 1_010, outputTokens: 205, costMicroUsd: 3_660 });
  });

  test("a result's usage view settles as a record's usage (without the dollars)", () => {
    expect(usageOfView({ inputTokens: 3, outputTokens: 4, costMicroUsd: 12, costUsd: 0.000012 })).toEqual({ inputTokens: 3, outputTokens: 4, costMicroUsd: 12 });
  });

  test('carried records hold previews and the reference, never whole outputs', () => {
    const registry = new Registry();
    const task = add(registry, 'background');
    const long = 'x'.repeat(5_000);
    registry.settle(task, { ...result('completed', long), outputRef: { conversationId: 'c', seq: 9 } }, true, { inputTokens: 0, outputTokens: 0 }, 0);
    const carried = carriedRegistry(registry, 400);
    const carriedResult = carried.tasks[0]?.result;
    expect(carriedResult?.output.length).toBe(400);
    expect(carriedResult?.outputCut).toBe(true);
    expect(carriedResult?.outputRef).toEqual({ conversationId: 'c', seq: 9 });
    expect(registry.get(task).result?.output).toBe(long);
    expect(carried.nextTaskNumber).toBe(2);
  });
});

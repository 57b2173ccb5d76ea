import { addUsage, type TokenUsage, type UsageView } from '../contracts/model';
import type { SubagentPeek, SubagentResult } from '../contracts/subagent-result';
import type { TaskLimits } from '../contracts/subagent';
import type { ChildReservation, TaskRecord, TaskState } from '../contracts/carried-agent-state';
import { childWorkflowId, legacyChildSeparator } from '../contracts/workflow-ids';
import { preview } from './subagent-prompt';

/**
 * The tasks a session or subagent delegated, as plain data (SEMANTICS §2, §5): which exist, which hold a
 * background slot, which count as live continuables, when a result expires. Pure functions over JSON, so
 * workflows call them and unit tests need no server. None changes what it is given: a changed record or
 * registry is returned, and the agent's state owner (src/workflows/agent-state-owner.ts) keeps it.
 */

/** The registry: task records in start order and the number of the next task. */
export interface TaskRegistry {
  tasks: TaskRecord[];
  nextTaskNumber: number;
}

/** The registry as readers see it (the agent's state is one): nothing in it is replaced or added. */
export interface TaskRegistryView {
  readonly tasks: readonly TaskRecord[];
  readonly nextTaskNumber: number;
}

/** A new, empty registry. */
export function emptyRegistry(): TaskRegistry {
  return { tasks: [], nextTaskNumber: 1 };
}

const liveStates: readonly TaskState[] = ['starting', 'running', 'waiting_approval', 'waiting'];
const turnStates: readonly TaskState[] = ['starting', 'running', 'waiting_approval'];

/** Whether the task's workflow is still alive (running a turn, or a continuable waiting for a message). */
export function isLive(task: TaskRecord): boolean {
  return liveStates.includes(task.state);
}

/** Whether the task holds a background slot: a background or continuable task that is running a turn. */
export function holdsSlot(task: TaskRecord): boolean {
  return task.mode !== 'foreground' && turnStates.includes(task.state);
}

/** Background slots in use. */
export function busySlots(registry: TaskRegistryView): number {
  return registry.tasks.filter(holdsSlot).length;
}

/** Continuable tasks that are alive (a waiting one too: it can be woken by send_message). */
export function liveContinuables(registry: TaskRegistryView): number {
  return registry.tasks.filter((task) => task.mode === 'continuable' && isLive(task)).length;
}

/** Why a new task of `mode` may not start now, or undefined when it may. */
export function admissionError(registry: TaskRegistryView, mode: TaskRecord['mode'], limits: TaskLimits, defaultMaxContinuables: number): string | undefined {
  if (mode === 'foreground') return undefined;
  const busy = busySlots(registry);
  if (busy >= limits.maxBackgroundTasks) {
    return `${busy} background tasks are running and the limit is ${limits.maxBackgroundTasks}. Wait for one (load with its task id) or cancel one first.`;
  }
  const maxContinuables = limits.maxContinuables ?? defaultMaxContinuables;
  if (mode === 'continuable' && liveContinuables(registry) >= maxContinuables) {
    return `${liveContinuables(registry)} continuable tasks are alive and the limit is ${maxContinuables}. Cancel one you no longer need (load with its task id and cancel: true).`;
  }
  return undefined;
}

/** What a new task starts from (see {@link addTask}). */
export interface NewTask {
  parentWorkflowId: string;
  mode: TaskRecord['mode'];
  description: string;
  now: number;
  legacyId?: boolean;
  /** `workflow` for a workflow run started by `run_workflow` (its child runs workflowRunWorkflow). */
  kind?: 'workflow';
}

/**
 * The registry with a task added in state `starting`, and that task (the slot is taken at once, before
 * any await). Its workflow id is `<parent id>~task-<n>` (workflow-ids.ts); `legacyId` keeps the
 * `<parent id>/task-<n>` of runs that started children before that rule (the workflow asks a patch,
 * task-orchestration.ts).
 */
export function addTask(registry: TaskRegistryView, init: NewTask): { registry: TaskRegistry; task: TaskRecord } {
  const taskId = `task-${registry.nextTaskNumber}`;
  const record: TaskRecord = {
    taskId,
    workflowId: init.legacyId === true ? `${init.parentWorkflowId}${legacyChildSeparator}${taskId}` : childWorkflowId(init.parentWorkflowId, taskId),
    description: init.description,
    mode: init.mode,
    ...(init.kind ? { kind: init.kind } : {}),
    state: 'starting',
    startedAt: init.now,
    totalUsage: { inputTokens: 0, outputTokens: 0 },
  };
  return { registry: { tasks: [...registry.tasks, record], nextTaskNumber: registry.nextTaskNumber + 1 }, task: record };
}

/** The tasks without one (a task that never started). */
export function removeTask(registry: TaskRegistryView, taskId: string): TaskRecord[] {
  return registry.tasks.filter((task) => task.taskId !== taskId);
}

/** The tasks with `task` in place of the record of the same id. */
export function replaceTask(registry: TaskRegistryView, task: TaskRecord): TaskRecord[] {
  return registry.tasks.map((existing) => (existing.taskId === task.taskId ? task : existing));
}

/** Finds a task by id. */
export function findTask(registry: TaskRegistryView, taskId: string): TaskRecord | undefined {
  return registry.tasks.find((task) => task.taskId === taskId);
}

/** The agent file says `background: true`: the task runs in the background. */
export function moveToBackground(task: TaskRecord): TaskRecord {
  return { ...task, mode: 'background' };
}

/** What the task holds of its parent's caps while it is live. */
export function reserveCaps(task: TaskRecord, reserved: ChildReservation): TaskRecord {
  return { ...task, reserved };
}

/** The task's workflow started; `byPersonOnly`: its approvals are not announced to the parent's model. */
export function markStarted(task: TaskRecord, byPersonOnly: boolean): TaskRecord {
  return { ...task, state: 'running', ...(byPersonOnly ? { approvalsByPersonOnly: true } : {}) };
}

/** The task's usage as its latest report gives it. */
export function recordUsage(task: TaskRecord, totalUsage: TokenUsage): TaskRecord {
  return { ...task, totalUsage };
}

/** What {@link undoDelivery} restores: the task's state and settlement time before a delivery. */
export interface BeforeDelivery {
  state: TaskState;
  settledAt: number | undefined;
}

/**
 * A message is being delivered to a continuable task: it counts as running a turn from now on (so an
 * answer that arrives before the delivery returns is not taken as stale). Keep {@link beforeDelivery} of
 * the task first, to restore with {@link undoDelivery} if the delivery fails.
 */
export function markDelivering(task: TaskRecord): TaskRecord {
  return { ...task, state: 'running' };
}

/** What a failed delivery restores (see {@link markDelivering}). */
export function beforeDelivery(task: TaskRecord): BeforeDelivery {
  return { state: task.state, settledAt: task.settledAt };
}

/** The delivery failed: the task is as it was, unless it settled meanwhile. */
export function undoDelivery(task: TaskRecord, before: BeforeDelivery): TaskRecord {
  return task.state === 'running' && task.settledAt === before.settledAt ? { ...task, state: before.state } : task;
}

/** Records a child's progress report. */
export function recordProgress(task: TaskRecord, peek: SubagentPeek, totalUsage: TokenUsage): TaskRecord {
  if (!isLive(task)) return { ...task, peek, totalUsage };
  return { ...task, peek, totalUsage, state: peek.state === 'waiting' ? 'waiting' : peek.state === 'waiting_approval' ? 'waiting_approval' : 'running' };
}

/**
 * Whether a progress report is older than the settlement already recorded: a child's progress and settlement
 * signals can arrive out of order, and a "running" report from the activation that just settled would mark a
 * waiting continuable as running a turn — holding a slot and being checked as if it were (decision 0021).
 * A report from a new activation has counted at least one more turn.
 */
export function isStaleProgress(task: TaskRecord, peek: SubagentPeek): boolean {
  return task.state === 'waiting' && peek.state === 'running' && task.result !== undefined && peek.turns <= task.result.turns;
}

/**
 * Records a settlement: a final result (the task ended) or one activation of a continuable task (it now
 * waits for a message). Returns undefined when the settlement is stale and is to be ignored: the task had
 * already ended.
 */
export function recordSettlement(task: TaskRecord, result: SubagentResult, final: boolean, totalUsage: TokenUsage, now: number): TaskRecord | undefined {
  if (!isLive(task)) return undefined;
  const state = final ? result.status : 'waiting';
  return { ...task, totalUsage, result, settledAt: now, state, ...(task.peek ? { peek: { ...task.peek, state, turns: result.turns } } : {}) };
}

/** Marks a task's result as read (the TTL counts from the first read). */
export function markRead(task: TaskRecord, now: number): TaskRecord {
  return task.readAt === undefined && task.result !== undefined ? { ...task, readAt: now } : task;
}

/**
 * Expired records: ended tasks whose result was read more than `ttlMs` ago. Unread results stay, unless
 * the registry holds more than `maxRecords`; then the oldest ended tasks go, read ones first. Live tasks
 * are never dropped. Returns the tasks kept and the records dropped.
 */
export function expireTasks(registry: TaskRegistryView, now: number, ttlMs: number, maxRecords: number): { tasks: TaskRecord[]; dropped: TaskRecord[] } {
  const expired = (task: TaskRecord) => !isLive(task) && task.readAt !== undefined && now - task.readAt > ttlMs;
  const dropped = registry.tasks.filter(expired);
  const kept = registry.tasks.filter((task) => !expired(task));
  let excess = kept.length - maxRecords;
  if (excess <= 0) return { tasks: kept, dropped };
  const ended = kept.filter((task) => !isLive(task));
  const order = [...ended.filter((task) => task.readAt !== undefined), ...ended.filter((task) => task.readAt === undefined)];
  const drop = new Set<string>();
  for (const task of order) {
    if (excess <= 0) break;
    drop.add(task.taskId);
    excess -= 1;
  }
  return { tasks: kept.filter((task) => !drop.has(task.taskId)), dropped: [...dropped, ...kept.filter((task) => drop.has(task.taskId))] };
}

/**
 * The usage ledger after records were dropped: a dropped task's tokens and cost stay in its parent's total
 * (SEMANTICS §6: costs roll up the tree for the parent's whole life, whatever the record's TTL).
 */
export function retireUsage(ledger: TokenUsage, dropped: readonly TaskRecord[]): TokenUsage {
  return dropped.reduce((sum, task) => addUsage(sum, task.totalUsage), ledger);
}

/** A result's usage as a record holds it (without the dollars of the view). */
export function usageOfView(view: UsageView): TokenUsage {
  const { costUsd: _costUsd, ...usage } = view;
  return usage;
}

/**
 * A result slimmed for carrying: outputs cut to `previewChars`, the whole text left at `outputRef` (for a
 * structured result that text is its JSON, so the `structured` copy goes too).
 */
export function slimResult(result: SubagentResult, previewChars: number): SubagentResult {
  const long = result.output.length > previewChars || result.partialOutput.length > previewChars;
  if (!long || !result.outputRef) return result;
  const { structured: _structured, ...rest } = result;
  return {
    ...rest,
    output: preview(result.output, previewChars),
    partialOutput: preview(result.partialOutput, previewChars),
    outputCut: true,
  };
}

/** The registry as carried across continue-as-new: results and peeks hold previews only. */
export function carriedRegistry(registry: TaskRegistryView, previewChars: number): TaskRegistry {
  return {
    nextTaskNumber: registry.nextTaskNumber,
    tasks: registry.tasks.map((task) => ({
      ...task,
      ...(task.result ? { result: slimResult(task.result, previewChars) } : {}),
      ...(task.peek ? { peek: { ...task.peek, lastAssistantText: task.peek.lastAssistantText === null ? null : preview(task.peek.lastAssistantText, previewChars) } } : {}),
    })),
  };
}

/** The state shown in the `load` listing. */
export function listingState(state: TaskState): 'running' | 'completed' | 'failed' | 'cancelled' {
  switch (state) {
    case 'completed':
      return 'completed';
    case 'cancelled':
      return 'cancelled';
    case 'failed':
    case 'max_turns':
    case 'budget':
    case 'truncated':
    case 'declined':
      return 'failed';
    default:
      return 'running';
  }
}

import type { JsonObject } from '../contracts/json';
import type { TaskRecord } from '../contracts/carried-agent-state';
import { formatPeek, formatTaskResultBlock, formatWaitTimeout } from '../domain/delegation-texts';
import { findTask, isLive, listingState, markRead } from '../domain/task-registry';
import type { Agent } from './agent';
import type { ToolOutcome } from './agent-loop';
import { liveTextOf } from './child-messages';
import { attempt, toolText } from './tool-outcomes';

/** Task states in which a task is running a turn (its result, if any, is an earlier activation's). */
const turnStates: readonly TaskRecord['state'][] = ['starting', 'running', 'waiting_approval'];

/** `load`: listing, a task (wait / peek / cancel), or a source's content. */
export async function loadTask(agent: Agent, tasks: { cancelTask(task: Readonly<TaskRecord>): Promise<ToolOutcome> }, args: JsonObject): Promise<ToolOutcome> {
  const options = agent.options;
  agent.pruneTasks();
  const source = typeof args.source === 'string' ? args.source : undefined;
  const recipe = options.recipe ? { recipe: options.recipe } : {};
  if (source === undefined) {
    const listing = agent.state.tasks
      .filter((task) => task.mode !== 'foreground')
      .map((task) => ({ id: task.taskId, state: listingState(task.state), description: task.description }));
    return attempt('load', () => agent.activities.orchestration.loadListing.executeWithOptions({ summary: 'load listing' }, [{ workingDir: options.workingDir, ...recipe, tasks: listing }]));
  }
  const task = findTask(agent.state, source);
  if (task) {
    if (args.cancel === true) return tasks.cancelTask(task);
    // The registry replaces a record when it changes: read it afresh after each await.
    const current = () => findTask(agent.state, task.taskId) ?? task;
    if (args.peek === true) {
      // A workflow run (run_workflow) is peeked through its view: status, agents per label, tokens, cost.
      if (task.kind === 'workflow') return attempt(`peek ${task.taskId}`, () => agent.activities.orchestration.peekWorkflowRun.executeWithOptions({ summary: `peek ${task.taskId}` }, [{ workflowId: task.workflowId }]));
      const live = turnStates.includes(task.state) ? await liveTextOf(agent, task) : undefined;
      const now = current();
      return toolText(formatPeek(now.taskId, now.peek, now.state, Date.now(), live));
    }
    const waitMs = options.tasks.waitTimeoutMs;
    const settled = await agent.waitFor(() => current().result !== undefined && !turnStates.includes(current().state), waitMs);
    const ended = current();
    if (!settled || !ended.result) return toolText(formatWaitTimeout(task.taskId, waitMs));
    if (!isLive(ended)) agent.updateTask(task.taskId, (record) => markRead(record, Date.now()));
    return { parts: formatTaskResultBlock(task.taskId, ended.result), isError: false };
  }
  return attempt(`load ${source}`, () => agent.activities.orchestration.loadSource.executeWithOptions({ summary: `load ${source}` }, [{ name: source, workingDir: options.workingDir, ...recipe }]));
}

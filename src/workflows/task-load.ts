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
export async function loadTask(agent: Agent, tasks: { cancelTask(task: TaskRecord): Promise<ToolOutcome> }, args: JsonObject): Promise<ToolOutcome> {
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
    if (args.peek === true) {
      // A workflow run (run_workflow) is peeked through its view: status, agents per label, tokens, cost.
      if (task.kind === 'workflow') return attempt(`peek ${task.taskId}`, () => agent.activities.orchestration.peekWorkflowRun.executeWithOptions({ summary: `peek ${task.taskId}` }, [{ workflowId: task.workflowId }]));
      const live = turnStates.includes(task.state) ? await liveTextOf(agent, task) : undefined;
      return toolText(formatPeek(task.taskId, task.peek, task.state, Date.now(), live));
    }
    const waitMs = options.tasks.waitTimeoutMs;
    const settled = await agent.waitFor(() => task.result !== undefined && !turnStates.includes(task.state), waitMs);
    if (!settled || !task.result) return toolText(formatWaitTimeout(task.taskId, waitMs));
    if (!isLive(task)) markRead(task, Date.now());
    return { parts: formatTaskResultBlock(task.taskId, task.result), isError: false };
  }
  return attempt(`load ${source}`, () => agent.activities.orchestration.loadSource.executeWithOptions({ summary: `load ${source}` }, [{ name: source, workingDir: options.workingDir, ...recipe }]));
}

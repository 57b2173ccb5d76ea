import { allHandlersFinished, condition, patched } from '@temporalio/workflow';
import type { TaskRecord } from '../contracts/carried-agent-state';
import { endingHandlersWaitMs } from '../contracts/limits/workflow';
import { isLive } from '../domain/task-registry';

/**
 * The patch that keeps a workflow that is ending from starting children: an MCP tool call runs in an
 * update handler, outside the loop's scope, so a session cancelled (or at a cap) while a `delegate` was
 * being planned used to start the child afterwards, with no owner to cancel it. Asked only on that rare
 * path (update handlers still running at the end), so no other history gains a marker.
 */
export const noStartWhenEndingPatch = 'no-start-when-ending';

/**
 * What an agent's orchestrator knows about its end: once {@link begin} has been called (the end's
 * `cancelAll`), a task planned in an update handler is refused instead of started, and the end waits for
 * the handlers still running, cancelling each child they started in the meantime.
 */
export class EndingGuard {
  #ending = false;

  /** The end has begun: no task starts from here on. */
  begin(): void {
    this.#ending = true;
  }

  /** True when a task planned while the workflow began to end must not start (its record is removed). */
  refusesStart(): boolean {
    return this.#ending && patched(noStartWhenEndingPatch);
  }

  /**
   * Waits, at most {@link endingHandlersWaitMs}, for update handlers still running at the end (MCP tool
   * calls), and has `cancel` called for each task that started meanwhile and was not cancelled yet (a
   * `startChild` that was under way when the end began). Nothing happens, and nothing is recorded, when no
   * handler runs.
   */
  async waitForHandlers(tasks: () => readonly TaskRecord[], cancelled: Set<string>, cancel: (task: TaskRecord) => Promise<void>): Promise<void> {
    if (allHandlersFinished() || !patched(noStartWhenEndingPatch)) return;
    const started = () => tasks().filter((task) => isLive(task) && task.state !== 'starting' && !cancelled.has(task.taskId));
    const deadline = Date.now() + endingHandlersWaitMs;
    while (!allHandlersFinished()) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      if (!(await condition(() => allHandlersFinished() || started().length > 0, left))) return;
      for (const task of started()) {
        cancelled.add(task.taskId);
        await cancel(task);
      }
    }
  }
}

/** The tool error of a task refused because its agent began to end while it was planned. */
export function endingRefusal(tool: string): string {
  return `${tool} was not started: this agent is ending (it was cancelled, reached a cap or ended its session while the task was planned), and a task it started now would have no one to cancel it.`;
}

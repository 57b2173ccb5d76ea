import { CancellationScope, condition, isCancellation, sleep } from '@temporalio/workflow';
import type { ClosedChild } from '../contracts/activities';
import type { TaskRecord } from '../contracts/carried-agent-state';
import { childProbeIntervalMs, childProbeMaxIntervalMs } from '../contracts/limits/workflow';
import { isLive } from '../domain/task-registry';
import type { Agent } from './agent';

/**
 * States of a child that is running a turn (it reports progress). One that waits for a message or for a
 * decision on a tool call runs no code: like any wait, it is not checked.
 */
const inTurnStates: readonly TaskRecord['state'][] = ['running'];

/**
 * Finds children that ended without a word: a child started before a continue-as-new cannot be watched
 * (a new run has no handle to its result), and a terminated, timed-out or reset child sends no settlement
 * signal. Decision 0021: while such a child runs a turn it is checked every {@link childProbeIntervalMs},
 * backing off to {@link childProbeMaxIntervalMs} while it reports nothing; a child that waits for a message
 * is not checked at all (waiting costs no history), only when the workflow next uses it ({@link probe}).
 * Runs from before the `idle-costs-nothing` patch keep the old loop, which checks every live child.
 */
export class ChildProbe {
  /** Workflow time of the last progress or settlement heard from a child this run does not watch. */
  private heardAt = Number.NEGATIVE_INFINITY;
  /** The running timer's scope (cancelled by {@link settle}). */
  private scope: CancellationScope | undefined;
  private settled = false;

  constructor(
    private readonly agent: Agent,
    private readonly watched: (taskId: string) => boolean,
    private readonly onClosed: (record: TaskRecord, child: ClosedChild) => void,
  ) {}

  /** Notes that a child reported (its check backs off only while it is silent). */
  heard(taskId: string): void {
    if (!this.watched(taskId)) this.heardAt = Date.now();
  }

  /** Live tasks this run does not watch: started before a continue-as-new. */
  unwatchedLive(): TaskRecord[] {
    return this.agent.state.tasks.filter((task) => isLive(task) && task.state !== 'starting' && !this.watched(task.taskId));
  }

  /** Runs for the life of the workflow (until {@link settle}); never throws. */
  async loop(): Promise<void> {
    if (!this.agent.quietWaits) return this.pollingLoop();
    let interval = childProbeIntervalMs;
    for (;;) {
      await condition(() => this.settled || this.unwatchedInTurn().length > 0);
      if (this.settled) return;
      const sleptFrom = Date.now();
      if (!(await this.sleep(interval))) return;
      if (this.unwatchedInTurn().length === 0) {
        interval = childProbeIntervalMs; // it went back to waiting (or ended) and said so
        continue;
      }
      await this.probe();
      interval = this.heardAt >= sleptFrom ? childProbeIntervalMs : Math.min(interval * 2, childProbeMaxIntervalMs);
    }
  }

  /** The loop of runs from before the patch: every live child it does not watch, every interval. */
  private async pollingLoop(): Promise<void> {
    for (;;) {
      await condition(() => this.unwatchedLive().length > 0);
      await sleep(childProbeIntervalMs);
      await this.probe();
    }
  }

  /** One check of the given (by default all) unwatched live children; never throws. */
  async probe(tasks: TaskRecord[] = this.unwatchedLive()): Promise<void> {
    if (tasks.length === 0) return;
    let closed: ClosedChild[];
    try {
      closed = await this.agent.activities.orchestration.probeChildren.executeWithOptions({ summary: `check ${tasks.length} task(s)` }, [{ workflowIds: tasks.map((task) => task.workflowId) }]);
    } catch {
      return; // the next probe tries again
    }
    for (const child of closed) {
      const record = tasks.find((task) => task.workflowId === child.workflowId);
      if (record) this.onClosed(record, child);
    }
  }

  /**
   * Cancels the timer before the run completes or continues as new (as decision 0017 does for the views
   * timer) and stops the loop. Nothing to cancel for runs from before the patch.
   */
  settle(): void {
    this.settled = true;
    const scope = this.scope;
    this.scope = undefined;
    scope?.cancel();
  }

  private unwatchedInTurn(): TaskRecord[] {
    return this.unwatchedLive().filter((task) => inTurnStates.includes(task.state));
  }

  /** Sleeps in a scope of its own; false when {@link settle} cancelled it. */
  private async sleep(ms: number): Promise<boolean> {
    const scope = new CancellationScope();
    this.scope = scope;
    try {
      await scope.run(() => sleep(ms));
      return true;
    } catch (error) {
      if (isCancellation(error)) return false;
      throw error;
    } finally {
      if (this.scope === scope) this.scope = undefined;
    }
  }
}

import { CancellationScope, patched, setCurrentDetails, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import { viewsUpsertIntervalMs } from '../contracts/limits/workflow';
import { searchAttributes } from '../contracts/search-attributes';
import { usageText } from '../domain/model-cost';
import type { AgentLook } from './agent-look';

/**
 * Patch id of the interval's timer being cancelled when the workflow ends or continues as new (decision 0017).
 * Histories without the marker replay with the old, uncancellable timer.
 */
const cancellableViewsTimerPatch = 'views-timer-cancelled-at-end';
/**
 * Patch id of the `ErrandCostUsd` search attribute (decision 0027): histories without the marker replay
 * without it, as a cost that grows with a child's report would otherwise add an upsert they do not have.
 */
const costSearchAttributePatch = 'cost-search-attribute';

/**
 * The views that show an agent outside the workflow: its search attributes (listings, the Web UI's
 * columns) and the Web UI's current details. Kept apart from the agent because how often they are
 * written is a cost decision of its own (each search-attribute upsert is a history event).
 */
export class AgentViews {
  private lastSearchAttributes = '';
  /** Workflow time of the last search-attribute upsert. */
  private lastUpsertAt = Number.NEGATIVE_INFINITY;
  /** A timer that writes search attributes held back by the interval is running. */
  private upsertDeferred = false;
  private lastDetails = '';
  private dirty = false;
  /** The scope of the running interval timer, when it can be cancelled (see {@link settle}). */
  private deferredScope: CancellationScope | undefined;

  constructor(private readonly agent: AgentLook) {}

  /** Marks the views as changed; {@link flush} writes them. */
  markDirty(): void {
    this.dirty = true;
  }

  /**
   * Writes the views if they changed. The current details cost no history and are written at once. Search
   * attributes (a history event and a visibility write each) are written at most once per
   * `viewsUpsertIntervalMs`: a change within the interval is written by a timer when it ends, so the Web
   * UI and listings are never more than that behind, and a run of fast turns costs about one upsert per
   * second instead of one per turn. `force` writes them now and cancels the timer (the end of the workflow).
   */
  flush(force = false): void {
    if (force) this.settle();
    if (!this.dirty && !force) return;
    this.dirty = false;
    const agent = this.agent;
    const total = agent.totalUsage();
    const cost = total.costMicroUsd ?? 0;
    // Asked only once there is a cost: runs on models without prices keep the commands they had.
    const showCost = cost > 0 && patched(costSearchAttributePatch);
    const attributes = `${agent.status}|${agent.state.turns}|${showCost ? cost : ''}`;
    if (attributes !== this.lastSearchAttributes) {
      const now = Date.now();
      if (force || now - this.lastUpsertAt >= viewsUpsertIntervalMs) {
        this.lastSearchAttributes = attributes;
        this.lastUpsertAt = now;
        upsertSearchAttributes([
          { key: searchAttributes.status, value: agent.status },
          { key: searchAttributes.turns, value: agent.state.turns },
          ...(showCost ? [{ key: searchAttributes.costUsd, value: cost / 1_000_000 }] : []),
        ]);
      } else {
        this.deferUpsert(this.lastUpsertAt + viewsUpsertIntervalMs - now);
      }
    }
    const details = [
      `**${agent.status}** · turn ${agent.state.runTurns} of ${agent.currentLimit} (total ${agent.state.turns}) · ${agent.state.toolCalls} tool calls`,
      agent.state.lastToolCall ? `last tool: \`${agent.state.lastToolCall.name}\` (turn ${agent.state.lastToolCall.turn})` : 'no tool calls yet',
      `idle since ${new Date(agent.state.lastActivityAt).toISOString()}`,
      total.costMicroUsd || total.unpricedCalls ? `cost: ${usageText(agent.state.usage)}${agent.state.tasks.length > 0 ? `; with its tasks: ${usageText(total)}` : ''}` : '',
      agent.state.context ? `context compacted ${agent.state.context.compactions} time(s)` : '',
      agent.state.retryView ? `checks: attempt ${agent.state.retryView.attempt} of ${agent.state.retryView.attempts}, ${agent.state.retryView.state}` : '',
      agent.state.tasks.length > 0 ? `tasks: ${agent.state.tasks.map((task) => `${task.taskId} ${task.state}`).join(', ')}` : '',
    ].filter(Boolean).join('\n');
    if (details !== this.lastDetails) {
      this.lastDetails = details;
      setCurrentDetails(details);
    }
  }

  /**
   * Cancels the interval's timer before the workflow completes or continues as new. A timer left running can
   * fire while that last workflow task runs; the server then refuses the completion (UnhandledCommand) and
   * the worker drops the workflow from its cache and replays it — under a burst of short delegations one in
   * five of them. Cancelling it in the same task is accepted even when it has just fired: the server drops
   * the fired event with the timer. Nothing to cancel for runs from before the patch (their timer cannot be).
   */
  settle(): void {
    const scope = this.deferredScope;
    if (!scope) return;
    this.deferredScope = undefined;
    this.upsertDeferred = false;
    scope.cancel();
  }

  /** Writes the search attributes when the interval has passed (one timer at a time; the run's own cancellation does not stop it). */
  private deferUpsert(delayMs: number): void {
    if (this.upsertDeferred) return;
    this.upsertDeferred = true;
    const wait = Math.max(1, delayMs);
    const written = () => {
      this.upsertDeferred = false;
      this.dirty = true;
      this.flush();
    };
    if (!patched(cancellableViewsTimerPatch)) {
      void CancellationScope.nonCancellable(() => sleep(wait)).then(written).catch(() => undefined); // the workflow ended or was evicted meanwhile
      return;
    }
    // Inside a non-cancellable scope, so cancelling the run does not stop it; only settle() does.
    void CancellationScope.nonCancellable(() => {
      const scope = new CancellationScope();
      this.deferredScope = scope;
      return scope.run(() => sleep(wait)).then(() => {
        if (this.deferredScope === scope) this.deferredScope = undefined;
        written();
      });
    }).catch(() => undefined); // cancelled by settle(), or the workflow was evicted
  }
}

import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

/**
 * Tells when a workflow has been idle for `idleMs` (SEMANTICS §5 idle timeouts) without a timer per wait.
 * `condition(ready, timeout)` would start and cancel a timer on every wait — two history events per turn
 * of a continuable subagent that lives for days. The alarm instead sleeps until the idle deadline, and
 * when it wakes and the workflow was active meanwhile, sleeps again for what remains: a handful of timers
 * per idle period, whatever the number of turns.
 */
export class IdleAlarm {
  private armed = false;
  private fired = false;
  /** The running timer's scope, when it can be cancelled (runs under the `idle-costs-nothing` patch). */
  private scope: CancellationScope | undefined;
  private settled = false;

  /** @param cancellable the timer can be cancelled by {@link settle} (decision 0021); false for runs from before it. */
  constructor(
    private readonly lastActivityAt: () => number,
    private readonly idleMs: number,
    private readonly cancellable = false,
  ) {}

  /** Starts the alarm if it is not running (call before each wait). */
  arm(): void {
    if (this.fired && !this.expired()) this.fired = false;
    if (this.armed || this.fired || this.settled) return;
    this.armed = true;
    void this.run().catch(() => {
      // Cancelled with the workflow: nothing to do.
      this.armed = false;
    });
  }

  /** True when the alarm went off and nothing happened since (for a `condition` predicate). */
  expired(): boolean {
    return this.fired && Date.now() - this.lastActivityAt() >= this.idleMs;
  }

  /**
   * Cancels the timer before the run completes or continues as new (as decision 0017 does for the views
   * timer): a timer left running can fire during that last workflow task, and the server then refuses the
   * completion and the worker replays the workflow. Nothing to cancel for runs from before the patch.
   */
  settle(): void {
    this.settled = true;
    const scope = this.scope;
    this.scope = undefined;
    scope?.cancel();
  }

  private async run(): Promise<void> {
    for (;;) {
      const remaining = this.lastActivityAt() + this.idleMs - Date.now();
      if (remaining <= 0) break;
      if (!this.cancellable) {
        await sleep(remaining);
        continue;
      }
      const scope = new CancellationScope();
      this.scope = scope;
      try {
        await scope.run(() => sleep(remaining));
      } catch (error) {
        if (isCancellation(error) && this.settled) return;
        throw error;
      } finally {
        if (this.scope === scope) this.scope = undefined;
      }
    }
    this.fired = true;
    this.armed = false;
  }
}

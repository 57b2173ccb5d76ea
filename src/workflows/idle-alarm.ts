import { sleep } from '@temporalio/workflow';

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

  constructor(
    private readonly lastActivityAt: () => number,
    private readonly idleMs: number,
  ) {}

  /** Starts the alarm if it is not running (call before each wait). */
  arm(): void {
    if (this.fired && !this.expired()) this.fired = false;
    if (this.armed || this.fired) return;
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

  private async run(): Promise<void> {
    for (;;) {
      const remaining = this.lastActivityAt() + this.idleMs - Date.now();
      if (remaining <= 0) break;
      await sleep(remaining);
    }
    this.fired = true;
    this.armed = false;
  }
}

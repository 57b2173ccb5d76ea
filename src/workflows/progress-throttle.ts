import { patched } from '@temporalio/workflow';
import { childProgressIntervalMs } from '../contracts/limits/workflow';
import type { SubagentPeek } from '../contracts/subagent-result';

/**
 * Patch id of throttled progress signals: a child sends its parent at most one progress signal per
 * {@link childProgressIntervalMs} of workflow time, except for a change its parent acts on. Runs from before
 * it signal every turn (histories without the marker replay that way).
 */
export const progressThrottlePatch = 'progress-throttle';

/**
 * What the parent must hear of at once: the state (its idle logic and its slot count depend on whether a
 * child waits), the approvals waiting for a decision (the parent may announce them to its model) and a
 * recipe's retry step. Turns, tool calls, texts and usage may lag by the interval.
 */
function changeKey(peek: SubagentPeek): string {
  return JSON.stringify([peek.state, (peek.pendingApprovals ?? []).map((approval) => approval.id), peek.retry ?? null]);
}

/**
 * Decides which of a child's progress reports go to its parent. No timer: a report within the interval that
 * changes nothing the parent acts on is dropped, and the next one carries newer data.
 */
export class ProgressThrottle {
  private last: { at: number; key: string } | undefined;

  /** Whether to send this report now (and, if so, remembers it as sent). */
  due(peek: SubagentPeek): boolean {
    const key = changeKey(peek);
    const now = Date.now();
    // `patched()` is asked only where the new code drops a report: a run that never drops one records no marker.
    if (this.last && this.last.key === key && now - this.last.at < childProgressIntervalMs && patched(progressThrottlePatch)) return false;
    this.last = { at: now, key };
    return true;
  }

  /**
   * After a settlement signal: the parent's record changed without a progress report (a continuable now
   * waits), so the next report goes at once — the parent learns that a new activation runs.
   */
  reset(): void {
    this.last = undefined;
  }
}

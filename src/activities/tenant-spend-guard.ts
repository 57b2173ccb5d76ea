import { ApplicationFailure, log } from '@temporalio/activity';
import { FailureType } from '../contracts/failures';
import { tenantSpendRefreshMs } from '../contracts/limits/workflow';
import { utcDay, type SpendRecord } from '../contracts/tenant-spend';
import { dailyCapRefusal } from '../domain/run-caps';

/**
 * The daily cost cap where money is spent (decision 0027, docs/security.md): before each model call a worker
 * checks the tenant's spend today against the operator's cap and refuses the call at it, whatever started the
 * run (a delegation, a session's message, a continuable's, an MCP client's). The figure is per process, per
 * tenant and day: read from the tenant's day workflow at most every few seconds, and raised at once by this
 * process's own reports, so a read per call costs nothing and one process's calls see each other at once.
 */

/** How a worker reads and reports a tenant's day of spend (tenant-spend-book.ts with the worker's client). */
export interface TenantSpendBook {
  /** Micro-dollars spent today (UTC); 0 when nothing was reported yet. */
  read(tenant: string, now: number): Promise<number>;
  /** Reports one priced call (safe to repeat: the day counts a call's key once). */
  record(tenant: string, record: SpendRecord, now: number): Promise<void>;
}

interface Figure {
  day: string;
  spentMicroUsd: number;
  readAt: number;
  reading?: Promise<void>;
  /** What this process reported while the read was under way (the read may not hold it yet). */
  reportedDuringRead: number;
}

/** The worker's side of a tenant's daily cap: the check before a model call and the report after it. */
export class TenantSpendGuard {
  private readonly figures = new Map<string, Figure>();

  constructor(
    private readonly book: TenantSpendBook,
    readonly capMicroUsd: number,
    private readonly clock: () => number = Date.now,
    private readonly refreshMs = tenantSpendRefreshMs,
  ) {}

  /**
   * Throws a non-retryable `DailyCostCap` failure with the cap's words when the tenant's spend today has
   * reached the cap. A read that fails keeps the last figure (none: the call goes ahead, and the next
   * check reads again): the day's workflow is the only record, and a worker that cannot reach it for a
   * moment should not fail every tenant's calls.
   */
  async check(tenant: string): Promise<void> {
    const now = this.clock();
    const figure = await this.figure(tenant, now);
    const refused = dailyCapRefusal(tenant, figure.day, figure.spentMicroUsd, this.capMicroUsd, 0, 'model call');
    if (refused !== undefined) throw ApplicationFailure.create({ type: FailureType.dailyCostCap, message: refused, nonRetryable: true });
  }

  /**
   * Reports a priced call, best effort: a failed report is logged, never thrown (the answer is stored
   * already, and a retry of the activity would report it again anyway). This process's figure counts it at once.
   */
  async report(tenant: string, record: SpendRecord): Promise<void> {
    const now = this.clock();
    const figure = this.figures.get(tenant);
    if (figure && figure.day === utcDay(now)) {
      figure.spentMicroUsd += record.costMicroUsd;
      if (figure.reading) figure.reportedDuringRead += record.costMicroUsd;
    }
    try {
      await this.book.record(tenant, record, now);
    } catch (error) {
      log.warn("a priced model call could not be reported to the tenant's day of spend", { tenant, key: record.key, error: error instanceof Error ? error.message : String(error) });
    }
  }

  private async figure(tenant: string, now: number): Promise<Figure> {
    const day = utcDay(now);
    let figure = this.figures.get(tenant);
    if (!figure || figure.day !== day) {
      figure = { day, spentMicroUsd: 0, readAt: Number.NEGATIVE_INFINITY, reportedDuringRead: 0 };
      this.figures.set(tenant, figure);
    }
    if (now - figure.readAt >= this.refreshMs) {
      const current = figure;
      // Concurrent calls of one tenant share one read.
      if (!current.reading) {
        current.reportedDuringRead = 0;
        current.reading = this.book
          .read(tenant, now)
          .then((spent) => {
            // The day's figure replaces this process's (a report repeated by a retry counted twice here, once
            // there); what was reported while the read was under way may be missing from it, so it is added.
            current.spentMicroUsd = spent + current.reportedDuringRead;
            current.readAt = this.clock();
          })
          .catch((error: unknown) => {
            log.warn("the tenant's spend today could not be read: the last figure stands", { tenant, error: error instanceof Error ? error.message : String(error) });
          })
          .finally(() => {
            current.reading = undefined;
          });
      }
      await current.reading;
    }
    return figure;
  }
}

import { describe, expect, test } from 'vitest';
import { TenantSpendGuard, type TenantSpendBook } from '../../src/activities/tenant-spend-guard';
import { FailureType } from '../../src/contracts/failures';
import type { SpendRecord } from '../../src/contracts/tenant-spend';

/**
 * The worker's side of the daily cost cap (docs/security.md): a per-process figure of the tenant's day, read
 * at most once per refresh interval and raised at once by this process's own reports, refuses the model
 * call at the cap with a non-retryable `DailyCostCap` failure in the cap's words.
 */

function bookOf(day: { spent: number }): TenantSpendBook & { reads: number; records: SpendRecord[] } {
  const book = {
    reads: 0,
    records: [] as SpendRecord[],
    read: () => {
      book.reads += 1;
      return Promise.resolve(day.spent);
    },
    record: (_tenant: string, record: SpendRecord) => {
      book.records.push(record);
      day.spent += record.costMicroUsd;
      return Promise.resolve();
    },
  };
  return book;
}

describe("the worker's check of the daily cap", () => {
  test('refuses the call once its own reports reach the cap, without waiting for the next read', async () => {
    const day = { spent: 0 };
    const book = bookOf(day);
    const clock = { now: Date.parse('2026-12-06T12:00:00Z') };
    const guard = new TenantSpendGuard(book, 5_000, () => clock.now, 3_000);
    await guard.check('acme');
    await guard.report('acme', { key: 'c#1', costMicroUsd: 2_800 });
    await guard.check('acme');
    await guard.report('acme', { key: 'c#3', costMicroUsd: 2_800 });
    const refused = guard.check('acme');
    await expect(refused).rejects.toMatchObject({ type: FailureType.dailyCostCap, nonRetryable: true });
    await expect(refused).rejects.toThrow('tenant acme has spent $0.0056 on model calls today (2026-12-06, UTC), and the daily cost cap per tenant is $0.005 (ERRAND_TENANT_DAILY_COST_USD); no model call runs until 00:00 UTC');
    expect(book.reads).toBe(1);
    expect(book.records.map((record) => record.key)).toEqual(['c#1', 'c#3']);
  });

  test("reads the day again after the refresh interval: other workers' spend counts, a repeated report does not", async () => {
    const day = { spent: 0 };
    const book = bookOf(day);
    const clock = { now: Date.parse('2026-12-06T12:00:00Z') };
    const guard = new TenantSpendGuard(book, 5_000, () => clock.now, 3_000);
    await guard.check('acme');
    // A retried activity reports its stored answer again: counted twice here until the next read.
    await guard.report('acme', { key: 'c#1', costMicroUsd: 2_000 });
    day.spent -= 2_000;
    await guard.report('acme', { key: 'c#1', costMicroUsd: 2_000 });
    await guard.check('acme');
    clock.now += 3_000;
    await guard.check('acme');
    expect(book.reads).toBe(2);
    // The day's $0.002 replaced the $0.004 counted here: $0.0049 after the next call is still under the cap.
    await guard.report('acme', { key: 'c#3', costMicroUsd: 2_900 });
    await expect(guard.check('acme')).resolves.toBeUndefined();
    // Another worker's call reaches the day: the next read sees it.
    day.spent += 100;
    clock.now += 3_000;
    await expect(guard.check('acme')).rejects.toMatchObject({ type: FailureType.dailyCostCap });
  });

  test('a new UTC day starts from its own figure', async () => {
    const day = { spent: 9_000 };
    const guard = new TenantSpendGuard(bookOf(day), 5_000, () => clock.now, 3_000);
    const clock = { now: Date.parse('2026-12-06T23:59:59Z') };
    await expect(guard.check('acme')).rejects.toMatchObject({ type: FailureType.dailyCostCap });
    day.spent = 0;
    clock.now = Date.parse('2026-12-07T00:00:01Z');
    await expect(guard.check('acme')).resolves.toBeUndefined();
  });
});

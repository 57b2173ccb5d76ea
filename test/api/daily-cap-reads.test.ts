import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordTenantSpend } from '../../src/activities/tenant-spend-book';
import { hashApiKey } from '../../src/api/auth-config';
import { assertTenantDailyCap, holdTenantDailyCap } from '../../src/api/daily-cost-cap';
import { ApiProblem } from '../../src/api/problem';
import { TemporalCallError } from '../../src/api/temporal-gateway';
import type { TenantSpendDesk } from '../../src/api/tenant-spend-reader';
import type { ErrandConfig } from '../../src/settings/config';
import { GrpcCode } from '../../src/temporal/grpc-status';
import { temporalHttpUrl } from '../support/temporal';
import { json, postJson, startApiStack, type ApiStack } from './api-harness';

/**
 * How the API reads a tenant's day before a start or a message (docs/security.md, "The daily cost cap"):
 * a miss other than "no spend yet" is an error, never $0 (fail closed); a read that is only slow lets the
 * request go ahead (the workers' check before each model call holds the cap), so it never becomes a 503.
 */

const config = { caps: { tenantDailyCostMicroUsd: 250_000 } } as unknown as ErrandConfig;
const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

function desk(read: () => Promise<number>, hold: TenantSpendDesk['hold'] = () => never()): TenantSpendDesk {
  return { read, hold };
}

describe('reading the day', () => {
  it('a miss other than "no spend yet" is an error, never $0', async () => {
    const denied = new TemporalCallError('permission denied', 7);
    await expect(assertTenantDailyCap(config, desk(() => Promise.reject(denied)), 'acme')).rejects.toBe(denied);
    await expect(holdTenantDailyCap(config, desk(() => Promise.resolve(0), () => Promise.reject(denied)), 'acme', 'errand-1', undefined)).rejects.toBe(denied);
  });

  it('a day at the cap refuses a message with 429, and a refused hold refuses a start with the holds named', async () => {
    await expect(assertTenantDailyCap(config, desk(() => Promise.resolve(250_000)), 'acme')).rejects.toBeInstanceOf(ApiProblem);
    const refused = holdTenantDailyCap(config, desk(() => Promise.resolve(0), () => Promise.resolve({ granted: false, spentMicroUsd: 200_000, heldMicroUsd: 50_000 })), 'acme', 'errand-2', undefined);
    await expect(refused).rejects.toMatchObject({ status: 429, options: { detail: expect.stringContaining('starts not yet priced hold $0.05 of the cap') } });
  });

  it('a read or a hold that does not answer (or answers DEADLINE_EXCEEDED) lets the request go ahead', async () => {
    await expect(assertTenantDailyCap(config, desk(never), 'acme')).resolves.toBeUndefined();
    await expect(assertTenantDailyCap(config, desk(() => Promise.reject(new TemporalCallError('slow', GrpcCode.deadlineExceeded))), 'acme')).resolves.toBeUndefined();
    await expect(holdTenantDailyCap(config, desk(() => Promise.resolve(0)), 'acme', 'errand-3', undefined)).resolves.toBeUndefined();
  });

  it('a start holds its cost budget, at most a tenth of the cap', async () => {
    const asked: number[] = [];
    const granting: TenantSpendDesk['hold'] = (_tenant, _now, request) => {
      asked.push(request.microUsd);
      return Promise.resolve({ granted: true, spentMicroUsd: 0, heldMicroUsd: 0 });
    };
    await holdTenantDailyCap(config, desk(() => Promise.resolve(0), granting), 'acme', 'errand-4', 10_000);
    await holdTenantDailyCap(config, desk(() => Promise.resolve(0), granting), 'acme', 'errand-5', undefined);
    expect(asked).toEqual([10_000, 25_000]);
  });
});

describe("a start while no worker answers the tenant's day (over Temporal's HTTP API)", () => {
  const tenant = `unanswered-${randomBytes(4).toString('hex')}`;
  const key = `test-key-${tenant}-0123456789`;
  let stack: ApiStack;
  beforeAll(async () => {
    stack = await startApiStack({
      withoutWorker: true,
      extraEnv: {
        // No worker runs, so the vendor is never called: its entry is here for its prices.
        ERRAND_PROVIDERS: JSON.stringify([{ name: 'vendor', kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:9', models: [{ id: 'priced-model', prices: { input: 2, output: 8 } }], defaultModel: 'priced-model' }]),
        ERRAND_TEMPORAL_HTTP_URL: temporalHttpUrl(),
        ERRAND_TENANT_DAILY_COST_USD: '0.25',
        ERRAND_API_KEYS: JSON.stringify([{ tenant, sha256: hashApiKey(key) }]),
      },
    });
    // The day exists (a worker reported a call), but no worker polls its task queue now.
    await recordTenantSpend(stack.client, stack.taskQueue, tenant, { key: 'earlier', costMicroUsd: 1_000 }, Date.now());
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('is accepted, not a 503: the workers hold the cap when they run', async () => {
    const started = await stack.request('/v1/delegations', { ...postJson({ instructions: 'a job' }), key });
    expect(started.status).toBe(201);
    expect(await json(started)).toMatchObject({ created: true });
  });
});

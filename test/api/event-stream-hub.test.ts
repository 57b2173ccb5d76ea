import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiDependencies } from '../../src/api/default-dependencies';
import { EventStreamHub, type DelegationLook } from '../../src/api/event-stream-hub';
import { isApiProblem } from '../../src/api/problem';
import { fixedTemporalClient } from '../../src/api/temporal-client-provider';
import { eventually } from './api-harness';
import { startDelegation, startLiveStack, wordsText, type LiveStack } from './live-stack';

/**
 * The event streams' shared pollers and per-tenant cap (src/api/event-stream-hub.ts) against a real
 * delegation: many streams of one delegation are one poller, and the cap counts open streams per tenant.
 */

let live: LiveStack;
let hub: EventStreamHub;

beforeAll(async () => {
  live = await startLiveStack();
  const deps = createApiDependencies({ env: {}, cwd: live.stack.workDir, config: live.stack.config, api: live.stack.api, temporal: fixedTemporalClient(live.stack.client) });
  hub = new EventStreamHub(deps.delegations, 2);
}, 120_000);

afterAll(async () => {
  await live?.stop();
});

describe('EventStreamHub', () => {
  it('serves fifty streams of one delegation with one poller, which stops with its last stream', async () => {
    live.server.reset();
    live.server.enqueue({ text: wordsText('lake', 60), chunkDelayMs: 100 });
    const id = await startDelegation(live.stack, { instructions: 'write slowly' });
    const subscriptions = Array.from({ length: 50 }, () => hub.subscribe('acme', id));
    expect(hub.counts().pollers).toBe(1);
    const looks: DelegationLook[] = await Promise.all(subscriptions.map((subscription) => subscription.next()));
    for (const look of looks) expect(look).toMatchObject({ kind: 'look', observation: { state: 'running' } });
    // Every stream got the very same look: one describe and one peek for all of them.
    expect(new Set(looks).size).toBe(1);
    for (const subscription of subscriptions.slice(1)) subscription.close();
    expect(hub.counts().pollers).toBe(1);
    subscriptions[0]?.close();
    await eventually(async () => (hub.counts().pollers === 0 ? true : undefined), 10_000);
    // Another tenant's subscription to the same id gets its own poller, which finds nothing of its own.
    const foreign = hub.subscribe('globex', id);
    const look = await foreign.next();
    foreign.close();
    expect(look.kind).toBe('error');
    expect(look.kind === 'error' && isApiProblem(look.error) ? look.error.status : 0).toBe(404);
  });

  it('counts open streams per tenant: past the cap a 429 naming the setting, and a released slot is free again', () => {
    const first = hub.reserve('acme');
    const second = hub.reserve('acme');
    let refused: unknown;
    try {
      hub.reserve('acme');
    } catch (error) {
      refused = error;
    }
    expect(isApiProblem(refused) ? { status: refused.status, retryAfter: refused.options.headers?.['retry-after'] } : refused).toEqual({ status: 429, retryAfter: '5' });
    expect(isApiProblem(refused) ? refused.options.detail : '').toContain('ERRAND_API_MAX_EVENT_STREAMS=2');
    // Another tenant has slots of its own.
    const other = hub.reserve('globex');
    first();
    first();
    const third = hub.reserve('acme');
    expect(hub.counts().streams).toBe(3);
    for (const release of [second, third, other]) release();
    expect(hub.counts().streams).toBe(0);
  });
});

import { eventStreamCapRetryAfterSeconds, eventStreamPollMs } from '../contracts/limits/api';
import type { ResultResponse } from '../contracts/delegation-api';
import type { LiveObservation } from '../domain/live-events';
import { deriveState, type DelegationService } from './delegation-service';
import { ApiProblem, ProblemKind } from './problem';

/**
 * What the event streams of one API process share, so that holding a stream is cheap:
 * - one poller per (tenant, delegation id): it looks at the delegation every {@link eventStreamPollMs}
 *   (describe, peek query; the result once it has ended) and hands each look to every stream of that
 *   delegation; each stream keeps its own cursor of what it has told its client. A hundred streams of
 *   one delegation cost Temporal what one does.
 * - a cap per tenant on open streams (`ERRAND_API_MAX_EVENT_STREAMS`): past it a new stream is a 429
 *   with `Retry-After`, so one tenant cannot hold the API (and Temporal) busy for every other.
 */

/** One look at a delegation, as the poller took it. */
export type DelegationLook =
  | { kind: 'look'; observation: LiveObservation; ended: boolean; settled?: Extract<ResultResponse, { done: true }>['result'] }
  /** The look failed (the delegation is gone, Temporal is unreachable): the streams report it and end. */
  | { kind: 'error'; error: unknown };

/** A stream's subscription to the looks of one delegation. */
export interface LookSubscription {
  /** The next look newer than the last one returned (the latest one: looks in between are skipped, as a slower poll would). */
  next(): Promise<DelegationLook>;
  /** Stops this stream's share of the poller (the poller stops with its last subscriber). */
  close(): void;
}

interface Subscriber {
  latest: DelegationLook | undefined;
  wake: (() => void) | undefined;
}

class SharedPoller {
  readonly subscribers = new Set<Subscriber>();
  private last: DelegationLook | undefined;

  constructor(
    private readonly delegations: DelegationService,
    private readonly tenant: string,
    private readonly id: string,
    private readonly pollMs: number,
    private readonly onIdle: () => void,
  ) {}

  subscribe(): LookSubscription {
    // A new stream starts from the latest look (if any), so it describes the current state at once.
    const subscriber: Subscriber = { latest: this.last, wake: undefined };
    this.subscribers.add(subscriber);
    return {
      next: () =>
        new Promise<DelegationLook>((resolve) => {
          const take = (): void => {
            const look = subscriber.latest;
            if (look === undefined) return;
            subscriber.latest = undefined;
            subscriber.wake = undefined;
            resolve(look);
          };
          subscriber.wake = take;
          take();
        }),
      close: () => {
        this.subscribers.delete(subscriber);
        // A waiting next() ends too (its stream has stopped reading and returns on it).
        subscriber.latest = { kind: 'error', error: new Error('the event stream was closed') };
        subscriber.wake?.();
      },
    };
  }

  async run(): Promise<void> {
    try {
      while (this.subscribers.size > 0) {
        const look = await this.look();
        this.last = look;
        for (const subscriber of this.subscribers) {
          subscriber.latest = look;
          subscriber.wake?.();
        }
        // Nothing more will change: an error, or the result is in.
        if (look.kind === 'error' || look.settled !== undefined) return;
        await new Promise((resolve) => setTimeout(resolve, this.pollMs));
      }
    } finally {
      this.onIdle();
    }
  }

  private async look(): Promise<DelegationLook> {
    try {
      // Each look checks the tenant again, as every route does.
      const owned = await this.delegations.describeOwned(this.tenant, this.id);
      const state = deriveState(owned.facts.statusName, owned.facts.attributes.status);
      const ended = owned.facts.statusName !== 'RUNNING';
      const { peek } = ended ? { peek: null } : await this.delegations.peek(owned.description);
      if (!ended) return { kind: 'look', observation: { state, peek }, ended };
      const outcome = await this.delegations.result(this.tenant, this.id, 0);
      return { kind: 'look', observation: { state, peek }, ended, ...(outcome.done ? { settled: outcome.result } : {}) };
    } catch (error) {
      return { kind: 'error', error };
    }
  }
}

/** The event streams of one API process: shared pollers and the per-tenant cap. */
export class EventStreamHub {
  private readonly pollers = new Map<string, SharedPoller>();
  private readonly open = new Map<string, number>();

  constructor(
    private readonly delegations: DelegationService,
    /** Most open streams per tenant (`ERRAND_API_MAX_EVENT_STREAMS`). */
    private readonly maxPerTenant: number,
    private readonly pollMs: number = eventStreamPollMs,
  ) {}

  /**
   * Takes one of the tenant's stream slots, or throws a 429 problem naming the limit and its setting.
   * Returns the function that gives the slot back (once, however often it is called).
   */
  reserve(tenant: string): () => void {
    const held = this.open.get(tenant) ?? 0;
    if (held >= this.maxPerTenant) {
      throw new ApiProblem(429, ProblemKind.tooManyEventStreams, 'Too many open event streams', {
        detail:
          `this tenant already has ${held} event streams open, the most this server allows (ERRAND_API_MAX_EVENT_STREAMS=${this.maxPerTenant}); ` +
          'close one of them, or poll GET /v1/delegations/{id} instead, and retry',
        headers: { 'retry-after': String(eventStreamCapRetryAfterSeconds) },
      });
    }
    this.open.set(tenant, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.open.get(tenant) ?? 1) - 1;
      if (now <= 0) this.open.delete(tenant);
      else this.open.set(tenant, now);
    };
  }

  /** Subscribes a stream to the shared looks at one of the tenant's delegations. */
  subscribe(tenant: string, id: string): LookSubscription {
    const key = `${tenant}\u0000${id}`;
    let poller = this.pollers.get(key);
    if (poller === undefined) {
      const created = new SharedPoller(this.delegations, tenant, id, this.pollMs, () => {
        if (this.pollers.get(key) === created) this.pollers.delete(key);
      });
      poller = created;
      this.pollers.set(key, created);
      const subscription = created.subscribe();
      void created.run();
      return subscription;
    }
    return poller.subscribe();
  }

  /** Open streams and running pollers (for tests and diagnostics). */
  counts(): { streams: number; pollers: number } {
    let streams = 0;
    for (const held of this.open.values()) streams += held;
    return { streams, pollers: this.pollers.size };
  }
}

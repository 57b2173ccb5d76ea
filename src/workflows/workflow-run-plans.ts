import type { PlanDelegationOutput } from '../contracts/activities';
import { workflowPlanBatchMax } from '../contracts/limits/workflow-scripts';
import type { PlanWorkflowAgentsInput, PlanWorkflowAgentsOutput } from '../contracts/workflow-run-activities';

/**
 * The patch under which plans are asked ahead a batch at a time, when fewer than a lane set's worth are
 * ready (a `planWorkflowAgents` activity per 16 agents); before it, at every lane that freed (one per agent
 * or two: the activities, actions and server work of planning were about one per agent).
 */
export const planAheadInBatchesPatch = 'workflow-run-plans-ahead-in-batches';

/**
 * The queued keys to plan ahead now (those asked already are skipped by {@link AgentPlanner.ahead}).
 * `unstarted` is the queue's keys not started, in order; `ready` the plans asked ahead and not taken by a lane.
 */
export function keysToPlanAhead(unstarted: readonly string[], at: { ready: number; concurrency: number; take: number; batched: boolean }): readonly string[] {
  if (!at.batched) return unstarted.slice(0, Math.min(at.concurrency, at.take));
  // At least a lane set's worth stays ready, topped up a whole batch at a time.
  if (at.ready >= at.concurrency) return [];
  return unstarted.slice(0, Math.min(at.ready + workflowPlanBatchMax, at.take));
}

/** What a batch of plans is asked with besides its keys (the run's ids and what is left of its caps). */
export type PlanBatchCommon = Omit<PlanWorkflowAgentsInput, 'keys'>;

interface Pending {
  promise: Promise<PlanDelegationOutput>;
  resolve: (plan: PlanDelegationOutput) => void;
}

/**
 * Plans a run's agents in batches, one `planWorkflowAgents` activity at a time (SEMANTICS §7): the keys asked
 * for while a batch is out go into the next one, so a lane set that frees at once is planned by one activity
 * rather than one each. Asked ahead (`ahead`), the next queued agents are planned while the lanes are still
 * busy, and a lane that frees starts its child at once. Deterministic: batches follow the order keys are asked.
 */
export class AgentPlanner {
  private readonly plans = new Map<string, Pending>();
  /** Keys a lane is taking (asked by `take`, not answered yet). */
  private readonly taking = new Set<string>();
  private readonly unsent: string[] = [];
  private busy = false;

  constructor(
    private readonly planBatch: (input: PlanWorkflowAgentsInput) => Promise<PlanWorkflowAgentsOutput>,
    private readonly common: () => PlanBatchCommon,
  ) {}

  /** The plan of `key`: planned already, in the batch out now, or in the next batch. Taken once (a later call plans again). */
  async take(key: string): Promise<PlanDelegationOutput> {
    this.taking.add(key);
    const plan = this.ask(key);
    const result = await plan;
    this.plans.delete(key);
    this.taking.delete(key);
    return result;
  }

  /** Plans these keys ahead of their start (those asked already are left as they are). */
  ahead(keys: readonly string[]): void {
    for (const key of keys) void this.ask(key);
  }

  /** Plans asked ahead that no lane has taken (dropped at continue-as-new when their agents did not start). */
  get ready(): number {
    return this.plans.size - this.taking.size;
  }

  private ask(key: string): Promise<PlanDelegationOutput> {
    const known = this.plans.get(key);
    if (known) return known.promise;
    let resolve: (plan: PlanDelegationOutput) => void = () => undefined;
    const promise = new Promise<PlanDelegationOutput>((done) => (resolve = done));
    this.plans.set(key, { promise, resolve });
    this.unsent.push(key);
    // Every key asked in this activation goes into one batch: the send waits for the microtasks to settle.
    if (!this.busy) {
      this.busy = true;
      void Promise.resolve().then(() => this.send());
    }
    return promise;
  }

  private async send(): Promise<void> {
    while (this.unsent.length > 0) {
      const keys = this.unsent.splice(0, workflowPlanBatchMax);
      let planned: PlanDelegationOutput[];
      try {
        planned = (await this.planBatch({ ...this.common(), keys })).plans;
      } catch (error) {
        const message = `planning failed: ${error instanceof Error ? error.message : String(error)}`;
        planned = keys.map(() => ({ ok: false, message }));
      }
      if (planned.length === 0) planned = keys.map(() => ({ ok: false, message: 'planning answered no plan' }));
      // The activity may plan fewer than asked (its answer stays small): the rest go first into the next batch.
      this.unsent.unshift(...keys.slice(planned.length));
      planned.forEach((plan, at) => this.plans.get(keys[at] as string)?.resolve(plan));
    }
    this.busy = false;
  }
}

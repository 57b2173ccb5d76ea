import { allHandlersFinished, condition, continueAsNew, patched, setHandler, startChild, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import type { JsonValue } from '../contracts/json';
import { cancelSettleWaitMs } from '../contracts/limits/workflow';
import { workflowRoundsBeforeContinueAsNew } from '../contracts/limits/workflow-scripts';
import { searchAttributes } from '../contracts/search-attributes';
import type { SubagentResult } from '../contracts/subagent-result';
import { workflowAgentId } from '../contracts/workflow-ids';
import type { WorkflowLabelView, WorkflowRunCarried, WorkflowRunInput, WorkflowRunResult, WorkflowRunStatus } from '../contracts/workflow-run';
import type { FinishedWorkflowAgent, RecordWorkflowAgentsOutput, RunWorkflowRoundOutput, WorkflowAgentSummary, WorkflowWaitingCount } from '../contracts/workflow-run-activities';
import { workflowCancelSignal, workflowPauseSignal, workflowRestartAgentUpdate, workflowResumeSignal, workflowViewQuery } from '../contracts/workflow-run-messages';
import type { WorkflowScriptDiagnostic } from '../contracts/workflow-script';
import { agentReservation, capsWithin, remainingFor, runCapCrossed, runSharesCapsPatch, type Stop } from './workflow-run-caps';
import { planning, rounds } from './workflow-run-proxies';
import { agentChildOptions, signalAgentCancel } from './workflow-run-agent';
import { agentsBeforeContinueAsNew, journalNow, restartAgent, roundWanted, takeInJournaled, type Lanes } from './workflow-run-lanes';
import { AgentPlanner, keysToPlanAhead, planAheadInBatchesPatch } from './workflow-run-plans';
import { buildView, takeFromWaiting, type AgentSlot } from './workflow-run-view';

/**
 * A workflow run (SEMANTICS §7, decision 0038): a script's rounds as activities and its `agent()` calls as
 * child delegations. A round runs the script from its start against the journal (by reference in errand's
 * store) and names the agents it waits on; they queue, up to `concurrency` run at once, and a lane that
 * frees starts the next queued one at once. Ends go into the journal in batches; a round runs again when
 * the queue runs low or nothing runs. The run continues as new (carrying the journal's reference) when
 * Temporal suggests it or after set numbers of rounds or agents, once no agent runs: history stays bounded.
 */
export async function workflowRunWorkflow(input: WorkflowRunInput): Promise<WorkflowRunResult> {
  const run = new WorkflowRun(input);
  run.installHandlers();
  return run.execute();
}

/** The state of one run of the workflow (one link of its continue-as-new chain) and its steps. */
class WorkflowRun {
  private readonly info = workflowInfo();
  private readonly carried: WorkflowRunCarried;
  private journalRef: string | null;
  private definitionsRef: string | null;
  private scriptRef: string | undefined;
  private paused: boolean;
  private tokens: number;
  private costMicroUsd: number;
  private agentsStarted: number;
  private agentsDone: number;
  private agentsFailed: number;
  private fromJournal: number;
  private readonly labels: WorkflowLabelView[];
  private readonly slots = new Map<string, AgentSlot>();
  private readonly finished: FinishedWorkflowAgent[] = [];
  private readonly removals: string[] = [];
  private waiting: WorkflowWaitingCount[] = [];
  /** Requests the last round named that have not started: the next one starts the moment a lane frees. */
  private queue: WorkflowAgentSummary[] = [];
  private phase: string | null = null;
  private logs: string[] = [];
  private stop: Stop | undefined;
  private cancelReason: string | undefined; // why the run cancels its agents, once it does
  private status: WorkflowRunStatus;
  private endResult: { result?: JsonValue; diagnostic?: WorkflowScriptDiagnostic } = {};
  private roundsThisRun = 0;
  private readonly deadline: number | undefined;
  private readonly agentsThisRun = agentsBeforeContinueAsNew();
  /** Plans agents in batches, those of the next free lanes ahead of time (decision 0048). */
  private readonly planner = new AgentPlanner(
    (batch) => planning.planWorkflowAgents(batch),
    () => ({ runId: this.info.workflowId, workingDir: this.input.workingDir, ...(this.input.tenant ? { tenant: this.input.tenant } : {}), ...this.remaining() }),
  );

  constructor(private readonly input: WorkflowRunInput) {
    const carried = input.carried ?? { startedAtMs: Date.now(), paused: false, tokens: 0, costMicroUsd: 0, agentsStarted: 0 };
    this.carried = carried;
    this.journalRef = input.journalRef ?? null;
    this.definitionsRef = carried.definitionsRef ?? null;
    this.scriptRef = carried.scriptRef;
    this.paused = carried.paused;
    this.tokens = carried.tokens;
    this.costMicroUsd = carried.costMicroUsd;
    this.agentsStarted = carried.agentsStarted;
    this.agentsDone = carried.agentsDone ?? 0;
    this.agentsFailed = carried.agentsFailed ?? 0;
    this.fromJournal = carried.fromJournal ?? 0;
    this.labels = carried.labels ?? [];
    this.queue = carried.queue ?? [];
    this.status = this.paused ? 'paused' : 'running';
    this.deadline = input.caps.timeBudgetMs !== undefined ? carried.startedAtMs + input.caps.timeBudgetMs : undefined;
  }

  private running(): AgentSlot[] {
    return [...this.slots.values()].filter((slot) => slot.state === 'running' || slot.state === 'waiting');
  }

  private showStatus(next: WorkflowRunStatus): void {
    if (next === this.status) return;
    this.status = next;
    upsertSearchAttributes([{ key: searchAttributes.status, value: next }]);
  }

  installHandlers(): void {
    setHandler(workflowViewQuery, () =>
      buildView({
        id: this.info.workflowId,
        scriptName: this.input.scriptName,
        status: this.status,
        phase: this.phase,
        labels: this.labels,
        waiting: this.waiting,
        slots: this.slots.values(),
        agentsStarted: this.agentsStarted,
        tokens: this.tokens,
        costMicroUsd: this.costMicroUsd,
        elapsedMs: Date.now() - this.carried.startedAtMs,
        now: Date.now(),
        ...this.endResult,
        logs: this.logs,
      }),
    );
    setHandler(workflowPauseSignal, () => {
      this.paused = true;
      if (this.status === 'running') this.showStatus('paused');
    });
    setHandler(workflowResumeSignal, () => {
      this.paused = false;
      if (this.status === 'paused') this.showStatus('running');
    });
    setHandler(workflowCancelSignal, (cancel) => {
      this.stop ??= { status: 'cancelled', reason: cancel.reason ?? 'cancelled' };
    });
    setHandler(
      workflowRestartAgentUpdate,
      (request) => restartAgent(request.key, this.slots, this.removals, this.finished),
      {
        validator: (request) => {
          if (typeof request?.key !== 'string' || !/^[0-9a-f]{64}$/.test(request.key)) throw new Error('key must be an agent key: 64 hexadecimal digits, as the view lists them');
        },
      },
    );
  }

  /** What is left of the run's caps, for the plans asked now. */
  private remaining(): ReturnType<typeof remainingFor> {
    return remainingFor(this.input.caps, { tokens: this.tokens, costMicroUsd: this.costMicroUsd, now: Date.now(), deadline: this.deadline });
  }

  /** Sets `stop` when a cap is reached (the time budget included); answers whether the run may go on. */
  private checkCaps(): boolean {
    const crossed = this.stop ? undefined : runCapCrossed(this.input.caps, { tokens: this.tokens, costMicroUsd: this.costMicroUsd, now: Date.now(), deadline: this.deadline });
    if (crossed) this.stop = { status: 'budget', ...crossed };
    return this.stop === undefined;
  }

  /** Reserves the agent's share of the run's token and cost caps (decision 0050), waiting while running agents hold all that is left (agents woken together each look again). */
  private async reserve(slot: AgentSlot): Promise<void> {
    const reservation = () => {
      const holders = this.running().filter((other) => other.reserved !== undefined);
      // Shared with the lanes that may start now: the free ones, or fewer when fewer agents wait (this one included).
      const unstarted = this.queue.filter((request) => !this.slots.has(request.key)).length + this.running().length - holders.length;
      return agentReservation(this.remaining(), holders.map((other) => other.reserved ?? {}), Math.min(this.input.concurrency - holders.length, unstarted));
    };
    const stopped = () => this.stop !== undefined || this.cancelReason !== undefined;
    for (let share = reservation(); share === undefined && !stopped(); share = reservation()) await condition(() => stopped() || reservation() !== undefined);
    slot.reserved = reservation();
  }

  /** Whether agents share the run's token and cost caps (a run with such caps, from the patch on; before it each agent got all that was left). */
  private sharesCaps(): boolean {
    return (this.input.caps.tokenBudget !== undefined || this.input.caps.costBudgetMicroUsd !== undefined) && patched(runSharesCapsPatch);
  }

  /** Plans one agent, starts its child delegation and waits for it; whatever happens ends in `finished`. */
  private async runAgent(slot: AgentSlot): Promise<void> {
    const fail = (type: string, message: string) => {
      slot.state = 'failed';
      slot.failure = { type, message };
      slot.endedAt = Date.now();
      this.finished.push({ key: slot.key, failure: slot.failure });
    };
    const plan = await this.planner.take(slot.key);
    if (!plan.ok) return fail('AgentNotStarted', plan.message);
    if (this.sharesCaps()) await this.reserve(slot);
    if (this.stop || this.cancelReason !== undefined) {
      // Not started, so not finished: it is not journaled (a resume runs it).
      slot.state = 'cancelled';
      slot.failure = { type: 'cancelled', message: 'the run ended before the agent started' };
      slot.endedAt = Date.now();
      return;
    }
    // The run's agents report to nobody: the run reads each one's result when it ends.
    const { parent: _parent, ...planned } = plan.input;
    const childInput = slot.reserved ? capsWithin(planned, slot.reserved) : planned;
    let result: SubagentResult;
    try {
      const handle = await startChild('subagentWorkflow', agentChildOptions({ slot, childInput, sourceName: plan.source?.name ?? 'ad-hoc', runId: this.info.workflowId, tenant: this.input.tenant }));
      slot.started = true;
      slot.state = 'running';
      if (this.cancelReason !== undefined) void signalAgentCancel(slot.workflowId, this.cancelReason);
      result = (await handle.result()) as SubagentResult;
    } catch (error) {
      return fail('AgentFailed', `the agent's workflow did not complete: ${error instanceof Error ? error.message : String(error)}`);
    }
    const usage = result.totalUsage ?? result.usage;
    slot.tokens = usage.inputTokens + usage.outputTokens;
    slot.costMicroUsd = usage.costMicroUsd;
    this.tokens += slot.tokens;
    this.costMicroUsd += slot.costMicroUsd;
    slot.endedAt = Date.now();
    if (result.status === 'completed') slot.state = 'done';
    else {
      slot.state = result.status === 'cancelled' ? 'cancelled' : 'failed';
      const shared = result.status === 'budget' && slot.reserved ? "; that was its share of the run's caps, which the agents running at once share: raise the run's cap or lower its concurrency" : '';
      slot.failure = { type: result.status, message: `${result.diagnostic ?? `the agent ended ${result.status}`}${shared}` };
    }
    // An agent the run itself cancelled (cancel, a cap) did not finish: it is not journaled, a resume runs it.
    if (!(this.stop && result.status === 'cancelled')) this.finished.push({ key: slot.key, workflowId: slot.workflowId });
    this.checkCaps();
  }

  /** Puts finished agents into the journal and drops restarted keys (a round about to run does it in its own activity). */
  private async record(dropFailed = false): Promise<void> {
    if (this.finished.length === 0 && this.removals.length === 0 && !dropFailed) return;
    this.recorded(await rounds.recordWorkflowAgents({ journalRef: this.journalRef, ...this.toRecord(), ...(dropFailed ? { dropFailed } : {}) }));
  }

  /** The ended agents and restarted keys not journaled yet, taken for one journal write. */
  private toRecord(): { add: FinishedWorkflowAgent[]; remove: string[] } {
    return { add: this.finished.splice(0, this.finished.length), remove: this.removals.splice(0, this.removals.length) };
  }

  /** Takes in a journal write: the new journal, the counts, the per-label totals, fewer slots kept. */
  private recorded(recorded: Pick<RecordWorkflowAgentsOutput, 'journalRef' | 'entries'>): void {
    this.journalRef = recorded.journalRef;
    const counted = takeInJournaled(recorded.entries, this.slots, this.labels, this.finished);
    this.agentsDone += counted.done;
    this.agentsFailed += counted.failed;
  }

  /** Cancels every running agent and waits (a while) for them to end; one still starting is cancelled once started. */
  private async cancelRunning(reason: string): Promise<void> {
    this.cancelReason = reason; // an agent whose child is starting now gets it once started (runAgent)
    await Promise.all(this.running().filter((slot) => slot.started).map((slot) => signalAgentCancel(slot.workflowId, reason)));
    await condition(() => this.running().length === 0, cancelSettleWaitMs * 4);
  }

  private async end(final: Exclude<WorkflowRunStatus, 'running' | 'paused'>, extra: { result?: JsonValue; resultRef?: string; diagnostic?: WorkflowScriptDiagnostic }): Promise<WorkflowRunResult> {
    await this.record();
    this.waiting = []; // nothing waits any more: the per-label counts show only what ran
    this.endResult = { ...(extra.result !== undefined ? { result: extra.result } : {}), ...(extra.diagnostic ? { diagnostic: extra.diagnostic } : {}) };
    this.showStatus(final);
    upsertSearchAttributes([{ key: searchAttributes.costUsd, value: this.costMicroUsd / 1_000_000 }]);
    await condition(allHandlersFinished);
    return {
      status: final,
      ...(extra.result !== undefined ? { result: extra.result } : {}),
      ...(extra.resultRef !== undefined ? { resultRef: extra.resultRef } : {}),
      ...(extra.diagnostic ? { diagnostic: extra.diagnostic } : {}),
      tokens: this.tokens,
      costMicroUsd: this.costMicroUsd,
      agents: { done: this.agentsDone, failed: this.agentsFailed, fromJournal: this.fromJournal },
      journalRef: this.journalRef ?? (await rounds.recordWorkflowAgents({ journalRef: null, add: [], remove: [] })).journalRef,
    };
  }

  private async stopRun(why: Stop): Promise<WorkflowRunResult> {
    await this.cancelRunning(why.status === 'cancelled' ? why.reason : why.message);
    return this.end(why.status, why.status === 'budget' ? { diagnostic: { kind: 'budget', message: why.message, line: null } } : {});
  }

  private startedThisRun(): number {
    return this.agentsStarted - this.carried.agentsStarted;
  }

  /** Whether this run of the workflow should continue as new (it starts no agent then, and does so once none runs). */
  private dueToContinue(): boolean {
    return this.roundsThisRun >= workflowRoundsBeforeContinueAsNew || this.startedThisRun() >= this.agentsThisRun || workflowInfo().continueAsNewSuggested;
  }

  /**
   * Starts queued requests while a lane is free, whenever an agent ends: a lane never waits for the journal or
   * a round. None starts while paused, past a cap, stopping, due to continue as new or at the agent limit.
   */
  private fill(): void {
    while (this.queue.length > 0 && !this.paused && this.checkCaps() && !this.dueToContinue() && this.agentsStarted < this.input.maxAgents && this.running().length < this.input.concurrency) {
      const request = this.queue.shift() as WorkflowAgentSummary;
      if (this.slots.has(request.key)) continue;
      takeFromWaiting(this.waiting, request.label, request.phase);
      this.startAgent(request);
    }
    // The next lane set's worth is planned while the lanes are busy, only for agents this run may still start and
    // only without caps: a plan carries what was left of them when it was made.
    if (this.paused || this.stop || this.dueToContinue() || Object.keys(this.remaining()).length > 0) return;
    const unstarted = this.queue.filter((request) => !this.slots.has(request.key)).map((request) => request.key);
    this.planner.ahead(keysToPlanAhead(unstarted, { ready: this.planner.ready, concurrency: this.input.concurrency, take: this.roundTake(), batched: unstarted.length > 0 && patched(planAheadInBatchesPatch) }));
  }

  /** Whether the loop has work: a stop, a pause or resume, a restart, a drained run due to continue as new, or a batch to journal. */
  private wakeFor(pausedBefore: boolean): () => boolean {
    return () => this.stop !== undefined || this.paused !== pausedBefore || this.removals.length > 0 || (this.running().length === 0 && this.dueToContinue()) || journalNow(this.lanes());
  }

  private lanes(): Lanes {
    return { running: this.running().length, finished: this.finished.length, queued: this.queue.length, concurrency: this.input.concurrency, dueToContinue: this.dueToContinue() };
  }

  /** How many requests the next round returns at most: what this run of the workflow may still start. */
  private roundTake(): number {
    return Math.max(0, Math.min(this.input.maxAgents - this.agentsStarted, this.agentsThisRun - this.startedThisRun()));
  }

  /** The run: rounds, agents and waits until the script ends, a stop, or continue-as-new. */
  async execute(): Promise<WorkflowRunResult> {
    // A run resumed from an ended one runs its failed agents again (only finished ones are kept).
    if (this.input.carried === undefined && this.journalRef !== null) await this.record(true);
    let roundDue = true; // the first round runs at once; later ones when there is news and the queue runs low
    this.fill(); // requests carried from the last run start now, while the first round runs
    for (;;) {
      if (this.removals.length > 0) roundDue = true;
      const news = this.finished.length > 0;
      this.checkCaps();
      if (this.stop) return this.stopRun(this.stop);
      const due = this.dueToContinue();
      if (news && roundWanted(this.lanes())) roundDue = true;
      if (roundDue && !due) {
        roundDue = false;
        const ended = await this.runRound(); // it journals the ended agents first, in its activity
        if (ended) return ended;
      } else await this.record();
      if (due && this.running().length === 0 && this.finished.length === 0 && this.removals.length === 0) return this.continueAsNew();
      const pausedBefore = this.paused;
      const waitMs = this.deadline !== undefined ? Math.max(0, this.deadline - Date.now()) : undefined;
      if (waitMs === undefined) await condition(this.wakeFor(pausedBefore));
      else await condition(this.wakeFor(pausedBefore), waitMs);
      this.fill();
    }
  }

  /** Runs one round: the script's end, or its requests become the queue (those not started yet). */
  private async runRound(): Promise<WorkflowRunResult | undefined> {
    const round: RunWorkflowRoundOutput = await rounds.runWorkflowRound({
      ...(this.scriptRef ? { scriptRef: this.scriptRef } : { script: this.input.script }),
      args: this.input.args,
      journalRef: this.journalRef,
      record: this.toRecord(),
      definitionsRef: this.definitionsRef,
      running: this.running().map((slot) => slot.key),
      take: this.roundTake(),
      maxAgents: this.input.maxAgents,
      budgetTokens: this.input.caps.tokenBudget ?? null,
      workingDir: this.input.workingDir,
      ...(this.input.tenant ? { tenant: this.input.tenant } : {}),
    });
    this.roundsThisRun += 1;
    if (round.recorded) this.recorded(round.recorded);
    this.scriptRef = round.scriptRef;
    if (this.input.carried === undefined && this.roundsThisRun === 1) this.fromJournal = round.journalSize;
    if (round.logs.length > 0) this.logs = round.logs;
    if (round.status !== 'waiting') this.queue = []; // none may start in the lanes cancelled agents free
    if (round.status === 'failed') {
      await this.cancelRunning('the script failed');
      return this.end('failed', { diagnostic: round.diagnostic });
    }
    if (round.status === 'done') {
      // Agents the script did not wait for are not needed any more.
      if (this.running().length > 0) await this.cancelRunning('the script returned without waiting for this agent');
      return this.end('completed', { ...(round.result !== undefined ? { result: round.result } : {}), ...(round.resultRef ? { resultRef: round.resultRef } : {}) });
    }
    this.definitionsRef = round.definitionsRef;
    this.waiting = round.waiting.map((count) => ({ ...count }));
    const lastPhase = round.requests.at(-1)?.phase;
    if (lastPhase !== undefined) this.phase = lastPhase;
    // Agents that started or ended while the round ran are in `slots`: the queue holds only the others.
    this.queue = round.requests.filter((request) => !this.slots.has(request.key));
    this.fill();
    if (this.running().length === 0 && this.finished.length === 0 && !this.paused && !this.dueToContinue() && this.agentsStarted >= this.input.maxAgents && round.waitingTotal > 0) {
      return this.end('failed', { diagnostic: { kind: 'agents', message: `the run started ${this.agentsStarted} agents, its limit (maxAgents); ${round.waitingTotal} more are waiting`, line: null } });
    }
    return undefined;
  }

  private async continueAsNew(): Promise<never> {
    await condition(allHandlersFinished);
    const next: WorkflowRunCarried = {
      startedAtMs: this.carried.startedAtMs, paused: this.paused, tokens: this.tokens, costMicroUsd: this.costMicroUsd, agentsStarted: this.agentsStarted, definitionsRef: this.definitionsRef, agentsDone: this.agentsDone, agentsFailed: this.agentsFailed, fromJournal: this.fromJournal, labels: this.labels,
      ...(this.scriptRef ? { scriptRef: this.scriptRef } : {}), generation: (this.carried.generation ?? 0) + 1,
      queue: this.queue.filter((request) => !this.slots.has(request.key)).slice(0, this.input.concurrency * 2),
    };
    return continueAsNew<typeof workflowRunWorkflow>({ ...this.input, ...(this.journalRef ? { journalRef: this.journalRef } : {}), carried: next });
  }

  private startAgent(request: WorkflowAgentSummary): void {
    if (this.slots.has(request.key)) return;
    this.agentsStarted += 1;
    const slot: AgentSlot = {
      key: request.key, n: this.agentsStarted, label: request.label, phase: request.phase, workflowId: workflowAgentId(this.info.workflowId, this.agentsStarted),
      state: 'waiting', started: false, tokens: 0, costMicroUsd: 0, startedAt: Date.now(), endedAt: null, failure: null,
    };
    this.slots.set(request.key, slot);
    // Whatever way it ends, its lane goes to the next queued request at once.
    void this.runAgent(slot).then(() => this.fill());
  }
}

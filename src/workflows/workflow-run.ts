import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { nonRetryableFailureTypes } from '../contracts/failures';
import type { JsonValue } from '../contracts/json';
import { cancelSettleWaitMs, workflowTaskTimeoutMs } from '../contracts/limits/workflow';
import { workflowAgentsBeforeContinueAsNew, workflowRoundsBeforeContinueAsNew, workflowRunHeartbeatTimeoutMs, workflowScriptRoundMs } from '../contracts/limits/workflow-scripts';
import { searchAttributes } from '../contracts/search-attributes';
import { cancelSignal } from '../contracts/subagent-messages';
import type { SubagentResult } from '../contracts/subagent-result';
import { workflowAgentId } from '../contracts/workflow-ids';
import type { WorkflowLabelView, WorkflowRunCarried, WorkflowRunInput, WorkflowRunResult, WorkflowRunStatus } from '../contracts/workflow-run';
import type { FinishedWorkflowAgent, RunWorkflowRoundOutput, WorkflowAgentSummary, WorkflowRunActivities, WorkflowWaitingCount } from '../contracts/workflow-run-activities';
import { workflowCancelSignal, workflowPauseSignal, workflowRestartAgentUpdate, workflowResumeSignal, workflowViewQuery } from '../contracts/workflow-run-messages';
import type { WorkflowScriptDiagnostic } from '../contracts/workflow-script';
import { runCapCrossed, type RunCap } from './workflow-run-caps';
import { addToLabels, buildView, type AgentSlot } from './workflow-run-view';

const nonRetryableErrorTypes = [...nonRetryableFailureTypes];

const rounds = proxyActivities<WorkflowRunActivities>({
  // A round runs the script in a thread stopped at its time limit; it may run again once per agent
  // definition the script names (read through the sources), and wait for a free thread.
  startToCloseTimeout: workflowScriptRoundMs * 12,
  heartbeatTimeout: workflowRunHeartbeatTimeoutMs,
  retry: { initialInterval: 500, maximumAttempts: 5, nonRetryableErrorTypes },
});
const planning = proxyActivities<WorkflowRunActivities>({
  startToCloseTimeout: 10 * 60_000,
  heartbeatTimeout: workflowRunHeartbeatTimeoutMs,
  retry: { initialInterval: 500, maximumAttempts: 10, nonRetryableErrorTypes },
});

/** Why the run ends before its script does. */
type Stop = { status: 'cancelled'; reason: string } | { status: 'budget'; cap: RunCap; message: string };

/**
 * A workflow run (SEMANTICS §7, decision 0038): a script's rounds as activities and its `agent()` calls as
 * child delegations. Each round runs the script from its start against the journal (by reference in
 * errand's store) and names the agents it waits on; up to `concurrency` run at once; as they finish, their
 * results go into the journal and the next round runs. The run continues as new, carrying the journal's
 * reference, when Temporal suggests it or after {@link workflowRoundsBeforeContinueAsNew} rounds, once no
 * agent is running (it stops starting new ones until then), so history stays bounded at any size of run.
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
  private phase: string | null = null;
  private logs: string[] = [];
  private stop: Stop | undefined;
  private status: WorkflowRunStatus;
  private endResult: { result?: JsonValue; diagnostic?: WorkflowScriptDiagnostic } = {};
  private roundsThisRun = 0;
  private readonly deadline: number | undefined;

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
      (request) => {
        const slot = this.slots.get(request.key);
        if (slot && (slot.state === 'running' || slot.state === 'waiting')) return { restarted: false, message: `agent ${request.key} is running; it can be restarted once it has finished` };
        this.removals.push(request.key);
        if (slot) this.slots.delete(request.key);
        return { restarted: true, message: `agent ${request.key} is dropped from the journal: its call runs again at the next round` };
      },
      {
        validator: (request) => {
          if (typeof request?.key !== 'string' || !/^[0-9a-f]{64}$/.test(request.key)) throw new Error('key must be an agent key: 64 hexadecimal digits, as the view lists them');
        },
      },
    );
  }

  private checkCaps(): void {
    if (this.stop) return;
    const crossed = runCapCrossed(this.input.caps, { tokens: this.tokens, costMicroUsd: this.costMicroUsd, now: Date.now(), deadline: this.deadline });
    if (crossed) this.stop = { status: 'budget', ...crossed };
  }

  /** Plans one agent, starts its child delegation and waits for it; whatever happens ends in `finished`. */
  private async runAgent(slot: AgentSlot): Promise<void> {
    const remaining = {
      ...(this.input.caps.tokenBudget !== undefined ? { remainingTokens: Math.max(1, this.input.caps.tokenBudget - this.tokens) } : {}),
      ...(this.deadline !== undefined ? { remainingTimeMs: Math.max(1, this.deadline - Date.now()) } : {}),
      ...(this.input.caps.costBudgetMicroUsd !== undefined ? { remainingCostMicroUsd: Math.max(1, this.input.caps.costBudgetMicroUsd - this.costMicroUsd) } : {}),
    };
    const fail = (type: string, message: string) => {
      slot.state = 'failed';
      slot.failure = { type, message };
      slot.endedAt = Date.now();
      this.finished.push({ key: slot.key, failure: slot.failure });
    };
    let plan;
    try {
      plan = await planning.planWorkflowAgent({ key: slot.key, runId: this.info.workflowId, taskId: `agent-${slot.n}`, workingDir: this.input.workingDir, ...(this.input.tenant ? { tenant: this.input.tenant } : {}), ...remaining });
    } catch (error) {
      return fail('AgentNotStarted', `planning failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!plan.ok) return fail('AgentNotStarted', plan.message);
    if (this.stop) {
      // Not started, so not finished: it is not journaled (a resume runs it).
      slot.state = 'cancelled';
      slot.failure = { type: 'cancelled', message: 'the run ended before the agent started' };
      slot.endedAt = Date.now();
      return;
    }
    // The run's agents report to nobody: the run reads each one's result when it ends.
    const { parent: _parent, ...childInput } = plan.input;
    let result: SubagentResult;
    try {
      const handle = await startChild('subagentWorkflow', {
        workflowId: slot.workflowId,
        args: [childInput],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        workflowTaskTimeout: workflowTaskTimeoutMs,
        staticSummary: slot.label ?? childInput.label,
        staticDetails: [`workflow run: ${this.info.workflowId}`, `agent ${slot.n}${slot.phase ? `, phase ${slot.phase}` : ''}`, `key: ${slot.key}`].join('\n'),
        typedSearchAttributes: [
          { key: searchAttributes.kind, value: 'subagent' },
          { key: searchAttributes.source, value: plan.source?.name ?? 'ad-hoc' },
          { key: searchAttributes.parent, value: this.info.workflowId },
          { key: searchAttributes.status, value: 'running' },
          { key: searchAttributes.model, value: `${childInput.route.provider}/${childInput.route.model}` },
          { key: searchAttributes.turns, value: 0 },
          ...(this.input.tenant ? [{ key: searchAttributes.tenant, value: this.input.tenant }] : []),
        ],
      });
      slot.started = true;
      slot.state = 'running';
      // A stop that came while the start was under way found this agent not started (cancelRunning signals
      // started ones only): it is cancelled here, or it would run to its end unowned while the run waits.
      const stopped = this.stopReason();
      if (stopped !== undefined) await this.cancelStarted(slot, stopped);
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
      slot.failure = { type: result.status, message: result.diagnostic ?? `the agent ended ${result.status}` };
    }
    // An agent the run itself cancelled (cancel, a cap) did not finish: it is not journaled, a resume runs it.
    if (!(this.stop && result.status === 'cancelled')) this.finished.push({ key: slot.key, workflowId: slot.workflowId });
    this.checkCaps();
  }

  /** Puts finished agents into the journal and drops restarted keys. */
  private async record(dropFailed = false): Promise<void> {
    if (this.finished.length === 0 && this.removals.length === 0 && !dropFailed) return;
    const add = this.finished.splice(0, this.finished.length);
    const remove = this.removals.splice(0, this.removals.length);
    const recorded = await rounds.recordWorkflowAgents({ journalRef: this.journalRef, add, remove, ...(dropFailed ? { dropFailed } : {}) });
    this.journalRef = recorded.journalRef;
    for (const entry of recorded.entries) {
      const slot = this.slots.get(entry.key);
      if (entry.outcome === 'done') this.agentsDone += 1;
      else this.agentsFailed += 1;
      if (slot) addToLabels(this.labels, slot);
    }
    // Finished slots beyond the view's needs are dropped; their totals live on in `labels`.
    for (const slot of [...this.slots.values()]) {
      if (this.slots.size <= 400) break;
      if (slot.state !== 'running' && slot.state !== 'waiting') this.slots.delete(slot.key);
    }
  }

  /** Why the run is stopping, or undefined while it is not (read fresh: a signal may have come during an await). */
  private stopReason(): string | undefined {
    const stop = this.stop;
    return stop === undefined ? undefined : stop.status === 'cancelled' ? stop.reason : stop.message;
  }

  /** Sends a started agent the cancel signal (it may have ended meanwhile). */
  private async cancelStarted(slot: AgentSlot, reason: string): Promise<void> {
    await CancellationScope.nonCancellable(async () => {
      try {
        await getExternalWorkflowHandle(slot.workflowId).signal(cancelSignal, { reason });
      } catch {
        // It has ended meanwhile.
      }
    });
  }

  /** Cancels every running agent and waits (a while) for them to end; one still starting is cancelled once started. */
  private async cancelRunning(reason: string): Promise<void> {
    await Promise.all(this.running().filter((slot) => slot.started).map((slot) => this.cancelStarted(slot, reason)));
    await condition(() => this.running().length === 0, cancelSettleWaitMs * 4);
  }

  private async end(final: Exclude<WorkflowRunStatus, 'running' | 'paused'>, extra: { result?: JsonValue; resultRef?: string; diagnostic?: WorkflowScriptDiagnostic }): Promise<WorkflowRunResult> {
    await this.record();
    // Nothing waits any more: the view's per-label counts show only what ran.
    this.waiting = [];
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

  /** The run: rounds, agents and waits until the script ends, a stop, or continue-as-new. */
  async execute(): Promise<WorkflowRunResult> {
    // A run resumed from an ended one runs its failed agents again (only finished ones are kept).
    if (this.input.carried === undefined && this.journalRef !== null) await this.record(true);

    for (;;) {
      await this.record();
      this.checkCaps();
      if (this.stop) return this.stopRun(this.stop);
      const live = this.running().length;
      const dueToContinue = this.roundsThisRun >= workflowRoundsBeforeContinueAsNew || this.agentsStarted - (this.carried.agentsStarted) >= workflowAgentsBeforeContinueAsNew || workflowInfo().continueAsNewSuggested;
      if (dueToContinue && live === 0 && this.finished.length === 0 && this.removals.length === 0) {
        await condition(allHandlersFinished);
        const next: WorkflowRunCarried = {
          startedAtMs: this.carried.startedAtMs, paused: this.paused, tokens: this.tokens, costMicroUsd: this.costMicroUsd, agentsStarted: this.agentsStarted, definitionsRef: this.definitionsRef, agentsDone: this.agentsDone, agentsFailed: this.agentsFailed, fromJournal: this.fromJournal, labels: this.labels,
          ...(this.scriptRef ? { scriptRef: this.scriptRef } : {}), generation: (this.carried.generation ?? 0) + 1,
        };
        return continueAsNew<typeof workflowRunWorkflow>({ ...this.input, ...(this.journalRef ? { journalRef: this.journalRef } : {}), carried: next });
      }
      const take = this.paused || dueToContinue ? 0 : Math.max(0, Math.min(this.input.concurrency - live, this.input.maxAgents - this.agentsStarted));
      const round: RunWorkflowRoundOutput = await rounds.runWorkflowRound({
        ...(this.scriptRef ? { scriptRef: this.scriptRef } : { script: this.input.script }),
        args: this.input.args,
        journalRef: this.journalRef,
        definitionsRef: this.definitionsRef,
        running: this.running().map((slot) => slot.key),
        take,
        maxAgents: this.input.maxAgents,
        budgetTokens: this.input.caps.tokenBudget ?? null,
        workingDir: this.input.workingDir,
        ...(this.input.tenant ? { tenant: this.input.tenant } : {}),
      });
      this.roundsThisRun += 1;
      this.scriptRef = round.scriptRef;
      if (this.input.carried === undefined && this.roundsThisRun === 1) this.fromJournal = round.journalSize;
      if (round.logs.length > 0) this.logs = round.logs;
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
      this.waiting = round.waiting;
      const lastPhase = round.requests.at(-1)?.phase;
      if (lastPhase !== undefined) this.phase = lastPhase;
      for (const request of round.requests) this.startAgent(request);
      if (this.running().length === 0 && this.finished.length === 0 && !this.paused && !dueToContinue) {
        if (this.agentsStarted >= this.input.maxAgents && round.waitingTotal > 0) {
          return this.end('failed', { diagnostic: { kind: 'agents', message: `the run started ${this.agentsStarted} agents, its limit (maxAgents); ${round.waitingTotal} more are waiting`, line: null } });
        }
      }
      const wokenBy = { paused: this.paused };
      const waitMs = this.deadline !== undefined ? Math.max(0, this.deadline - Date.now()) : undefined;
      const woken = () => this.finished.length > 0 || this.removals.length > 0 || this.stop !== undefined || this.paused !== wokenBy.paused || (dueToContinue && this.running().length === 0);
      if (waitMs === undefined) await condition(woken);
      else await condition(woken, waitMs);
    }
  }

  private startAgent(request: WorkflowAgentSummary): void {
    if (this.slots.has(request.key)) return;
    this.agentsStarted += 1;
    const slot: AgentSlot = {
      key: request.key, n: this.agentsStarted, label: request.label, phase: request.phase, workflowId: workflowAgentId(this.info.workflowId, this.agentsStarted),
      state: 'waiting', started: false, tokens: 0, costMicroUsd: 0, startedAt: Date.now(), endedAt: null, failure: null,
    };
    this.slots.set(request.key, slot);
    void this.runAgent(slot);
  }
}

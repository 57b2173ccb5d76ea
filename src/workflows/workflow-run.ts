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
import { cancelSettleWaitMs, workflowAgentsBeforeContinueAsNew, workflowRoundsBeforeContinueAsNew, workflowRunHeartbeatTimeoutMs, workflowScriptRoundMs, workflowTaskTimeoutMs } from '../contracts/limits';
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
  const info = workflowInfo();
  const carried: WorkflowRunCarried = input.carried ?? { startedAtMs: Date.now(), paused: false, tokens: 0, costMicroUsd: 0, agentsStarted: 0 };
  let journalRef: string | null = input.journalRef ?? null;
  let definitionsRef = carried.definitionsRef ?? null;
  let scriptRef = carried.scriptRef;
  let paused = carried.paused;
  let tokens = carried.tokens;
  let costMicroUsd = carried.costMicroUsd;
  let agentsStarted = carried.agentsStarted;
  let agentsDone = carried.agentsDone ?? 0;
  let agentsFailed = carried.agentsFailed ?? 0;
  let fromJournal = carried.fromJournal ?? 0;
  const labels: WorkflowLabelView[] = carried.labels ?? [];
  const slots = new Map<string, AgentSlot>();
  const finished: FinishedWorkflowAgent[] = [];
  const removals: string[] = [];
  let waiting: WorkflowWaitingCount[] = [];
  let phase: string | null = null;
  let logs: string[] = [];
  let stop: Stop | undefined;
  let status: WorkflowRunStatus = paused ? 'paused' : 'running';
  let endResult: { result?: JsonValue; diagnostic?: WorkflowScriptDiagnostic } = {};
  let roundsThisRun = 0;
  const running = () => [...slots.values()].filter((slot) => slot.state === 'running' || slot.state === 'waiting');

  const showStatus = (next: WorkflowRunStatus) => {
    if (next === status) return;
    status = next;
    upsertSearchAttributes([{ key: searchAttributes.status, value: next }]);
  };

  setHandler(workflowViewQuery, () =>
    buildView({
      id: info.workflowId,
      scriptName: input.scriptName,
      status,
      phase,
      labels,
      waiting,
      slots: slots.values(),
      tokens,
      costMicroUsd,
      elapsedMs: Date.now() - carried.startedAtMs,
      now: Date.now(),
      ...endResult,
      logs,
    }),
  );
  setHandler(workflowPauseSignal, () => {
    paused = true;
    if (status === 'running') showStatus('paused');
  });
  setHandler(workflowResumeSignal, () => {
    paused = false;
    if (status === 'paused') showStatus('running');
  });
  setHandler(workflowCancelSignal, (cancel) => {
    stop ??= { status: 'cancelled', reason: cancel.reason ?? 'cancelled' };
  });
  setHandler(
    workflowRestartAgentUpdate,
    (request) => {
      const slot = slots.get(request.key);
      if (slot && (slot.state === 'running' || slot.state === 'waiting')) return { restarted: false, message: `agent ${request.key} is running; it can be restarted once it has finished` };
      removals.push(request.key);
      if (slot) slots.delete(request.key);
      return { restarted: true, message: `agent ${request.key} is dropped from the journal: its call runs again at the next round` };
    },
    {
      validator: (request) => {
        if (typeof request?.key !== 'string' || !/^[0-9a-f]{64}$/.test(request.key)) throw new Error('key must be an agent key: 64 hexadecimal digits, as the view lists them');
      },
    },
  );

  const deadline = input.caps.timeBudgetMs !== undefined ? carried.startedAtMs + input.caps.timeBudgetMs : undefined;
  const checkCaps = () => {
    if (stop) return;
    const crossed = runCapCrossed(input.caps, { tokens, costMicroUsd, now: Date.now(), deadline });
    if (crossed) stop = { status: 'budget', ...crossed };
  };

  /** Plans one agent, starts its child delegation and waits for it; whatever happens ends in `finished`. */
  const runAgent = async (slot: AgentSlot): Promise<void> => {
    const remaining = {
      ...(input.caps.tokenBudget !== undefined ? { remainingTokens: Math.max(1, input.caps.tokenBudget - tokens) } : {}),
      ...(deadline !== undefined ? { remainingTimeMs: Math.max(1, deadline - Date.now()) } : {}),
      ...(input.caps.costBudgetMicroUsd !== undefined ? { remainingCostMicroUsd: Math.max(1, input.caps.costBudgetMicroUsd - costMicroUsd) } : {}),
    };
    const fail = (type: string, message: string) => {
      slot.state = 'failed';
      slot.failure = { type, message };
      slot.endedAt = Date.now();
      finished.push({ key: slot.key, failure: slot.failure });
    };
    let plan;
    try {
      plan = await planning.planWorkflowAgent({ key: slot.key, runId: info.workflowId, taskId: `agent-${slot.n}`, workingDir: input.workingDir, ...(input.tenant ? { tenant: input.tenant } : {}), ...remaining });
    } catch (error) {
      return fail('AgentNotStarted', `planning failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (!plan.ok) return fail('AgentNotStarted', plan.message);
    if (stop) return fail('cancelled', 'the run ended before the agent started');
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
        staticDetails: [`workflow run: ${info.workflowId}`, `agent ${slot.n}${slot.phase ? `, phase ${slot.phase}` : ''}`, `key: ${slot.key}`].join('\n'),
        typedSearchAttributes: [
          { key: searchAttributes.kind, value: 'subagent' },
          { key: searchAttributes.source, value: plan.source?.name ?? 'ad-hoc' },
          { key: searchAttributes.parent, value: info.workflowId },
          { key: searchAttributes.status, value: 'running' },
          { key: searchAttributes.model, value: `${childInput.route.provider}/${childInput.route.model}` },
          { key: searchAttributes.turns, value: 0 },
          ...(input.tenant ? [{ key: searchAttributes.tenant, value: input.tenant }] : []),
        ],
      });
      slot.started = true;
      slot.state = 'running';
      result = (await handle.result()) as SubagentResult;
    } catch (error) {
      return fail('AgentFailed', `the agent's workflow did not complete: ${error instanceof Error ? error.message : String(error)}`);
    }
    const usage = result.totalUsage ?? result.usage;
    slot.tokens = usage.inputTokens + usage.outputTokens;
    slot.costMicroUsd = usage.costMicroUsd;
    tokens += slot.tokens;
    costMicroUsd += slot.costMicroUsd;
    slot.endedAt = Date.now();
    if (result.status === 'completed') slot.state = 'done';
    else {
      slot.state = result.status === 'cancelled' ? 'cancelled' : 'failed';
      slot.failure = { type: result.status, message: result.diagnostic ?? `the agent ended ${result.status}` };
    }
    // An agent the run itself cancelled (cancel, a cap) did not finish: it is not journaled, a resume runs it.
    if (!(stop && result.status === 'cancelled')) finished.push({ key: slot.key, workflowId: slot.workflowId });
    checkCaps();
  };

  /** Puts finished agents into the journal and drops restarted keys. */
  const record = async (dropFailed = false) => {
    if (finished.length === 0 && removals.length === 0 && !dropFailed) return;
    const add = finished.splice(0, finished.length);
    const remove = removals.splice(0, removals.length);
    const recorded = await rounds.recordWorkflowAgents({ journalRef, add, remove, ...(dropFailed ? { dropFailed } : {}) });
    journalRef = recorded.journalRef;
    for (const entry of recorded.entries) {
      const slot = slots.get(entry.key);
      if (entry.outcome === 'done') agentsDone += 1;
      else agentsFailed += 1;
      if (slot) addToLabels(labels, slot);
    }
    // Finished slots beyond the view's needs are dropped; their totals live on in `labels`.
    for (const slot of [...slots.values()]) {
      if (slots.size <= 400) break;
      if (slot.state !== 'running' && slot.state !== 'waiting') slots.delete(slot.key);
    }
  };

  /** Cancels every running agent and waits (a while) for them to end. */
  const cancelRunning = async (reason: string) => {
    const live = running();
    await CancellationScope.nonCancellable(() =>
      Promise.all(
        live.filter((slot) => slot.started).map(async (slot) => {
          try {
            await getExternalWorkflowHandle(slot.workflowId).signal(cancelSignal, { reason });
          } catch {
            // It has ended meanwhile.
          }
        }),
      ),
    );
    await condition(() => running().length === 0, cancelSettleWaitMs * 4);
  };

  const end = async (final: Exclude<WorkflowRunStatus, 'running' | 'paused'>, extra: { result?: JsonValue; resultRef?: string; diagnostic?: WorkflowScriptDiagnostic }): Promise<WorkflowRunResult> => {
    await record();
    endResult = { ...(extra.result !== undefined ? { result: extra.result } : {}), ...(extra.diagnostic ? { diagnostic: extra.diagnostic } : {}) };
    showStatus(final);
    upsertSearchAttributes([{ key: searchAttributes.costUsd, value: costMicroUsd / 1_000_000 }]);
    await condition(allHandlersFinished);
    return {
      status: final,
      ...(extra.result !== undefined ? { result: extra.result } : {}),
      ...(extra.resultRef !== undefined ? { resultRef: extra.resultRef } : {}),
      ...(extra.diagnostic ? { diagnostic: extra.diagnostic } : {}),
      tokens,
      costMicroUsd,
      agents: { done: agentsDone, failed: agentsFailed, fromJournal },
      journalRef: journalRef ?? (await rounds.recordWorkflowAgents({ journalRef: null, add: [], remove: [] })).journalRef,
    };
  };

  const stopRun = async (why: Stop) => {
    await cancelRunning(why.status === 'cancelled' ? why.reason : why.message);
    return end(why.status, why.status === 'budget' ? { diagnostic: { kind: 'budget', message: why.message, line: null } } : {});
  };

  // A run resumed from an ended one runs its failed agents again (only finished ones are kept).
  if (input.carried === undefined && journalRef !== null) await record(true);

  for (;;) {
    await record();
    checkCaps();
    if (stop) return stopRun(stop);
    const live = running().length;
    const dueToContinue = roundsThisRun >= workflowRoundsBeforeContinueAsNew || agentsStarted - (carried.agentsStarted) >= workflowAgentsBeforeContinueAsNew || workflowInfo().continueAsNewSuggested;
    if (dueToContinue && live === 0 && finished.length === 0 && removals.length === 0) {
      await condition(allHandlersFinished);
      const next: WorkflowRunCarried = {
        startedAtMs: carried.startedAtMs, paused, tokens, costMicroUsd, agentsStarted, definitionsRef, agentsDone, agentsFailed, fromJournal, labels,
        ...(scriptRef ? { scriptRef } : {}), generation: (carried.generation ?? 0) + 1,
      };
      return continueAsNew<typeof workflowRunWorkflow>({ ...input, ...(journalRef ? { journalRef } : {}), carried: next });
    }
    const take = paused || dueToContinue ? 0 : Math.max(0, Math.min(input.concurrency - live, input.maxAgents - agentsStarted));
    const round: RunWorkflowRoundOutput = await rounds.runWorkflowRound({
      ...(scriptRef ? { scriptRef } : { script: input.script }),
      args: input.args,
      journalRef,
      definitionsRef,
      running: running().map((slot) => slot.key),
      take,
      maxAgents: input.maxAgents,
      budgetTokens: input.caps.tokenBudget ?? null,
      workingDir: input.workingDir,
      ...(input.tenant ? { tenant: input.tenant } : {}),
    });
    roundsThisRun += 1;
    scriptRef = round.scriptRef;
    if (input.carried === undefined && roundsThisRun === 1) fromJournal = round.journalSize;
    if (round.logs.length > 0) logs = round.logs;
    if (round.status === 'failed') {
      await cancelRunning('the script failed');
      return end('failed', { diagnostic: round.diagnostic });
    }
    if (round.status === 'done') {
      // Agents the script did not wait for are not needed any more.
      if (running().length > 0) await cancelRunning('the script returned without waiting for this agent');
      return end('completed', { ...(round.result !== undefined ? { result: round.result } : {}), ...(round.resultRef ? { resultRef: round.resultRef } : {}) });
    }
    definitionsRef = round.definitionsRef;
    waiting = round.waiting;
    const lastPhase = round.requests.at(-1)?.phase;
    if (lastPhase !== undefined) phase = lastPhase;
    for (const request of round.requests) startAgent(request);
    if (running().length === 0 && finished.length === 0 && !paused && !dueToContinue) {
      if (agentsStarted >= input.maxAgents && round.waitingTotal > 0) {
        return end('failed', { diagnostic: { kind: 'agents', message: `the run started ${agentsStarted} agents, its limit (maxAgents); ${round.waitingTotal} more are waiting`, line: null } });
      }
    }
    const wokenBy = { paused };
    const waitMs = deadline !== undefined ? Math.max(0, deadline - Date.now()) : undefined;
    const woken = () => finished.length > 0 || removals.length > 0 || stop !== undefined || paused !== wokenBy.paused || (dueToContinue && running().length === 0);
    if (waitMs === undefined) await condition(woken);
    else await condition(woken, waitMs);
  }

  function startAgent(request: WorkflowAgentSummary): void {
    if (slots.has(request.key)) return;
    agentsStarted += 1;
    const slot: AgentSlot = {
      key: request.key, n: agentsStarted, label: request.label, phase: request.phase, workflowId: workflowAgentId(info.workflowId, agentsStarted),
      state: 'waiting', started: false, tokens: 0, costMicroUsd: 0, startedAt: Date.now(), endedAt: null, failure: null,
    };
    slots.set(request.key, slot);
    void runAgent(slot);
  }
}

import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  patched,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import { defaultApprovalTimeoutMs, defaultSessionIdleTimeoutMs, resultTextInlineMaxChars } from '../contracts/limits/workflow';
import type { SessionInput, SessionResult } from '../contracts/session';
import { capNotRunCause } from '../domain/delegation-texts';
import { isCapStatus } from '../contracts/subagent';
import { buildSessionSystemPrompt } from '../domain/session-prompt';
import { Agent } from './agent';
import { AgentLoop, type RunOutcome } from './agent-loop';
import { registerAgentHandlers } from './agent-handlers';
import { conversationIdOf, lastAssistantFullText, lastAssistantTextUpTo } from './conversation';
import { IdleAlarm } from './idle-alarm';
import { sessionDefinitionOptions } from './versioning-behaviour';
import { registerMcpToolCalls } from './mcp-tool-calls';
import { TaskOrchestrator } from './task-orchestration';
import { outcomeOfError } from './workflow-outcome';

/**
 * A parent session: a conversation whose model can `load` and `delegate`. Each user message (update)
 * runs model turns until the model answers; background tasks' notices wake an idle session for one run.
 * A failed run is reported in the reply and the transcript, and the session waits for the next message
 * with its tasks still running. It ends only when cancelled, when idle longer than its idle timeout, or
 * when its token budget is crossed; then it cancels all its descendants.
 */
export async function sessionWorkflow(input: SessionInput): Promise<SessionResult> {
  const info = workflowInfo();
  const agent = new Agent({
    kind: 'session',
    workflowId: info.workflowId,
    conversationId: conversationIdOf(info),
    label: input.label,
    route: input.route,
    toolsets: input.toolsets,
    workingDir: input.workingDir,
    depth: 0,
    maxDepth: input.maxDepth,
    activity: input.activity,
    tasks: input.tasks,
    ...(input.recipe ? { recipe: input.recipe } : {}),
    ...(input.tenant ? { tenant: input.tenant } : {}),
    ...(input.tokenBudget !== undefined ? { tokenBudget: input.tokenBudget } : {}),
    ...(input.timeBudgetMs !== undefined ? { timeBudgetMs: input.timeBudgetMs } : {}),
    ...(input.costBudgetMicroUsd !== undefined ? { costBudgetMicroUsd: input.costBudgetMicroUsd } : {}),
    ...(input.maxOutputTokens !== undefined ? { maxOutputTokens: input.maxOutputTokens } : {}),
    approvalTimeoutMs: input.approvalTimeoutMs ?? defaultApprovalTimeoutMs,
    approvers: input.approvers ?? 'human',
    now: Date.now(),
  }, input.carried);
  const orchestrator = new TaskOrchestrator(agent);
  const loop = new AgentLoop(agent, orchestrator);
  const idleTimeoutMs = input.idleTimeoutMs ?? defaultSessionIdleTimeoutMs;
  const idle = new IdleAlarm(() => agent.lastActivityAt, idleTimeoutMs, agent.quietWaits);
  let cancelReason: string | undefined;
  /** The refresh signal arrived: continue as new at the next wait. */
  let refreshRequested = false;
  let ended = false;
  let messages = 0;
  const loopScope = new CancellationScope();
  // A run continued from a wait waits again (decision 0021: it may continue as new while nothing is queued).
  if (!input.carried || (agent.quietWaits && input.carried.phase === 'waiting')) agent.state = 'waiting';
  agent.onBudgetCrossed = () => loopScope.cancel();

  registerAgentHandlers(agent, orchestrator, {
    maxTurns: input.maxTurnsPerMessage,
    cancel: (reason) => {
      cancelReason = reason;
      loopScope.cancel();
    },
    refuseMessage: () => {
      if (ended || cancelReason !== undefined) throw new Error(`session ${info.workflowId} has ended and takes no more messages`);
      if (input.mcp) throw new Error(`session ${info.workflowId} is an MCP session: it takes tool calls from its MCP client, not messages`);
    },
    startsAtOnce: () => agent.state === 'waiting' && agent.pendingMessages.length === 0,
    refresh: () => {
      refreshRequested = true;
    },
  });
  // Registered for every session (a handler adds no command); only an MCP session accepts its calls.
  registerMcpToolCalls(agent, orchestrator, () => {
    if (!input.mcp) throw new Error(`session ${info.workflowId} is not an MCP session: its tools are called by its own model`);
    if (ended || cancelReason !== undefined) throw new Error(`session ${info.workflowId} has ended and takes no more tool calls`);
  });
  void orchestrator.probeLoop().catch(() => undefined);

  let outcome: RunOutcome | { status: 'idle'; diagnostic: string };
  try {
    outcome = await loopScope.run(async () => {
      if (input.mcp) return await serveMcp();
      if (!input.carried) {
        // Stored by the first model call (no activity of its own).
        agent.appendBeforeNextTurn([{ role: 'system', content: buildSessionSystemPrompt({ ...input.system, workingDir: input.workingDir, toolsets: input.toolsets, canDelegate: agent.canDelegate }) }]);
        if (input.initialMessage) agent.acceptMessage({ message: input.initialMessage }, true);
      }
      for (;;) {
        idle.arm();
        // Waiting adds no history (decision 0021): the wait also ends when the server suggests continue-as-new.
        // A refresh ends the wait too: a run from before decision 0021 has no other way to continue as new.
        await agent.waitFor(() => agent.pendingMessages.length > 0 || agent.pendingNotices.length > 0 || idle.expired() || (agent.quietWaits && continueAsNewDue()) || refreshDue());
        if (agent.pendingMessages.length === 0 && agent.pendingNotices.length === 0) {
          if (!idle.expired() && ((agent.quietWaits && continueAsNewDue()) || refreshDue())) await continueAsNewWaiting();
          return { status: 'idle' as const, diagnostic: `no message for ${Math.round(idleTimeoutMs / 1000)} s (the session idle timeout)` };
        }
        if (continueAsNewDue()) await continueAsNewWaiting();
        agent.setState('running');
        if (agent.appendNextMessage()) messages += 1;
        const run = await runOnce();
        if (isCapStatus(run.status)) return run;
        agent.touch();
        agent.setState('waiting');
      }
    });
  } catch (error) {
    outcome = outcomeOfError(error, cancelReason, agent.budgetCrossed);
  }

  /** The server suggests continue-as-new and nothing is in flight. */
  function continueAsNewDue(): boolean {
    return workflowInfo().continueAsNewSuggested && agent.idle;
  }

  /** The refresh signal asked this waiting session to move to the current code, and nothing is in flight. */
  function refreshDue(): boolean {
    return refreshRequested && agent.idle;
  }

  /** Continues as new from the waiting state, after every handler finished, with the timers cancelled. */
  async function continueAsNewWaiting(): Promise<never> {
    await condition(allHandlersFinished);
    agent.settleViews();
    orchestrator.settleTimers();
    idle.settle();
    return continueAsNew<typeof sessionWorkflow>({ ...input, carried: agent.snapshot('waiting') });
  }

  /**
   * An MCP session runs no model: its client's tool calls are updates (mcp-tool-calls.ts), and notices wait
   * for the client's next call. It lives until it is idle for its idle timeout, cancelled or over budget,
   * and continues as new from its wait when the server suggests it.
   */
  async function serveMcp(): Promise<{ status: 'idle'; diagnostic: string }> {
    for (;;) {
      idle.arm();
      await agent.waitFor(() => (idle.expired() && agent.idle) || continueAsNewDue());
      if (idle.expired() && agent.idle) {
        return { status: 'idle', diagnostic: `no tool call for ${Math.round(idleTimeoutMs / 1000)} s (the session idle timeout)` };
      }
      await continueAsNewWaiting();
    }
  }

  /** One run for a message or notices; a failure is reported and the session carries on. */
  async function runOnce(): Promise<RunOutcome> {
    let run: RunOutcome;
    try {
      run = await loop.runTurns(input.maxTurnsPerMessage);
    } catch (error) {
      if (isCancellation(error)) throw error;
      run = outcomeOfError(error, undefined);
      await loop.seal('failed');
    }
    // The transcript keeps a preview: a long reply is not read back whole (the subagent workflow's patch).
    const replyText = async () => (agent.lastText?.truncated && patched('long-texts-by-reference') ? (await lastAssistantTextUpTo(agent, resultTextInlineMaxChars)).text : lastAssistantFullText(agent));
    if (run.status === 'completed') {
      agent.remember('assistant', await replyText());
    } else {
      const reply = run.status === 'failed' ? '' : await replyText();
      agent.remember(run.status === 'failed' ? 'event' : 'assistant', `[${run.status}] ${run.diagnostic ?? ''}${reply ? `\n${reply}` : ''}`.trim());
      log.warn('session run did not complete', { status: run.status, diagnostic: run.diagnostic });
    }
    return run;
  }

  return CancellationScope.nonCancellable(async () => {
    ended = true;
    await agent.storePending().catch(() => undefined);
    await loop.seal(outcome.status === 'cancelled' ? 'cancelled' : isCapStatus(outcome.status) ? capNotRunCause(('budget' in outcome ? outcome.budget : undefined) ?? 'tokens') : 'failed').catch(() => undefined);
    agent.setState(outcome.status === 'idle' ? 'completed' : outcome.status);
    agent.flushViews(true);
    await orchestrator.cancelAll(`its session ${info.workflowId} ended (${outcome.status})`);
    orchestrator.settleTimers();
    idle.settle();
    log.info('session ended', { status: outcome.status, turns: agent.turns });
    const status: SessionResult['status'] = outcome.status === 'cancelled' || outcome.status === 'idle' || isCapStatus(outcome.status) ? outcome.status : 'failed';
    return {
      workflowId: info.workflowId,
      status,
      ...(outcome.diagnostic ? { diagnostic: outcome.diagnostic } : {}),
      turns: agent.turns,
      messages,
    };
  });
}

// A session moves up to the current build at its next workflow task (decision 0030).
setWorkflowOptions(sessionDefinitionOptions, sessionWorkflow);

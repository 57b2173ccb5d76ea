import {
  allHandlersFinished,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  patched,
  setWorkflowOptions,
  workflowInfo,
} from '@temporalio/workflow';
import { defaultApprovalTimeoutMs, defaultContinuableIdleTimeoutMs, resultTextInlineMaxChars } from '../contracts/limits/workflow';
import { liveTextShown } from '../contracts/live-text';
import { childProgressSignal, childSettledSignal } from '../contracts/subagent-messages';
import { capNotRunCause } from '../domain/delegation-texts';
import { isCapStatus, type SubagentInput } from '../contracts/subagent';
import type { SubagentResult } from '../contracts/subagent-result';
import { usageView } from '../domain/model-cost';
import { slimChildResult } from '../domain/child-result';
import { buildForkTask, buildSubagentSystemPrompt, withHookContext } from '../domain/subagent-prompt';
import { isLive } from '../domain/task-registry';
import { defaultTaskLimits } from '../domain/task-limits';
import { Agent } from './agent';
import { AgentLoop, type RunOutcome } from './agent-loop';
import { registerAgentHandlers } from './agent-handlers';
import { conversationIdOf, lastAssistantFullText, lastAssistantTextUpTo, lastTextRef } from './conversation';
import { IdleAlarm } from './idle-alarm';
import { ProgressThrottle } from './progress-throttle';
import { RetryChecks } from './retry-checks';
import { TaskOrchestrator } from './task-orchestration';
import { outcomeOfError } from './workflow-outcome';
import { finishWorktree, prepareRun } from './run-preparation';
import { subagentDefinitionOptions } from './versioning-behaviour';

/**
 * A child (one with a parent) returns its result slimmed like its settlement signal, and no longer reads its
 * whole last answer back at its end: its parent and the API read the whole text by reference.
 */
const slimChildResultPatch = 'slim-child-result';

/**
 * A top-level delegation's result carries its last answer whole only up to
 * `resultTextInlineMaxChars`; a longer one goes as a preview and a reference (`outputCut`), which the API
 * reads back: a 3 MiB answer read back whole put the result over Temporal's payload limit, and the
 * workflow's last task failed on every retry (a cancel could not end it either). Asked only for an answer
 * longer than the inline limit (the only one the change concerns), so other runs record no marker. The
 * session workflow asks for the same id where it reads a reply back for its transcript.
 */
const longTextsByReferencePatch = 'long-texts-by-reference';

/**
 * One delegation: the agent loop until a final answer, `max_turns`, the token budget, a cut-off answer,
 * cancellation or a failure. A continuable subagent lives as a series of activations: each one settles
 * (a notice to its parent, whatever its status) and the subagent waits for the next message — or a
 * notice from its own tasks — until it is cancelled, its parent ends, its budget is crossed or it has
 * been idle for its idle timeout. The conversation lives in the conversation store; history holds
 * counters and previews, and the workflow continues as new when the server suggests it.
 */
export async function subagentWorkflow(input: SubagentInput): Promise<SubagentResult> {
  const info = workflowInfo();
  const agent = new Agent({
    kind: 'subagent',
    workflowId: info.workflowId,
    conversationId: conversationIdOf(info),
    ...(input.fork ? { prefix: input.fork } : {}),
    label: input.label,
    route: input.route,
    toolsets: input.toolsets,
    ...(input.toolFilter ? { toolFilter: input.toolFilter } : {}),
    workingDir: input.workingDir,
    depth: input.depth,
    maxDepth: input.maxDepth,
    activity: input.activity,
    tasks: input.tasks ?? defaultTaskLimits,
    ...(input.recipe ? { recipe: input.recipe } : {}),
    ...(input.tenant ? { tenant: input.tenant } : {}),
    ...(input.tokenBudget !== undefined ? { tokenBudget: input.tokenBudget } : {}),
    ...(input.timeBudgetMs !== undefined ? { timeBudgetMs: input.timeBudgetMs } : {}),
    ...(input.costBudgetMicroUsd !== undefined ? { costBudgetMicroUsd: input.costBudgetMicroUsd } : {}),
    ...(input.maxOutputTokens !== undefined ? { maxOutputTokens: input.maxOutputTokens } : {}),
    ...(input.toolPolicy ? { toolPolicy: input.toolPolicy } : {}),
    ...(input.recipeServers ? { recipeServers: input.recipeServers } : {}),
    ...(input.memory ? { memory: input.memory } : {}),
    ...(input.hooks ? { hooks: input.hooks } : {}),
    approvalTimeoutMs: input.approvalTimeoutMs ?? defaultApprovalTimeoutMs,
    approvers: input.approvers ?? 'human',
    now: Date.now(),
  }, input.carried);
  const orchestrator = new TaskOrchestrator(agent);
  const loop = new AgentLoop(agent, orchestrator);
  const retry = input.retry ? new RetryChecks(agent, input.retry) : undefined;
  const continuable = input.continuable === true;
  const idleTimeoutMs = input.idleTimeoutMs ?? defaultContinuableIdleTimeoutMs;
  const idle = new IdleAlarm(() => agent.lastActivityAt, idleTimeoutMs, agent.quietWaits);
  let ended = false;
  let cancelReason: string | undefined;
  /** The refresh signal arrived: continue as new at the next wait (only a waiting run moves; a one-shot run never does). */
  let refreshRequested = false;
  const loopScope = new CancellationScope();
  agent.onBudgetCrossed = () => loopScope.cancel();

  registerAgentHandlers(agent, orchestrator, {
    maxTurns: input.maxTurns,
    cancel: (reason) => {
      cancelReason = reason;
      loopScope.cancel();
    },
    refuseMessage: () => {
      if (!continuable) throw new Error(`${info.workflowId} is not continuable: only subagents delegated with continuable: true take messages`);
      if (ended || cancelReason !== undefined) throw new Error(`${info.workflowId} has ended (${agent.state}) and takes no more messages`);
    },
    startsAtOnce: () => agent.state === 'waiting' && agent.pendingMessages.length === 0,
    refresh: () => {
      refreshRequested = true;
    },
  });

  if (agent.canDelegate) void orchestrator.probeLoop().catch(() => undefined);

  const parent = input.parent ? getExternalWorkflowHandle(input.parent.workflowId) : undefined;
  const taskId = input.parent?.taskId ?? '';
  const throttle = new ProgressThrottle();
  const reportProgress = () => {
    if (!parent) return;
    const peek = agent.peek(input.maxTurns);
    if (!throttle.due(peek)) return;
    void CancellationScope.nonCancellable(() =>
      parent.signal(childProgressSignal, { taskId, peek, totalUsage: agent.totalUsage() }),
    ).catch(() => undefined); // the parent may have ended; progress is best effort
  };
  agent.onChange = reportProgress;
  const reportSettled = async (result: SubagentResult, final: boolean) => {
    if (!parent) return;
    // The parent's copy carries a preview and a reference; the whole text (a structured result's JSON too) stays in the conversation store.
    throttle.reset();
    const slim = slimChildResult(result);
    try {
      await CancellationScope.nonCancellable(() => parent.signal(childSettledSignal, { taskId, result: slim, final, totalUsage: agent.totalUsage() }));
    } catch (error) {
      log.warn('could not notify the parent', { error: String(error) });
    }
  };
  /**
   * The result of a run (or activation). Its text: the preview (`'preview'`, the whole text stays by
   * reference), read back whole (`'whole'`, before the `long-texts-by-reference` patch), or read back only
   * when it is short enough to travel in history (`'upTo'`).
   */
  const resultOf = async (outcome: RunOutcome, read: 'preview' | 'whole' | 'upTo'): Promise<SubagentResult> => {
    const upTo = read === 'upTo' ? await lastAssistantTextUpTo(agent, resultTextInlineMaxChars) : undefined;
    const text = upTo ? upTo.text : read === 'whole' ? await lastAssistantFullText(agent) : agent.lastText?.text ?? '';
    const cut = upTo ? upTo.cut : read === 'preview' && agent.lastText?.truncated === true;
    const completed = outcome.status === 'completed';
    // Cancelled while the model wrote: what it had written is the partial output (no stored message holds it).
    const interrupted = outcome.status === 'cancelled' ? loop.interrupted : undefined;
    const ref = interrupted ? undefined : lastTextRef(agent);
    return {
      workflowId: info.workflowId,
      status: outcome.status,
      output: completed ? text : '',
      partialOutput: completed ? '' : interrupted ? liveTextShown(interrupted) : text,
      ...(ref ? { outputRef: ref } : {}),
      ...(cut && ref ? { outputCut: true } : {}),
      ...(outcome.diagnostic ? { diagnostic: outcome.diagnostic } : {}),
      ...(outcome.budget !== undefined && outcome.status === 'budget' ? { budget: outcome.budget } : {}),
      ...(completed && outcome.structured ? { structured: outcome.structured } : {}),
      ...(outcome.checks ? { checks: outcome.checks } : {}),
      turns: agent.turns,
      toolCalls: agent.toolCalls,
      usage: usageView(agent.usage),
      totalUsage: usageView(agent.totalUsage()),
      durationMs: Date.now() - agent.startedAt,
    };
  };
  /** The server suggests continue-as-new and nothing is in flight. */
  const continueAsNewDue = () => workflowInfo().continueAsNewSuggested && agent.idle;
  /** A waiting continuable was asked to move to the current code (the refresh signal) and nothing is in flight. */
  const refreshDue = () => refreshRequested && agent.idle;
  const continueIfSuggested = async (phase: 'running' | 'waiting', refresh = false) => {
    if (!continueAsNewDue() && !refresh) return;
    await condition(allHandlersFinished);
    agent.settleViews();
    // Nothing to cancel for runs from before decision 0021.
    orchestrator.settleTimers();
    idle.settle();
    // The memo goes on with the run: a continuable's says it moves up to the current build (decision 0030).
    const memo = workflowInfo().memo;
    await makeContinueAsNewFunc<typeof subagentWorkflow>(memo && Object.keys(memo).length > 0 ? { memo } : {})({ ...input, carried: agent.snapshot(phase) });
  };
  /** Tasks this subagent promised a notice for: background (not continuable) tasks still running. */
  const promisedTasks = () => agent.registry.tasks.some((task) => task.mode === 'background' && isLive(task));

  /** What the agent file's SubagentStart hooks added to the context (decision 0032). */
  let startContext: string[] = [];
  /** The system prompt and the task: the start of the conversation (of each attempt of a recipe's retry). */
  const startConversation = (): void => {
    if (input.fork) {
      // A fork continues its parent's conversation (by reference, system prompt included): its own starts with its task.
      const task = buildForkTask({
        task: input.prompt,
        maxTurns: input.maxTurns,
        workingDir: agent.options.workingDir,
        toolsets: input.toolsets,
        canDelegate: agent.canDelegate,
        ...(agent.finalOutput ? { finalOutput: true } : {}),
        ...(agent.worktree ? { worktreeBranch: agent.worktree.branch } : {}),
      });
      agent.remember('user', input.prompt);
      // Stored by the first model call (no activity of its own).
      agent.appendBeforeNextTurn([{ role: 'user', content: task }]);
      return;
    }
    const system = withHookContext(buildSubagentSystemPrompt({
      ...input.system,
      workingDir: agent.options.workingDir,
      maxTurns: input.maxTurns,
      toolsets: input.toolsets,
      canDelegate: agent.canDelegate,
      ...(agent.finalOutput ? { finalOutput: true } : {}),
      ...(agent.worktree ? { worktreeBranch: agent.worktree.branch } : {}),
    }), startContext);
    agent.remember('user', input.prompt);
    // Stored by the first model call (no activity of its own).
    agent.appendBeforeNextTurn([{ role: 'system', content: system }, { role: 'user', content: input.prompt }]);
  };

  /** Turns until the run answers or ends. */
  const turns = async (resume: boolean): Promise<RunOutcome> => {
    const hooks = { onTurn: reportProgress, beforeTurn: () => continueIfSuggested('running') };
    let run = await loop.runTurns(input.maxTurns, { ...hooks, resume });
    // A subagent that answers while its own background tasks run waits for their notices and takes
    // them into account (within its turn limit), instead of cancelling work it said would report back.
    // (A continuable one settles now: the notices wake it for another activation.)
    while (!continuable && run.status === 'completed' && promisedTasks() && agent.turnsThisRun < input.maxTurns) {
      agent.setState('waiting');
      await agent.waitFor(() => agent.pendingNotices.length > 0);
      agent.setState('running');
      run = await loop.runTurns(input.maxTurns, { ...hooks, resume: true });
    }
    return run;
  };

  /** One activation: turns until the run ends; a continuable one turns a failure into its status and carries on. */
  const activate = async (resume: boolean): Promise<RunOutcome> => {
    let run: RunOutcome;
    try {
      run = await turns(resume);
      // A recipe's checks judge the delegated task: the run (or a continuable's first activation).
      if (retry && agent.answers === 0) {
        run = await retry.afterAnswer(run, () => {
          startConversation();
          return turns(false);
        });
      }
    } catch (error) {
      if (!continuable || isCancellation(error)) throw error;
      run = outcomeOfError(error, undefined);
      await loop.seal('failed');
    }
    return run;
  };

  let outcome: RunOutcome;
  try {
    outcome = await loopScope.run(async (): Promise<RunOutcome> => {
      let resume = input.carried?.phase === 'running';
      if (!input.carried) {
        startContext = (await prepareRun(agent, input, input.parent?.taskId ?? info.workflowId)).startContext;
        retry?.show('working');
        startConversation();
      }
      let waiting = input.carried?.phase === 'waiting';
      // A run continued from a wait waits again (decision 0021: it may continue as new while nothing is queued).
      if (waiting && agent.quietWaits) agent.state = 'waiting';
      for (;;) {
        if (!waiting) {
          const run = await activate(resume);
          resume = false;
          if (!continuable || isCapStatus(run.status)) return run;
          const answer = await resultOf(run, 'preview');
          agent.answers += 1;
          agent.remember(run.status === 'failed' ? 'event' : 'assistant', run.status === 'completed' ? answer.output : `[${run.status}] ${run.diagnostic ?? ''}\n${answer.partialOutput}`.trim());
          agent.touch();
          agent.setState('waiting');
          await reportSettled(answer, false);
        }
        waiting = false;
        idle.arm();
        // Waiting adds no history (decision 0021): the wait also ends when the server suggests continue-as-new.
        // A refresh ends the wait too: a run from before decision 0021 has no other way to continue as new.
        await agent.waitFor(() => agent.pendingMessages.length > 0 || agent.pendingNotices.length > 0 || idle.expired() || (agent.quietWaits && continueAsNewDue()) || refreshDue());
        if (agent.pendingMessages.length === 0 && agent.pendingNotices.length === 0) {
          if ((agent.quietWaits || refreshDue()) && !idle.expired()) await continueIfSuggested('waiting', refreshDue());
          return { status: 'completed', diagnostic: `ended after ${Math.round(idleTimeoutMs / 1000)} s without a message (idle timeout)` };
        }
        await continueIfSuggested('waiting');
        agent.setState('running');
        agent.appendNextMessage();
      }
    });
  } catch (error) {
    outcome = outcomeOfError(error, cancelReason, agent.budgetCrossed);
  }

  // The end: runs to completion even when the run was cancelled.
  return CancellationScope.nonCancellable(async () => {
    ended = true;
    await agent.storePending().catch(() => undefined);
    await loop.seal(outcome.status === 'cancelled' ? 'cancelled' : isCapStatus(outcome.status) ? capNotRunCause(outcome.budget ?? 'tokens') : 'failed').catch(() => undefined);
    // A child's result is its parent's copy too (SEMANTICS §4): slim, so the whole text is not read back here.
    const slim = parent !== undefined && patched(slimChildResultPatch);
    const byReference = parent === undefined && agent.lastText?.truncated === true && patched(longTextsByReferencePatch);
    const ran = await resultOf(outcome, slim ? 'preview' : byReference ? 'upTo' : 'whole');
    agent.setState(outcome.status);
    agent.flushViews(true);
    await orchestrator.cancelAll(`its parent ${info.workflowId} ended (${outcome.status})`);
    const worktree = agent.worktree ? await finishWorktree(agent) : undefined;
    const result: SubagentResult = worktree ? { ...ran, worktree } : ran;
    await reportSettled(result, true);
    orchestrator.settleTimers();
    idle.settle();
    log.info('subagent ended', { status: outcome.status, turns: agent.turns, toolCalls: agent.toolCalls });
    return slim ? slimChildResult(result) : result;
  });
}

// Pinned, or moving up for a continuable: decided from the run's memo when it starts (decision 0030).
setWorkflowOptions(subagentDefinitionOptions, subagentWorkflow);

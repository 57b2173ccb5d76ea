import { CancellationScope, getExternalWorkflowHandle, isCancellation, log, makeContinueAsNewFunc, patched, workflowInfo } from '@temporalio/workflow';
import type { CarriedPhase } from '../contracts/agent-state';
import { defaultContinuableIdleTimeoutMs, resultTextInlineMaxChars } from '../contracts/limits/workflow';
import { liveTextShown } from '../contracts/live-text';
import type { SubagentInput } from '../contracts/subagent';
import type { SubagentResult } from '../contracts/subagent-result';
import { childProgressSignal, childSettledSignal } from '../contracts/subagent-messages';
import { slimChildResult } from '../domain/child-result';
import { usageView } from '../domain/model-cost';
import { buildForkTask, buildSubagentSystemPrompt, withHookContext } from '../domain/subagent-prompt';
import { defaultTaskLimits } from '../domain/task-limits';
import { isLive } from '../domain/task-registry';
import type { Agent } from './agent';
import type { RunOutcome } from './agent-loop';
import { sharedAgentOptions } from './agent-options';
import { AgentRun } from './agent-run';
import { conversationIdOf, lastAssistantFullText, lastAssistantTextUpTo, lastTextRef } from './conversation';
import { ProgressThrottle } from './progress-throttle';
import { RetryChecks } from './retry-checks';
import { finishWorktree, prepareRun } from './run-preparation';
import { outcomeOfError } from './workflow-outcome';
import { FailureType } from '../contracts/failures';
import { updateRefusal } from './update-refusal';

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
 * The steps of one subagent run (subagent-workflow.ts tells the story): its set-up, the start of its
 * conversation, its activations, what it reports to its parent, continue-as-new and its end. Lives for
 * one run; what survives the run is the agent's state.
 */
export class SubagentSteps {
  readonly run: AgentRun;
  readonly agent: Agent;
  /** A continuable subagent lives as a series of activations, each settled to its parent. */
  readonly continuable: boolean;
  private readonly retry: RetryChecks | undefined;
  private readonly parent: ReturnType<typeof getExternalWorkflowHandle> | undefined;
  private readonly throttle = new ProgressThrottle();
  /** What the agent file's SubagentStart hooks added to the context (decision 0032). */
  private startContext: string[] = [];

  constructor(private readonly input: SubagentInput) {
    const info = workflowInfo();
    const continuable = input.continuable === true;
    this.continuable = continuable;
    this.run = new AgentRun(subagentOptions(input, info), input.carried, {
      maxTurns: input.maxTurns,
      idleTimeoutMs: input.idleTimeoutMs ?? defaultContinuableIdleTimeoutMs,
      probeChildren: 'if-delegating',
      refuseMessage: (run) => {
        if (!continuable) throw updateRefusal(FailureType.updateNotTaken, `${info.workflowId} is not continuable: only subagents delegated with continuable: true take messages`);
        if (run.closed) throw updateRefusal(FailureType.runEnded, `${info.workflowId} has ended (${run.agent.status}) and takes no more messages`);
      },
    });
    this.agent = this.run.agent;
    this.retry = input.retry ? new RetryChecks(this.agent, input.retry) : undefined;
    this.run.open().watchChildren();
    this.parent = input.parent ? getExternalWorkflowHandle(input.parent.workflowId) : undefined;
    this.agent.listen({ change: () => this.reportProgress() });
  }

  /** The first run's preparation (worktree, output schema, start hooks), then the start of the conversation. */
  async prepare(): Promise<void> {
    const input = this.input;
    this.startContext = (await prepareRun(this.agent, input, input.parent?.taskId ?? this.agent.options.workflowId)).startContext;
    this.retry?.show('working');
    this.startConversation();
  }

  /** One activation: turns until the run ends; a continuable one turns a failure into its status and carries on. */
  async activate(resume: boolean): Promise<RunOutcome> {
    let activation: RunOutcome;
    try {
      activation = await this.turns(resume);
      // A recipe's checks judge the delegated task: the run (or a continuable's first activation).
      if (this.retry && this.agent.state.answers === 0) {
        activation = await this.retry.afterAnswer(activation, () => {
          this.startConversation();
          return this.turns(false);
        });
      }
    } catch (error) {
      if (!this.continuable || isCancellation(error)) throw error;
      activation = outcomeOfError(error, undefined);
      await this.run.loop.seal('failed');
    }
    return activation;
  }

  /** A continuable's activation ended: its answer goes to the transcript and its parent, and it waits. */
  async settleActivation(activation: RunOutcome): Promise<void> {
    const agent = this.agent;
    const answer = await this.resultOf(activation, 'preview');
    agent.countAnswer();
    agent.remember(activation.status === 'failed' ? 'event' : 'assistant', activation.status === 'completed' ? answer.output : `[${activation.status}] ${activation.diagnostic ?? ''}\n${answer.partialOutput}`.trim());
    agent.touch();
    agent.setStatus('waiting');
    await this.reportSettled(answer, false);
  }

  /** Continues as new when the server suggests it (or `refresh` asks) and nothing is in flight. */
  async continueIfSuggested(phase: CarriedPhase, refresh = false): Promise<void> {
    if (!this.run.continueAsNewDue() && !refresh) return;
    await this.run.settleForContinueAsNew();
    // The memo goes on with the run: a continuable's says it moves up to the current build (decision 0030).
    const memo = workflowInfo().memo;
    await makeContinueAsNewFunc<(input: SubagentInput) => Promise<SubagentResult>>(memo && Object.keys(memo).length > 0 ? { memo } : {})({ ...this.input, carried: this.agent.snapshot(phase) });
  }

  /** The end: runs to completion even when the run was cancelled; its descendants are cancelled, its parent told. */
  async end(outcome: RunOutcome): Promise<SubagentResult> {
    const agent = this.agent;
    await this.run.closeConversation(outcome.status, outcome.budget);
    // A child's result is its parent's copy too (SEMANTICS §4): slim, so the whole text is not read back here.
    const slim = this.parent !== undefined && patched(slimChildResultPatch);
    const byReference = this.parent === undefined && agent.state.lastText?.truncated === true && patched(longTextsByReferencePatch);
    const ran = await this.resultOf(outcome, slim ? 'preview' : byReference ? 'upTo' : 'whole');
    agent.setStatus(outcome.status);
    agent.flushViews(true);
    await this.run.orchestrator.cancelAll(`its parent ${agent.options.workflowId} ended (${outcome.status})`);
    const worktree = agent.state.worktree ? await finishWorktree(agent) : undefined;
    const result: SubagentResult = worktree ? { ...ran, worktree } : ran;
    await this.reportSettled(result, true);
    this.run.settleTimers();
    log.info('subagent ended', { status: outcome.status, turns: agent.state.turns, toolCalls: agent.state.toolCalls });
    return slim ? slimChildResult(result) : result;
  }

  /** Turns until the run answers or ends. */
  private async turns(resume: boolean): Promise<RunOutcome> {
    const agent = this.agent;
    const maxTurns = this.input.maxTurns;
    const hooks = { onTurn: () => this.reportProgress(), beforeTurn: () => this.continueIfSuggested('running') };
    let answered = await this.run.loop.runTurns(maxTurns, { ...hooks, resume });
    // A subagent that answers while its own background tasks run waits for their notices and takes
    // them into account (within its turn limit), instead of cancelling work it said would report back.
    // (A continuable one settles now: the notices wake it for another activation.)
    while (!this.continuable && answered.status === 'completed' && this.promisedTasks() && agent.state.runTurns < maxTurns) {
      agent.setStatus('waiting');
      await agent.waitFor(() => agent.state.pendingNotices.length > 0);
      agent.setStatus('running');
      answered = await this.run.loop.runTurns(maxTurns, { ...hooks, resume: true });
    }
    return answered;
  }

  /** Tasks this subagent promised a notice for: background (not continuable) tasks still running. */
  private promisedTasks(): boolean {
    return this.agent.state.tasks.some((task) => task.mode === 'background' && isLive(task));
  }

  /** The system prompt and the task: the start of the conversation (of each attempt of a recipe's retry). */
  private startConversation(): void {
    const { agent, input } = this;
    const shared = {
      maxTurns: input.maxTurns,
      workingDir: agent.options.workingDir,
      toolsets: input.toolsets,
      canDelegate: agent.canDelegate,
      ...(agent.state.finalOutput ? { finalOutput: true } : {}),
      ...(agent.state.worktree ? { worktreeBranch: agent.state.worktree.branch } : {}),
    };
    agent.remember('user', input.prompt);
    // Stored by the first model call (no activity of its own). A fork continues its parent's conversation
    // (by reference, system prompt included): its own starts with its task.
    if (input.fork) agent.appendBeforeNextTurn([{ role: 'user', content: buildForkTask({ task: input.prompt, ...shared }) }]);
    else agent.appendBeforeNextTurn([{ role: 'system', content: withHookContext(buildSubagentSystemPrompt({ ...input.system, ...shared }), this.startContext) }, { role: 'user', content: input.prompt }]);
  }

  /**
   * The result of a run (or activation). Its text: the preview (`'preview'`, the whole text stays by
   * reference), read back whole (`'whole'`, before the `long-texts-by-reference` patch), or read back only
   * when it is short enough to travel in history (`'upTo'`).
   */
  private async resultOf(outcome: RunOutcome, read: 'preview' | 'whole' | 'upTo'): Promise<SubagentResult> {
    const agent = this.agent;
    const upTo = read === 'upTo' ? await lastAssistantTextUpTo(agent, resultTextInlineMaxChars) : undefined;
    const text = upTo ? upTo.text : read === 'whole' ? await lastAssistantFullText(agent) : agent.state.lastText?.text ?? '';
    const cut = upTo ? upTo.cut : read === 'preview' && agent.state.lastText?.truncated === true;
    const completed = outcome.status === 'completed';
    // Cancelled while the model wrote: what it had written is the partial output (no stored message holds it).
    const interrupted = outcome.status === 'cancelled' ? this.run.loop.interrupted : undefined;
    const ref = interrupted ? undefined : lastTextRef(agent);
    return {
      workflowId: agent.options.workflowId,
      status: outcome.status,
      output: completed ? text : '',
      partialOutput: completed ? '' : interrupted ? liveTextShown(interrupted) : text,
      ...(ref ? { outputRef: ref } : {}),
      ...(cut && ref ? { outputCut: true } : {}),
      ...(outcome.diagnostic ? { diagnostic: outcome.diagnostic } : {}),
      ...(outcome.budget !== undefined && outcome.status === 'budget' ? { budget: outcome.budget } : {}),
      ...(completed && outcome.structured ? { structured: outcome.structured } : {}),
      ...(outcome.checks ? { checks: outcome.checks } : {}),
      turns: agent.state.turns,
      toolCalls: agent.state.toolCalls,
      usage: usageView(agent.state.usage),
      totalUsage: usageView(agent.totalUsage()),
      durationMs: Date.now() - agent.state.startedAt,
    };
  }

  /** A progress report to the parent, throttled (best effort: the parent may have ended). */
  private reportProgress(): void {
    if (!this.parent) return;
    const parent = this.parent;
    const peek = this.agent.peek(this.input.maxTurns);
    if (!this.throttle.due(peek)) return;
    void CancellationScope.nonCancellable(() =>
      parent.signal(childProgressSignal, { taskId: this.input.parent?.taskId ?? '', peek, totalUsage: this.agent.totalUsage() }),
    ).catch(() => undefined);
  }

  /** A settlement to the parent: its copy carries a preview and a reference (the whole text stays in the conversation store). */
  private async reportSettled(result: SubagentResult, final: boolean): Promise<void> {
    if (!this.parent) return;
    const parent = this.parent;
    this.throttle.reset();
    const slim = slimChildResult(result);
    try {
      await CancellationScope.nonCancellable(() => parent.signal(childSettledSignal, { taskId: this.input.parent?.taskId ?? '', result: slim, final, totalUsage: this.agent.totalUsage() }));
    } catch (error) {
      log.warn('could not notify the parent', { error: String(error) });
    }
  }
}

/** The subagent's agent options, from its input. */
function subagentOptions(input: SubagentInput, info: ReturnType<typeof workflowInfo>) {
  return {
    kind: 'subagent' as const,
    ...sharedAgentOptions(input, { workflowId: info.workflowId, conversationId: conversationIdOf(info), now: Date.now() }),
    ...(input.fork ? { prefix: input.fork } : {}),
    ...(input.toolFilter ? { toolFilter: input.toolFilter } : {}),
    depth: input.depth,
    tasks: input.tasks ?? defaultTaskLimits,
    ...(input.toolPolicy ? { toolPolicy: input.toolPolicy } : {}),
    ...(input.recipeServers ? { recipeServers: input.recipeServers } : {}),
    ...(input.memory ? { memory: input.memory } : {}),
    ...(input.hooks ? { hooks: input.hooks } : {}),
  };
}

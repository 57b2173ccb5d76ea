import {
  CancellationScope,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  patched,
  startChild,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { PlanDelegationOutput, ToolCallRef } from '../contracts/activities';
import type { JsonObject } from '../contracts/json';
import { cancelSettleWaitMs, defaultMaxContinuables, workflowTaskTimeoutMs } from '../contracts/limits/workflow';
import { zeroUsage, type TokenUsage } from '../contracts/model';
import { searchAttributes } from '../contracts/search-attributes';
import { versioningMemo } from '../contracts/versioning';
import { cancelSignal, type ChildProgressInput, type ChildSettledInput } from '../contracts/subagent-messages';
import type { SubagentResult } from '../contracts/subagent-result';
import type { TaskRecord } from '../contracts/carried-agent-state';
import {
  formatApprovalNotice,
  formatForegroundResult,
  formatSettlementNotice,
  formatTaskResultBlock,
  forcedBackgroundReason,
} from '../domain/delegation-texts';
import { OrchestrationTool } from '../domain/orchestration-tools';
import { usageView } from '../domain/model-cost';
import { preview } from '../domain/subagent-prompt';
import {
  admissionError,
  findTask,
  isLive,
  isStaleProgress,
  markRead,
  markStarted,
  moveToBackground,
  recordProgress,
  recordSettlement,
  recordUsage,
  reserveCaps,
  usageOfView,
} from '../domain/task-registry';
import { fitChildCaps, heldRefusal } from '../domain/child-budgets';
import type { Agent } from './agent';
import type { OrchestrationTools, ToolOutcome } from './agent-loop';
import { ChildProbe } from './child-probe';
import { EndingGuard, endingRefusal } from './ending-guard';
import { loadTask } from './task-load';
import { runWorkflowTask } from './workflow-run-task';
import { isWorkflowRunResult, runResultAsTaskResult } from '../domain/workflow-run-task';
import type { WorkflowRunResult } from '../contracts/workflow-run';
import { approve, listModels, sendMessage, type CallPosition } from './child-messages';
import { planChild } from './child-planning';
import { errorText, toolError, toolText } from './tool-outcomes';

/**
 * Patch id of children's ids without `/` (`<parent>~task-<n>`, workflow-ids.ts): Temporal's HTTP API can
 * address them. A history without the marker started its children as `<parent>/task-<n>` and replays so.
 */
const childIdsPatch = 'child-ids-without-slash';

export type { CallPosition } from './child-messages';

/**
 * The orchestration tools of a delegating agent and the tracking of its children (SEMANTICS §2, §5):
 * `delegate` starts a child workflow, `load` lists, waits for, peeks at or cancels a task,
 * `send_message` and `approve` deliver to a child by update (so delivery is confirmed), and settlement
 * reaches the parent by the child's signal, by watching a child started in this run, or by checking
 * children started before a continue-as-new while they run a turn ({@link ChildProbe}, decision 0021). Every step that can fail becomes a tool error for the
 * calling model; nothing here throws out of the workflow.
 */
export class TaskOrchestrator implements OrchestrationTools {
  /** Tasks whose child workflow this run watches (its result settles the record even if a signal is lost). */
  private readonly watched = new Set<string>();
  /** Finds children this run does not watch that ended without a word. */
  private readonly probe: ChildProbe;
  /** Whether this workflow has begun to end (no task starts then). */
  private readonly ending = new EndingGuard();

  constructor(private readonly agent: Agent) {
    this.probe = new ChildProbe(agent, (taskId) => this.watched.has(taskId), (probed, child) => {
      const record = findTask(agent.state, probed.taskId);
      if (!record) return;
      const result = child.result ?? this.endedWithoutResult(record, child.temporalStatus, child.diagnostic ?? `the child workflow closed as ${child.temporalStatus}`);
      this.settle(record.taskId, result, true, this.finalUsage(record, child.result));
    });
  }

  /** Runs one orchestration tool call. */
  async run(call: ToolCallRef, position: CallPosition): Promise<ToolOutcome> {
    const args: JsonObject = call.arguments ?? {};
    switch (call.name) {
      case OrchestrationTool.delegate:
        return this.delegate(args, position);
      case OrchestrationTool.runWorkflow:
        return runWorkflowTask(this.agent, { watch: (taskId, handle) => this.watch(taskId, handle), refusesStart: () => this.ending.refusesStart() }, args);
      case OrchestrationTool.load:
        return loadTask(this.agent, this, args);
      case OrchestrationTool.sendMessage: {
        const outcome = await sendMessage(this.agent, args, position);
        // A waiting child is not checked while nothing happens; one that cannot take a message is checked now.
        if (outcome.isError && this.agent.quietWaits) await this.checkUnreached(args.task_id);
        return outcome;
      }
      case OrchestrationTool.approve:
        return approve(this.agent, args, position);
      case OrchestrationTool.listSubagentModels:
        return listModels(this.agent, args);
      default:
        return toolError(`Unknown tool "${call.name}".`);
    }
  }

  // ---- delegate ------------------------------------------------------------------------------------

  /** `delegate`: validate, plan (activity), start a child workflow; wait for it unless it runs in the background. */
  private async delegate(args: JsonObject, position: CallPosition): Promise<ToolOutcome> {
    const agent = this.agent;
    // Full validation (zod, strict) happens in the planning activity; here only what decides the bookkeeping.
    const instructions = typeof args.instructions === 'string' && args.instructions.length > 0 ? args.instructions : undefined;
    const source = typeof args.source === 'string' && args.source.length > 0 ? args.source : undefined;
    const continuable = args.continuable === true;
    if (!instructions && !source) return toolError('delegate was not started: give `instructions`, a `source`, or both.');
    if (args.parameters !== undefined && !source) return toolError('delegate was not started: `parameters` are only valid together with `source`.');
    if (!agent.canDelegate) {
      return toolError(`delegate was not started: this agent is at depth ${agent.options.depth} and the depth limit is ${agent.options.maxDepth}, so it may not delegate.`);
    }
    const mode: TaskRecord['mode'] = continuable ? 'continuable' : args.async === true ? 'background' : 'foreground';
    // The slot is taken before the first await, so parallel delegate calls in one turn are counted exactly.
    const refused = admissionError(agent.state, mode, agent.options.tasks, defaultMaxContinuables);
    if (refused) return toolError(`delegate was not started: ${refused}`);
    const description = typeof args.description === 'string' && args.description.length > 0 ? args.description : preview(instructions ?? source ?? 'task', 80);
    // What the running children hold of this workflow's caps is not there to give (budgets add up).
    const held = agent.spendAddsUp ? heldRefusal(agent.remainingCaps(), agent.state.tasks) : undefined;
    if (held) return toolError(`delegate was not started: ${held}`);
    // A child's id changed from `<parent>/task-<n>` to `<parent>~task-<n>` (workflow-ids.ts): its start command with it.
    const legacyId = !patched(childIdsPatch);
    const record = agent.addTask({ parentWorkflowId: agent.options.workflowId, mode, description, legacyId });
    const taskId = record.taskId;
    agent.updateViews();

    return agent.busy(async () => {
      let plan: PlanDelegationOutput;
      try {
        plan = await planChild(agent, record, args, position);
      } catch (error) {
        agent.removeTask(record.taskId);
        return toolError(`delegate was not started: planning failed: ${errorText(error)}`);
      }
      if (!plan.ok) {
        agent.removeTask(record.taskId);
        return toolError(`delegate was not started: ${plan.message}`);
      }
      if (this.ending.refusesStart()) {
        agent.removeTask(record.taskId);
        return toolError(endingRefusal('delegate'));
      }
      const forced = plan.forceBackground === true && findTask(agent.state, taskId)?.mode === 'foreground';
      if (forced) {
        // The agent file says `background: true`: the task runs in the background whatever the call asked.
        // Its slot is checked and taken with no await in between, so parallel calls are still counted exactly.
        const full = admissionError(agent.state, 'background', agent.options.tasks, defaultMaxContinuables);
        if (full) {
          agent.removeTask(record.taskId);
          return toolError(`delegate was not started: ${forcedBackgroundReason(plan.source?.name)}, and ${full}`);
        }
        agent.updateTask(taskId, moveToBackground);
        agent.updateViews();
      }
      if (agent.spendAddsUp) {
        // Siblings may have started while this one was planned: its caps are fitted to what is left now
        // and reserved before the next await, so parallel delegate calls never share out more than there is.
        const fitted = fitChildCaps(plan.input, agent.remainingCaps(), agent.state.tasks, plan.firstPrompt);
        if (!fitted.ok) {
          agent.removeTask(record.taskId);
          return toolError(`delegate was not started: ${fitted.message}`);
        }
        const { tokenBudget: _tokens, timeBudgetMs: _time, costBudgetMicroUsd: _cost, ...uncapped } = plan.input;
        plan = { ...plan, input: { ...uncapped, ...fitted.caps } };
        const reserved = fitted.reserved;
        if (reserved) agent.updateTask(taskId, (task) => reserveCaps(task, reserved));
      }
      const handle = await this.start(record, plan);
      if (typeof handle === 'string') {
        agent.removeTask(record.taskId);
        return toolError(`delegate was not started: ${handle}`);
      }
      // Planning gives a child `approvers: human` of its own only for `permissionMode: auto` (tools/permission-mode.ts).
      const byPersonOnly = plan.input.approvers === 'human' && agent.options.approvers === 'human-or-parent';
      const started = agent.updateTask(taskId, (task) => markStarted(task, byPersonOnly)) ?? record;
      this.watch(taskId, handle);
      const warnings = plan.warnings.length > 0 ? `\nNote: ${plan.warnings.join('\nNote: ')}` : '';
      if (started.mode !== 'foreground') {
        return toolText(
          `Started ${taskId} in the background${started.mode === 'continuable' ? ' (continuable: send_message keeps talking to it)' : ''}` +
            `${forced ? `: ${forcedBackgroundReason(plan.source?.name)}, so this call does not wait for it` : ''}. ` +
            `You will get a notice when it ${started.mode === 'continuable' ? 'answers' : 'ends'}; load with source "${taskId}" waits for it, peek: true shows progress, cancel: true stops it.${warnings}`,
        );
      }
      const result = await this.settledResult(taskId);
      if (!result) return toolError('The subagent left no result.');
      agent.updateTask(taskId, (task) => markRead(task, Date.now()));
      const formatted = formatForegroundResult(result, taskId);
      return { parts: warnings ? [...formatted.parts, warnings] : formatted.parts, isError: formatted.isError };
    });
  }

  /** Starts the child workflow; returns why when Temporal refuses (e.g. the id is still taken). */
  private async start(record: TaskRecord, plan: Extract<PlanDelegationOutput, { ok: true }>): Promise<ChildWorkflowHandle<(input: unknown) => Promise<SubagentResult>> | string> {
    const options = this.agent.options;
    const input = plan.input;
    try {
      return await CancellationScope.nonCancellable(() =>
        startChild('subagentWorkflow', {
          workflowId: record.workflowId,
          args: [input],
          // Background children outlive the parent's continue-as-new; cancellation is explicit (cancelAll).
          parentClosePolicy: ParentClosePolicy.ABANDON,
          // Like a top-level start: a task lost with its worker goes elsewhere after this (decision 0012).
          workflowTaskTimeout: workflowTaskTimeoutMs,
          staticSummary: record.description,
          // A continuable moves up to the current build with its parent; a one-shot child stays pinned (decision 0030).
          ...(input.continuable === true ? { memo: versioningMemo(input) } : {}),
          staticDetails: [
            `source: ${plan.source ? `${plan.source.kind} ${plan.source.name} @ ${plan.source.version}` : 'ad hoc'}`,
            `model: ${input.route.provider}/${input.route.model}${input.route.reasoningEffort ? ` (reasoning effort ${input.route.reasoningEffort})` : ''}`,
            ...(input.fork ? [`fork of: ${options.workflowId} (its first ${input.fork.length} messages)`] : []),
            `max turns: ${input.maxTurns}`,
            `parent: ${options.workflowId}`,
          ].join('\n'),
          typedSearchAttributes: [
            { key: searchAttributes.kind, value: 'subagent' },
            { key: searchAttributes.source, value: plan.source?.name ?? 'ad-hoc' },
            { key: searchAttributes.parent, value: options.workflowId },
            { key: searchAttributes.status, value: 'running' },
            { key: searchAttributes.model, value: `${input.route.provider}/${input.route.model}` },
            { key: searchAttributes.turns, value: 0 },
            ...(options.tenant ? [{ key: searchAttributes.tenant, value: options.tenant }] : []),
          ],
        }),
      );
    } catch (error) {
      return `Temporal did not start ${record.workflowId}: ${errorText(error)}`;
    }
  }

  // ---- settlement ----------------------------------------------------------------------------------
  /**
   * Waits until task `taskId` has ended with a result (or its record is gone) and returns that result. The
   * record is read afresh at each check: the registry's functions replace a record, never change it.
   */
  private async settledResult(taskId: string, timeoutMs?: number): Promise<SubagentResult | undefined> {
    let result: SubagentResult | undefined;
    const ended = () => {
      const task = findTask(this.agent.state, taskId);
      if (task && !isLive(task)) result = task.result;
      return !task || result !== undefined;
    };
    await this.agent.waitFor(ended, timeoutMs);
    return result;
  }

  /** Follows a child started in this run: its end settles the record even if its signal is lost (a run's, only so). */
  private watch(taskId: string, handle: { result(): Promise<SubagentResult | WorkflowRunResult> }): void {
    this.watched.add(taskId);
    void CancellationScope.nonCancellable(async () => {
      try {
        const ended = await handle.result();
        const record = findTask(this.agent.state, taskId);
        if (!record) return;
        const result = isWorkflowRunResult(ended) ? runResultAsTaskResult(record.workflowId, ended, Date.now() - record.startedAt) : ended;
        this.settle(taskId, result, true, this.finalUsage(record, result));
      } catch (error) {
        const record = findTask(this.agent.state, taskId);
        if (record) this.settle(taskId, this.endedWithoutResult(record, 'FAILED', `the child workflow ended without a result: ${errorText(error)}`), true, record.totalUsage);
      }
    }).catch(() => undefined);
  }

  /**
   * A child's total when its end is learnt from its result (its settlement signal was lost): the result's
   * own total, not the last progress figure, which is throttled and may be behind.
   */
  private finalUsage(record: TaskRecord, result: SubagentResult | undefined): TokenUsage {
    return this.agent.spendAddsUp && result?.totalUsage ? usageOfView(result.totalUsage) : record.totalUsage;
  }

  /** A result for a child that ended without reporting one (terminated, timed out, failed). */
  private endedWithoutResult(record: TaskRecord, temporalStatus: string, diagnostic: string): SubagentResult {
    const cancelled = temporalStatus === 'CANCELED' || temporalStatus === 'CANCELLED';
    return {
      workflowId: record.workflowId,
      status: cancelled ? 'cancelled' : 'failed',
      output: '',
      partialOutput: record.peek?.lastAssistantText ?? '',
      diagnostic,
      turns: record.peek?.turns ?? 0,
      toolCalls: record.peek?.toolCalls ?? 0,
      usage: usageView(record.peek?.usage ?? zeroUsage),
      totalUsage: usageView(record.totalUsage),
      durationMs: Date.now() - record.startedAt,
    };
  }

  /** Records a settlement and queues the notice for the model (background and continuable tasks). */
  private settle(taskId: string, result: SubagentResult, final: boolean, totalUsage: TokenUsage): void {
    const record = this.agent.updateTask(taskId, (task) => recordSettlement(task, result, final, totalUsage, Date.now()));
    if (!record) return;
    if (record.mode !== 'foreground') {
      const notice = formatSettlementNotice(record.taskId, result, final);
      this.agent.addNotice({ text: notice.text, taskId: record.taskId, ...(notice.outputRef ? { outputRef: notice.outputRef } : {}), ...(notice.after !== undefined ? { after: notice.after } : {}) });
      this.agent.remember('notice', notice.text);
    }
    this.agent.updateViews();
    this.checkBudget();
  }

  /** Handles a child's progress signal. */
  onChildProgress(input: ChildProgressInput): void {
    const agent = this.agent;
    const record = agent.updateTask(input.taskId, (task) => (agent.quietWaits && isStaleProgress(task, input.peek) ? recordUsage(task, input.totalUsage) : recordProgress(task, input.peek, input.totalUsage)));
    if (!record) return;
    this.probe.heard(record.taskId);
    // A child's call waiting for an approval becomes one notice, where this workflow's model may decide it.
    if (agent.options.approvers === 'human-or-parent' && record.approvalsByPersonOnly !== true) {
      for (const pending of input.peek.pendingApprovals ?? []) {
        if (!agent.announceApproval(pending.id)) continue;
        const notice = formatApprovalNotice(record.taskId, pending);
        agent.addNotice({ text: notice });
        agent.remember('notice', notice);
      }
    }
    this.checkBudget();
  }

  /** Handles a child's settlement signal. */
  onChildSettled(input: ChildSettledInput): void {
    const record = findTask(this.agent.state, input.taskId);
    if (!record) return;
    this.probe.heard(record.taskId);
    this.settle(record.taskId, input.result, input.final, input.totalUsage);
  }

  private checkBudget(): void {
    if (this.agent.checkBudget()) this.agent.budgetWasCrossed();
  }

  /** Runs the check on children this run does not watch, for the life of the run (see {@link ChildProbe}). */
  probeLoop(): Promise<void> {
    return this.probe.loop();
  }

  /** Before the run completes or continues as new: stops the check on children and cancels its timer. */
  settleTimers(): void {
    this.probe.settle();
  }

  /** A child this run does not watch, that the model just could not reach, is checked now (decision 0021). */
  private async checkUnreached(taskId: unknown): Promise<void> {
    const task = typeof taskId === 'string' ? findTask(this.agent.state, taskId) : undefined;
    if (task && isLive(task) && !this.watched.has(task.taskId)) await this.probe.probe([task]);
  }

  /** Cancels a task and everything under it, and returns what it had produced. */
  async cancelTask(task: Readonly<TaskRecord>, reason = 'cancelled by the delegating agent'): Promise<ToolOutcome> {
    if (!isLive(task)) {
      const block = task.result ? formatTaskResultBlock(task.taskId, task.result) : [];
      return { parts: [`Task ${task.taskId} had already ended (${task.state}).\n`, ...block], isError: false };
    }
    try {
      await CancellationScope.nonCancellable(() => getExternalWorkflowHandle(task.workflowId).signal(cancelSignal, { reason }));
    } catch {
      // Its workflow has closed already: its settlement is on the way (signal, watch or probe).
      if (!this.watched.has(task.taskId)) await this.probe.probe();
    }
    const result = await this.settledResult(task.taskId, cancelSettleWaitMs);
    if (!result) return toolText(`Asked ${task.taskId} to cancel; it has not confirmed yet.`);
    this.agent.updateTask(task.taskId, (record) => markRead(record, Date.now()));
    return { parts: formatTaskResultBlock(task.taskId, result), isError: false };
  }

  /**
   * Cancels every live task (this workflow is ending or was cancelled); with `handlers` (a session, whose
   * MCP tool calls run in update handlers) also those the handlers still running start meanwhile
   * (ending-guard.ts). Never throws.
   */
  async cancelAll(reason: string, handlers = false): Promise<void> {
    this.ending.begin();
    const cancelled = new Set<string>();
    const cancel = async (task: TaskRecord) => {
      try {
        await getExternalWorkflowHandle(task.workflowId).signal(cancelSignal, { reason });
        cancelled.add(task.taskId);
      } catch {
        // It ended in the meantime, or has not started yet (a handler's start under way): waitForHandlers.
      }
    };
    await Promise.all(this.agent.state.tasks.filter((task) => isLive(task)).map(cancel));
    if (handlers) await this.ending.waitForHandlers(() => this.agent.state.tasks, cancelled, cancel);
  }
}

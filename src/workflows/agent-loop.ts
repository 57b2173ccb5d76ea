import { ActivityFailure, ApplicationFailure, CancelledFailure, patched } from '@temporalio/workflow';
import type { FinalOutputVerdict, ModelTurnOutput, TextPart, ToolCallRef } from '../contracts/activities';
import { FailureType } from '../contracts/failures';
import type { JsonObject } from '../contracts/json';
import { maxInvalidFinalOutputs } from '../contracts/limits/sources';
import { inlineTextLimit } from '../contracts/limits/workflow';
import { asLiveText, type LiveText } from '../contracts/live-text';
import type { CheckSummary } from '../contracts/subagent-result';
import type { BudgetCap, EndStatus } from '../contracts/subagent';
import { toolActivityTimeoutMs } from '../domain/activity-time-limits';
import { capNotRunCause, formatDenial, notRunReason, truncationDiagnostic, type NotRunCause } from '../domain/delegation-texts';
import { didNotCallFinalOutput, finalOutputReminder, finalOutputToolName, structuredText, tooManyInvalidFinalOutputs } from '../domain/final-output';
import { noticeParts } from '../domain/notice-parts';
import { isOrchestrationTool } from '../domain/orchestration-tools';
import { preview, turnBudgetNote } from '../domain/subagent-prompt';
import type { Agent } from './agent';
import { runOrchestrationTool, runStopHooks } from './loop-hooks';
import { markNoticesRead } from './notices-read';

/** How one run of model turns ended. */
export interface RunOutcome {
  status: EndStatus;
  diagnostic?: string;
  /** With status `budget`: which cap. */
  budget?: BudgetCap;
  /** The accepted `final_output` arguments of a structured-output run that completed. */
  structured?: JsonObject;
  /** What the recipe's checks came to (goose `retry`). */
  checks?: CheckSummary;
}

import type { OrchestrationTools, ToolOutcome } from './tool-outcome';
export type { OrchestrationTools, ToolOutcome } from './tool-outcome';

/** Hooks of {@link AgentLoop.runTurns}. */
export interface RunHooks {
  /** Called as each model call starts (progress reporting; the subagent throttles what it sends). */
  onTurn?: () => void;
  /** Called before each model call; may continue-as-new (it then never returns). */
  beforeTurn?: () => Promise<void>;
  /** Continue the run counted in `state.runTurns` (after continue-as-new) instead of starting a new one. */
  resume?: boolean;
}

/** Tool calls of one assistant message whose results are not stored yet. */
interface OpenCalls {
  assistantSeq: number;
  firstResultSeq: number;
  pending: number[];
}

/**
 * The agent loop (SEMANTICS §2, §5): model call → the tool calls it asked for, in parallel → next model
 * call, until a final answer, the turn limit, the token budget, a cut-off answer, cancellation or a
 * failure. Whatever ends a run, the conversation stays valid for every provider: each tool call gets
 * exactly one stored result, "not run: <why>" for calls that were not run ({@link seal}).
 */
export class AgentLoop {
  private open: OpenCalls | undefined;
  /**
   * What the model had written when its call was cancelled mid-answer (the activity sends it with the
   * cancellation): the partial output of a run cancelled while the model wrote. Cleared by each model call.
   */
  interrupted: LiveText | undefined;

  constructor(
    private readonly agent: Agent,
    private readonly orchestration: OrchestrationTools,
  ) {}

  /** Runs model turns until the run ends; throws on cancellation and on activity failures (the caller classifies them). */
  async runTurns(limit: number, hooks: RunHooks = {}): Promise<RunOutcome> {
    const agent = this.agent;
    // Each run (an activation, an attempt) counts its own turns and delivers its own final_output, with its own reminder and invalid calls.
    agent.startTurns(limit, hooks.resume === true);
    for (;;) {
      await hooks.beforeTurn?.();
      const crossed = agent.checkBudget();
      if (crossed) return { status: crossed.status, budget: crossed.cap, diagnostic: crossed.diagnostic };
      agent.pruneTasks();
      this.flushNotices();
      const turn = agent.beginTurn();
      // A progress report as the model call starts (a subagent throttles them; the settlement signal carries the end).
      hooks.onTurn?.();
      const answer = await this.modelCall(turn, limit);
      const assistantSeq = agent.recordAnswer(answer);
      agent.updateViews();

      const calls = answer.toolCalls;
      if (answer.finishReason === 'length') {
        // Cut because a cap ran out while it was written (the time budget's deadline): the run ends with that cap.
        const capped = agent.checkBudget();
        if (capped) {
          await this.sealNow(assistantSeq, calls, capNotRunCause(capped.cap));
          return { status: capped.status, budget: capped.cap, diagnostic: capped.diagnostic };
        }
        await this.sealNow(assistantSeq, calls, 'cut-off');
        return { status: 'truncated', diagnostic: truncationDiagnostic(answer.maxOutputTokens, answer.answerCap) };
      }
      const over = agent.checkBudget();
      if (over) {
        await this.sealNow(assistantSeq, calls, capNotRunCause(over.cap));
        return { status: over.status, budget: over.cap, diagnostic: over.diagnostic };
      }
      const finalOutput = agent.state.finalOutput;
      if (calls.length === 0) {
        // An agent file's Stop hooks (decision 0032) run at the subagent's stop: they may send a subagent that
        // could go on back to work; on its last turn, or where a structured-output run ends, only noted.
        const canGoOn = !finalOutput && turn < limit;
        const ends = !finalOutput || finalOutput.reminded || turn >= limit;
        if (agent.options.hooks?.stop && (canGoOn ? patched('agent-file-hooks') : ends && patched('agent-file-hooks') && patched('stop-hook-every-stop'))) {
          if (await runStopHooks(this.agent, assistantSeq, answer.text, canGoOn ? undefined : turn >= limit ? 'last-turn' : 'structured')) continue;
        }
        if (!finalOutput) return { status: 'completed' };
        // A structured-output run finishes only through final_output: a plain answer gets one reminder.
        if (finalOutput.reminded || turn >= limit) return { status: 'failed', diagnostic: didNotCallFinalOutput(finalOutput.reminded) };
        agent.remindFinalOutput();
        await agent.append([{ role: 'user', content: finalOutputReminder }], 'store final_output reminder');
        continue;
      }
      const delivers = (call: ToolCallRef) => finalOutput !== undefined && call.name === finalOutputToolName;
      if (turn >= limit) {
        if (!calls.some(delivers)) {
          await this.sealNow(assistantSeq, calls, 'turn-limit');
          return { status: 'max_turns', diagnostic: `reached its turn limit (${limit} turns) before giving a final answer` };
        }
        // On its last turn a structured-output run may still deliver: its final_output calls run, the others do not.
        const verdicts = await this.runToolCalls(calls, assistantSeq, delivers);
        await this.seal('turn-limit');
        const ended = await this.settleFinalOutput(verdicts);
        return ended ?? { status: 'max_turns', diagnostic: `reached its turn limit (${limit} turns) without an accepted final_output call` };
      }
      const ended = await this.settleFinalOutput(await this.runToolCalls(calls, assistantSeq));
      if (ended) return ended;
      agent.touch();
    }
  }

  /**
   * After a turn's tool calls: an accepted final_output call ends the run `completed`, with its JSON stored
   * as the run's last assistant message (so the result's text and reference work as for any answer); too
   * many rejected calls end it `failed`. Undefined: the run goes on.
   */
  private async settleFinalOutput(verdicts: (FinalOutputVerdict | undefined)[]): Promise<RunOutcome | undefined> {
    const agent = this.agent;
    if (!agent.state.finalOutput) return undefined;
    const accepted = verdicts.find((verdict): verdict is Extract<FinalOutputVerdict, { valid: true }> => verdict?.valid === true);
    if (accepted) {
      const text = structuredText(accepted.value);
      const seq = agent.state.length;
      await agent.append([{ role: 'assistant', content: text }], 'store final output');
      const truncated = text.length > inlineTextLimit;
      agent.recordLastText(seq, truncated ? preview(text, inlineTextLimit) : text, truncated);
      if (agent.options.hooks?.stop && patched('agent-file-hooks') && patched('stop-hook-every-stop')) await runStopHooks(this.agent, seq, text, 'structured');
      return { status: 'completed', structured: accepted.value };
    }
    const rejected = verdicts.filter((verdict): verdict is Extract<FinalOutputVerdict, { valid: false }> => verdict?.valid === false);
    const last = rejected[rejected.length - 1];
    if (!last) return undefined;
    agent.rejectFinalOutputs(rejected.length, last.errors);
    const invalidCalls = agent.state.finalOutput?.invalidCalls ?? 0;
    if (invalidCalls < maxInvalidFinalOutputs) return undefined;
    return { status: 'failed', diagnostic: tooManyInvalidFinalOutputs(invalidCalls, last.errors) };
  }

  /**
   * Stores "not run: <why>" for every tool call whose result is not stored yet (a run that was cancelled
   * or failed while tools ran). Call it where the run ended, outside the cancelled scope.
   */
  async seal(cause: NotRunCause): Promise<void> {
    const open = this.open;
    this.open = undefined;
    if (!open || open.pending.length === 0) return;
    await this.agent.activities.store.sealToolCalls.executeWithOptions({ summary: `store ${open.pending.length} not-run result(s)` }, [{
      conversationId: this.agent.conversationId,
      assistantSeq: open.assistantSeq,
      firstResultSeq: open.firstResultSeq,
      callIndexes: open.pending,
      reason: notRunReason(cause),
    }]);
  }

  /** Puts the notices that arrived into the conversation (one user message) and marks their results read. */
  flushNotices(): void {
    const agent = this.agent;
    if (agent.state.pendingNotices.length === 0) return;
    const notices = agent.takeNotices();
    const parts: TextPart[] = [];
    notices.forEach((notice, index) => {
      if (index > 0) parts.push('\n\n');
      parts.push(...noticeParts(notice));
    });
    agent.appendBeforeNextTurn([{ role: 'user', parts }]);
    markNoticesRead(agent, notices);
  }

  /** Stores "not run" results for all calls of an answer that will not be run. */
  private async sealNow(assistantSeq: number, calls: ToolCallRef[], cause: NotRunCause): Promise<void> {
    if (calls.length === 0) return;
    const agent = this.agent;
    this.open = { assistantSeq, firstResultSeq: agent.state.length, pending: calls.map((_, index) => index) };
    agent.recordAppended(calls.length);
    await this.seal(cause);
  }

  /**
   * One model call, keeping the prompt inside the model's context window: the activity checks the
   * estimate first and asks for a compaction when it is over the threshold; a provider's own
   * context-overflow error leads to one (more aggressive) compaction and one retry, then the failure.
   */
  private async modelCall(turn: number, limit: number): Promise<ModelTurnOutput> {
    const agent = this.agent;
    const options = agent.options;
    let checkContext = true;
    let overflowRetried = false;
    const note = turnBudgetNote(turn, limit, agent.state.finalOutput !== undefined);
    // A time budget (its own or what its parent has left) also cuts an answer that is still being written when it ends.
    const timeLeftMs = agent.remainingCaps().timeMs;
    const deadlineAt = timeLeftMs !== undefined ? Date.now() + timeLeftMs : undefined;
    this.interrupted = undefined;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        const output = await agent.busy(() => agent.activities.model.modelTurn.executeWithOptions({ summary: `model ${agent.modelName} · turn ${agent.state.turns}` }, [{
          workflowId: options.workflowId,
          ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
          conversationId: agent.conversationId,
          length: agent.state.length,
          route: agent.route,
          toolsets: options.toolsets,
          ...(options.toolFilter ? { toolFilter: options.toolFilter } : {}),
          turn,
          maxTurns: limit,
          totalTurn: agent.state.turns,
          ...(note ? { note } : {}),
          ...(options.maxOutputTokens !== undefined ? { maxOutputTokens: options.maxOutputTokens } : {}),
          ...(deadlineAt !== undefined ? { deadlineAt } : {}),
          ...(agent.state.pending ? { pending: agent.state.pending } : {}),
          ...(agent.state.context ? { window: agent.state.context } : {}),
          ...(options.prefix ? { prefix: options.prefix } : {}),
          checkContext,
          ...(agent.canDelegate ? { orchestrationTools: orchestrationToolsFor(options.approvers, options.depth) } : {}),
          ...(options.toolPolicy ? { toolPolicy: options.toolPolicy } : {}),
          ...(options.recipeServers ? { recipeServers: options.recipeServers, workingDir: options.workingDir } : {}),
          ...(options.memory ? { memory: options.memory } : {}),
          ...(agent.state.finalOutput ? { finalOutput: { schemaKey: agent.state.finalOutput.schemaKey } } : {}),
        }]));
        // The call stored the pending messages before anything else.
        agent.recordPendingStored();
        if (!output.needsCompaction) return output;
        const { thresholdTokens, toolTokens } = output.needsCompaction;
        await this.compact(false, toolTokens !== undefined ? { thresholdTokens, toolTokens } : undefined);
        // Whatever the compaction achieved, the next attempt goes to the model; only the provider can say it is too long.
        checkContext = false;
      } catch (error) {
        this.interrupted = writtenBeforeCancel(error);
        if (!isContextOverflow(error) || overflowRetried) throw error;
        overflowRetried = true;
        checkContext = false;
        if (!(await this.compact(true))) throw error;
      }
    }
    throw ApplicationFailure.create({ type: FailureType.modelContextOverflow, message: 'the conversation does not fit the context window even after compaction', nonRetryable: true });
  }

  /** Summarises older turns; returns false when there was nothing left to summarise. */
  private async compact(aggressive: boolean, budget?: { thresholdTokens: number; toolTokens: number }): Promise<boolean> {
    const agent = this.agent;
    await agent.storePending();
    const output = await agent.busy(() => agent.activities.compaction.compactConversation.executeWithOptions({ summary: `compact context${aggressive ? ' (after overflow)' : ''}` }, [{
      workflowId: agent.options.workflowId,
      ...(agent.options.tenant !== undefined ? { tenant: agent.options.tenant } : {}),
      conversationId: agent.conversationId,
      length: agent.state.length,
      route: agent.route,
      ...(agent.state.context ? { window: agent.state.context } : {}),
      ...(agent.options.prefix ? { prefix: agent.options.prefix } : {}),
      ...(aggressive ? { aggressive: true } : {}),
      ...(budget ? { budget } : {}),
    }]));
    agent.recordCompaction(output.usage, output.compacted ? output.window : undefined);
    if (!output.compacted) {
      agent.remember('event', `[compaction] not possible: ${output.reason}`);
      return false;
    }
    agent.remember('event', `[compaction ${output.window.compactions}] ${output.summarisedMessages} older messages summarised; prompt estimate ${output.tokensBefore} → ${output.tokensAfter} tokens`);
    agent.updateViews();
    return true;
  }

  /**
   * Runs the tool calls of one answer in parallel (all, or those `runs` picks; the others stay open for
   * {@link seal}); their results are stored in call order. Returns the final_output verdicts by call index.
   */
  private async runToolCalls(calls: ToolCallRef[], assistantSeq: number, runs: (call: ToolCallRef) => boolean = () => true): Promise<(FinalOutputVerdict | undefined)[]> {
    const agent = this.agent;
    const firstResultSeq = agent.state.length;
    agent.recordToolCalls(calls);
    const open: OpenCalls = { assistantSeq, firstResultSeq, pending: calls.map((_, index) => index) };
    this.open = open;
    const done = (index: number) => {
      open.pending = open.pending.filter((pending) => pending !== index);
    };
    const verdicts: (FinalOutputVerdict | undefined)[] = calls.map(() => undefined);
    await agent.busy(() => Promise.all(calls.map(async (call, index) => {
      if (!runs(call)) return;
      const resultSeq = firstResultSeq + index;
      // Approval ids count messages across a recipe's retry attempts, so no two calls of one workflow share one.
      const approval = call.needsApproval ? await agent.approvals.await(call, agent.state.attempt.messageBase + assistantSeq, index) : undefined;
      if (call.denied !== undefined || (approval?.decision === 'deny' && isOrchestrationTool(call.name))) {
        const text = call.denied ?? formatDenial(call.name, approval ?? { decision: 'deny', by: 'policy' });
        await this.storeResult(resultSeq, call, { parts: [text], isError: true });
        done(index);
        return;
      }
      if (isOrchestrationTool(call.name) && agent.canDelegate) {
        const outcome = await runOrchestrationTool(agent, this.orchestration, call, assistantSeq, index);
        await this.storeResult(resultSeq, call, outcome);
        done(index);
        return;
      }
      const delivers = agent.state.finalOutput !== undefined && call.name === finalOutputToolName;
      const hooks = agent.options.hooks && (agent.options.hooks.preToolUse || agent.options.hooks.postToolUse) ? agent.options.hooks : undefined;
      // A hook is a process with a time limit of its own: a call with hooks is a regular activity, never a local one.
      const tools = call.local && !hooks ? agent.activities.localTools : agent.activities.tools;
      const summary = `tool ${call.name}${approval ? ` (${approval.decision === 'approve' ? 'approved' : 'denied'})` : ''}`;
      // A local activity keeps its own limit; a regular one outlasts the tool's own limit (run_command's
      // timeout_ms) and its hooks, so a slow call is not retried and run again.
      const limit = tools === agent.activities.tools ? toolActivityTimeoutMs(agent.options.activity.toolCallTimeoutMs, call, hooks) : undefined;
      const ran = await tools.runTool.executeWithOptions({ summary, ...(limit !== undefined && limit !== agent.options.activity.toolCallTimeoutMs ? { startToCloseTimeout: limit } : {}) }, [{
        workflowId: agent.options.workflowId,
        conversationId: agent.conversationId,
        assistantSeq,
        callIndex: index,
        resultSeq,
        workingDir: agent.options.workingDir,
        toolsets: agent.options.toolsets,
        ...(agent.options.toolFilter ? { toolFilter: agent.options.toolFilter } : {}),
        ...(agent.options.toolPolicy ? { toolPolicy: agent.options.toolPolicy } : {}),
        ...(agent.options.recipeServers ? { recipeServers: agent.options.recipeServers } : {}),
        ...(agent.options.memory ? { memory: agent.options.memory } : {}),
        ...(approval ? { approval } : {}),
        ...(delivers && agent.state.finalOutput ? { finalOutput: { schemaKey: agent.state.finalOutput.schemaKey } } : {}),
        ...(hooks ? { hooks } : {}),
      }]);
      verdicts[index] = ran.finalOutput;
      done(index);
    })));
    if (this.open === open && open.pending.length === 0) this.open = undefined;
    return verdicts;
  }

  private async storeResult(resultSeq: number, call: ToolCallRef, outcome: ToolOutcome): Promise<void> {
    await this.agent.activities.store.appendMessages.executeWithOptions({ summary: `store ${call.name} result` }, [{
      conversationId: this.agent.conversationId,
      startSeq: resultSeq,
      messages: [{ role: 'tool', toolCallId: call.id, toolName: call.name, parts: outcome.parts, ...(outcome.isError ? { isError: true } : {}) }],
    }]);
  }
}

/**
 * The orchestration tools a delegating agent is offered; `run_workflow` only at depth 0 (a run's agents are
 * delegations one level down), `approve` only where its model may decide approvals.
 */
function orchestrationToolsFor(approvers: string, depth: number): string[] {
  const tools = ['load', 'delegate', ...(depth === 0 ? ['run_workflow'] : []), 'send_message', 'list_subagent_models'];
  return approvers === 'human-or-parent' ? [...tools, 'approve'] : tools;
}

/** Whether a model call failed because the prompt was longer than the model's context window. */
function isContextOverflow(error: unknown): boolean {
  return error instanceof ActivityFailure && error.cause instanceof ApplicationFailure && error.cause.type === FailureType.modelContextOverflow;
}

/** The text a cancelled model call had written, when it sent one with its cancellation. */
function writtenBeforeCancel(error: unknown): LiveText | undefined {
  const cancelled = error instanceof ActivityFailure ? error.cause : error;
  return cancelled instanceof CancelledFailure ? asLiveText(cancelled.details[0]) : undefined;
}

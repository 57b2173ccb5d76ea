import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { defaultApprovalTimeoutMs, maxMessageLength } from '../contracts/limits';
import {
  approvalSignal,
  approvalUpdate,
  cancelSignal,
  childProgressSignal,
  childSettledSignal,
  messageSignal,
  peekQuery,
  sendMessageUpdate,
  transcriptQuery,
  type SubagentInput,
  type SubagentResult,
} from '../contracts/subagent';
import { defaultTaskLimits } from '../domain/task-limits';
import { buildSubagentSystemPrompt } from '../domain/subagent-prompt';
import { AgentCore, type RunOutcome } from './agent-core';
import { outcomeOfError } from './workflow-outcome';

/**
 * One delegation: the agent loop (model call → tool calls in parallel → next model call) until a final
 * answer, `max_turns`, the token budget, cancellation or a failure. A continuable subagent then waits for
 * the next message instead of ending. The conversation lives in the conversation store; this workflow's
 * history holds counters and previews only, and it continues as new when the server suggests it.
 */
export async function subagentWorkflow(input: SubagentInput): Promise<SubagentResult> {
  const info = workflowInfo();
  const core = new AgentCore({
    kind: 'subagent',
    workflowId: info.workflowId,
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
    ...(input.toolPolicy ? { toolPolicy: input.toolPolicy } : {}),
    ...(input.recipeServers ? { recipeServers: input.recipeServers } : {}),
    approvalTimeoutMs: input.approvalTimeoutMs ?? defaultApprovalTimeoutMs,
    now: Date.now(),
  }, input.carried);
  let ended = false;
  let cancelReason: string | undefined;
  const loopScope = new CancellationScope();

  setHandler(peekQuery, () => ({ ...core.peek(input.label), maxTurns: input.maxTurns }));
  setHandler(transcriptQuery, () => ({ state: core.state, entries: core.transcript, queuedMessages: core.pendingMessages.length }));
  setHandler(cancelSignal, ({ reason }) => {
    cancelReason = reason ?? 'cancelled by request';
    loopScope.cancel();
  });
  const accept = (message: string) => {
    core.pendingMessages.push(message);
    return { accepted: true as const, queuedTurns: core.state === 'waiting' ? 0 : core.pendingMessages.length };
  };
  setHandler(sendMessageUpdate, ({ message }) => accept(message), {
    validator: ({ message }) => {
      if (!input.continuable) throw new Error(`${info.workflowId} is not continuable: only subagents delegated with continuable: true take messages`);
      if (ended || cancelReason !== undefined) throw new Error(`${info.workflowId} has ended (${core.state}) and takes no more messages`);
      if (typeof message !== 'string' || message.trim().length === 0) throw new Error('message must be a non-empty string');
      if (message.length > maxMessageLength) throw new Error(`message is ${message.length} characters; the limit is ${maxMessageLength}`);
    },
  });
  setHandler(messageSignal, ({ message }) => {
    if (input.continuable && !ended && typeof message === 'string' && message.length > 0) accept(message);
  });
  setHandler(childProgressSignal, (progress) => core.onChildProgress(progress));
  setHandler(approvalUpdate, (decision) => core.decideApproval(decision), { validator: (decision) => core.validateApproval(decision) });
  setHandler(approvalSignal, (decision) => {
    // From the parent's model: ignored when the approval is no longer pending (a person decided first).
    try {
      core.validateApproval(decision);
      core.decideApproval(decision);
    } catch {
      // nothing pending under that id
    }
  });
  setHandler(childSettledSignal, (settled) => core.onChildSettled(settled));

  const parent = input.parent ? getExternalWorkflowHandle(input.parent.workflowId) : undefined;
  const reportProgress = () => {
    if (!parent || !input.parent) return;
    const taskId = input.parent.taskId;
    void CancellationScope.nonCancellable(() =>
      parent.signal(childProgressSignal, { taskId, peek: { ...core.peek(input.label), maxTurns: input.maxTurns }, totalUsage: core.totalUsage() }),
    ).catch(() => undefined); // the parent may have ended; progress is best effort
  };
  core.onChange = reportProgress;
  const reportSettled = async (result: SubagentResult, final: boolean) => {
    if (!parent || !input.parent) return;
    try {
      await CancellationScope.nonCancellable(() => parent.signal(childSettledSignal, { taskId: input.parent?.taskId ?? '', result, final, totalUsage: core.totalUsage() }));
    } catch (error) {
      log.warn('could not notify the parent', { error: String(error) });
    }
  };
  /**
   * The result of a run. The full text of a long answer is read back from the conversation store only
   * when someone needs it (the workflow result, or a parent's notice); otherwise the inline preview is
   * enough, which keeps a long-lived subagent's history per turn small.
   */
  const resultOf = async (outcome: RunOutcome, fullText = true): Promise<SubagentResult> => {
    const text = fullText ? await CancellationScope.nonCancellable(() => core.lastAssistantFullText()) : core.lastText?.text ?? '';
    const completed = outcome.status === 'completed';
    return {
      workflowId: info.workflowId,
      status: outcome.status,
      output: completed ? text : '',
      partialOutput: completed ? '' : text,
      ...(outcome.diagnostic ? { diagnostic: outcome.diagnostic } : {}),
      turns: core.turns,
      toolCalls: core.toolCalls,
      usage: core.usage,
      durationMs: Date.now() - core.startedAt,
    };
  };
  const continueIfSuggested = async (phase: 'running' | 'waiting') => {
    if (!workflowInfo().continueAsNewSuggested || !core.idle) return;
    await condition(allHandlersFinished);
    await continueAsNew<typeof subagentWorkflow>({ ...input, carried: core.snapshot(phase) });
  };

  let outcome: RunOutcome;
  let result: SubagentResult | undefined;
  try {
    outcome = await loopScope.run(async (): Promise<RunOutcome> => {
      let resume = input.carried?.phase === 'running';
      if (!input.carried) {
        const system = buildSubagentSystemPrompt({
          ...input.system,
          workingDir: input.workingDir,
          maxTurns: input.maxTurns,
          toolsets: input.toolsets,
          canDelegate: core.canDelegate,
        });
        core.remember('user', input.prompt);
        await core.append([{ role: 'system', content: system }, { role: 'user', content: input.prompt }]);
      }
      const waiting = input.carried?.phase === 'waiting';
      for (let first = true; ; first = false) {
        if (!(first && waiting)) {
          const run = await core.runTurns(input.maxTurns, { onTurn: reportProgress, beforeTurn: () => continueIfSuggested('running'), resume });
          resume = false;
          if (!input.continuable || run.status === 'failed' || run.status === 'budget') return run;
          const answer = await resultOf(run, parent !== undefined);
          core.answers += 1;
          core.remember('assistant', answer.output || answer.partialOutput);
          core.setState('waiting');
          await reportSettled(answer, false);
        }
        const hasMessage = () => core.pendingMessages.length > 0;
        const gotMessage = input.idleTimeoutMs === undefined ? (await condition(hasMessage), true) : await condition(hasMessage, input.idleTimeoutMs);
        if (!gotMessage) return { status: 'completed', diagnostic: `ended after ${Math.round((input.idleTimeoutMs ?? 0) / 1000)} s without a message (idle timeout)` };
        await continueIfSuggested('waiting');
        const message = core.pendingMessages.shift() ?? '';
        core.setState('running');
        core.remember('user', message);
        await core.append([{ role: 'user', content: message }]);
      }
    });
  } catch (error) {
    outcome = outcomeOfError(error, cancelReason);
  }

  // The end: runs to completion even when the run was cancelled.
  return CancellationScope.nonCancellable(async () => {
    ended = true;
    result = await resultOf(outcome);
    core.setState(outcome.status);
    await core.cancelAllTasks(`its parent ${info.workflowId} ended (${outcome.status})`);
    await reportSettled(result, true);
    log.info('subagent ended', { status: outcome.status, turns: core.turns, toolCalls: core.toolCalls });
    return result;
  });
}

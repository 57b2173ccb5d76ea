import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { defaultApprovalTimeoutMs, maxMessageLength } from '../contracts/limits';
import type { SessionInput, SessionResult } from '../contracts/session';
import {
  approvalSignal,
  approvalUpdate,
  cancelSignal,
  childProgressSignal,
  childSettledSignal,
  peekQuery,
  sendMessageUpdate,
  transcriptQuery,
} from '../contracts/subagent';
import { buildSessionSystemPrompt } from '../domain/session-prompt';
import { AgentCore, type RunOutcome } from './agent-core';
import { outcomeOfError } from './workflow-outcome';

/**
 * A parent session: a conversation whose model can `load` and `delegate`. Each user message (update)
 * runs model turns until the model answers; background tasks' settlement notices wake an idle session
 * for one turn. The session lives until cancelled; cancelling it cancels all its descendants.
 */
export async function sessionWorkflow(input: SessionInput): Promise<SessionResult> {
  const info = workflowInfo();
  const core = new AgentCore({
    kind: 'session',
    workflowId: info.workflowId,
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
    approvalTimeoutMs: input.approvalTimeoutMs ?? defaultApprovalTimeoutMs,
    now: Date.now(),
  }, input.carried);
  let cancelReason: string | undefined;
  let ended = false;
  const loopScope = new CancellationScope();
  if (!input.carried) core.state = 'waiting';

  setHandler(peekQuery, () => ({ ...core.peek(input.label), maxTurns: input.maxTurnsPerMessage }));
  setHandler(transcriptQuery, () => ({ state: core.state, entries: core.transcript, queuedMessages: core.pendingMessages.length }));
  setHandler(cancelSignal, ({ reason }) => {
    cancelReason = reason ?? 'cancelled by request';
    loopScope.cancel();
  });
  setHandler(sendMessageUpdate, ({ message }) => {
    core.pendingMessages.push(message);
    return { accepted: true as const, queuedTurns: core.pendingMessages.length };
  }, {
    validator: ({ message }) => {
      if (ended || cancelReason !== undefined) throw new Error(`session ${info.workflowId} has ended and takes no more messages`);
      if (typeof message !== 'string' || message.trim().length === 0) throw new Error('message must be a non-empty string');
      if (message.length > maxMessageLength) throw new Error(`message is ${message.length} characters; the limit is ${maxMessageLength}`);
    },
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

  let messages = 0;
  let outcome: RunOutcome;
  try {
    outcome = await loopScope.run(async (): Promise<RunOutcome> => {
      if (!input.carried) {
        await core.append([{ role: 'system', content: buildSessionSystemPrompt({ ...input.system, workingDir: input.workingDir, toolsets: input.toolsets, canDelegate: core.canDelegate }) }]);
        if (input.initialMessage) core.pendingMessages.push(input.initialMessage);
      }
      for (;;) {
        await condition(() => core.pendingMessages.length > 0 || core.pendingNotices.length > 0);
        if (workflowInfo().continueAsNewSuggested && core.idle) {
          await condition(allHandlersFinished);
          await continueAsNew<typeof sessionWorkflow>({ ...input, carried: core.snapshot('waiting') });
        }
        core.setState('running');
        const message = core.pendingMessages.shift();
        if (message !== undefined) {
          messages += 1;
          core.remember('user', message);
          await core.append([{ role: 'user', content: message }]);
        }
        const run = await core.runTurns(input.maxTurnsPerMessage);
        const reply = await core.lastAssistantFullText();
        if (run.status === 'completed') core.remember('assistant', reply);
        else core.remember('assistant', `[${run.status}] ${run.diagnostic ?? ''}\n${reply}`.trim());
        if (run.status === 'budget') return run;
        core.setState('waiting');
      }
    });
  } catch (error) {
    outcome = outcomeOfError(error, cancelReason);
  }

  return CancellationScope.nonCancellable(async () => {
    ended = true;
    core.setState(outcome.status);
    await core.cancelAllTasks(`its session ${info.workflowId} ended (${outcome.status})`);
    log.info('session ended', { status: outcome.status, turns: core.turns });
    return {
      workflowId: info.workflowId,
      status: outcome.status === 'cancelled' ? 'cancelled' : 'failed',
      ...(outcome.diagnostic ? { diagnostic: outcome.diagnostic } : {}),
      turns: core.turns,
      messages,
    };
  });
}

import { CancellationScope, continueAsNew, isCancellation, log, patched, setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { defaultSessionIdleTimeoutMs, resultTextInlineMaxChars } from '../contracts/limits/workflow';
import type { SessionInput, SessionResult } from '../contracts/session';
import { isCapStatus } from '../contracts/subagent';
import { buildSessionSystemPrompt } from '../domain/session-prompt';
import type { Agent } from './agent';
import type { RunOutcome } from './agent-loop';
import { sharedAgentOptions } from './agent-options';
import { AgentRun } from './agent-run';
import { conversationIdOf, lastAssistantFullText, lastAssistantTextUpTo } from './conversation';
import { registerMcpToolCalls } from './mcp-tool-calls';
import { sessionDefinitionOptions } from './versioning-behaviour';
import { outcomeOfError } from './workflow-outcome';
import { FailureType } from '../contracts/failures';
import { updateRefusal } from './update-refusal';

/** How a session ends when no message came within its idle timeout. */
type IdleEnd = { status: 'idle'; diagnostic: string };

/**
 * A parent session: a conversation whose model can `load` and `delegate`. Each user message (update)
 * runs model turns until the model answers; background tasks' notices wake an idle session for one run.
 * A failed run is reported in the reply and the transcript, and the session waits for the next message
 * with its tasks still running. It ends only when cancelled, when idle longer than its idle timeout, or
 * when its token budget is crossed; then it cancels all its descendants.
 */
export async function sessionWorkflow(input: SessionInput): Promise<SessionResult> {
  const run = startSessionRun(input);
  const agent = run.agent;
  let messages = 0;
  let outcome: RunOutcome | IdleEnd;
  try {
    outcome = await run.scope.run(async () => {
      if (input.mcp) return await serveMcp(run, input);
      if (!input.carried) startConversation(agent, input);
      for (;;) {
        run.idle.arm();
        // Waiting adds no history (decision 0021): the wait also ends when the server suggests continue-as-new.
        // A refresh ends the wait too: a run from before decision 0021 has no other way to continue as new.
        await agent.waitFor(() => run.hasWork() || run.idle.expired() || (agent.quietWaits && run.continueAsNewDue()) || run.refreshDue());
        if (!run.hasWork()) {
          if (!run.idle.expired() && ((agent.quietWaits && run.continueAsNewDue()) || run.refreshDue())) await continueAsNewWaiting(run, input);
          return { status: 'idle' as const, diagnostic: `no message for ${run.idleSeconds} s (the session idle timeout)` };
        }
        if (run.continueAsNewDue()) await continueAsNewWaiting(run, input);
        agent.setStatus('running');
        if (agent.appendNextMessage()) messages += 1;
        const answered = await runOnce(run, input);
        if (isCapStatus(answered.status)) return answered;
        agent.touch();
        agent.setStatus('waiting');
      }
    });
  } catch (error) {
    outcome = outcomeOfError(error, run.cancelReason, agent.budgetCrossed);
  }
  return CancellationScope.nonCancellable(() => endSession(run, outcome, messages));
}

/** The session's run: its agent (from the input and what was carried), its handlers, the probe of its children. */
function startSessionRun(input: SessionInput): AgentRun {
  const info = workflowInfo();
  const run = new AgentRun(
    { kind: 'session', ...sharedAgentOptions(input, { workflowId: info.workflowId, conversationId: conversationIdOf(info), now: Date.now() }), depth: 0, tasks: input.tasks },
    input.carried,
    {
      maxTurns: input.maxTurnsPerMessage,
      idleTimeoutMs: input.idleTimeoutMs ?? defaultSessionIdleTimeoutMs,
      probeChildren: 'always',
      // A run continued from a wait waits again (decision 0021: it may continue as new while nothing is queued).
      startsWaiting: (agent) => !input.carried || (agent.quietWaits && input.carried.phase === 'waiting'),
      refuseMessage: (current) => {
        if (current.closed) throw updateRefusal(FailureType.runEnded, `session ${info.workflowId} has ended and takes no more messages`);
        if (input.mcp) throw updateRefusal(FailureType.updateNotTaken, `session ${info.workflowId} is an MCP session: it takes tool calls from its MCP client, not messages`);
      },
    },
  ).open();
  // Registered for every session (a handler adds no command); only an MCP session accepts its calls.
  registerMcpToolCalls(run.agent, run.orchestrator, () => {
    if (!input.mcp) throw updateRefusal(FailureType.updateNotTaken, `session ${info.workflowId} is not an MCP session: its tools are called by its own model`);
    if (run.closed) throw updateRefusal(FailureType.runEnded, `session ${info.workflowId} has ended and takes no more tool calls`);
  });
  run.watchChildren();
  return run;
}

/** The system prompt (and the first message): stored by the first model call, no activity of its own. */
function startConversation(agent: Agent, input: SessionInput): void {
  agent.appendBeforeNextTurn([{ role: 'system', content: buildSessionSystemPrompt({ ...input.system, workingDir: input.workingDir, toolsets: input.toolsets, canDelegate: agent.canDelegate }) }]);
  if (input.initialMessage) agent.acceptMessage({ message: input.initialMessage }, true);
}

/** Continues as new from the waiting state, after every handler finished, with the timers cancelled. */
async function continueAsNewWaiting(run: AgentRun, input: SessionInput): Promise<never> {
  await run.settleForContinueAsNew();
  return continueAsNew<typeof sessionWorkflow>({ ...input, carried: run.agent.snapshot('waiting') });
}

/**
 * An MCP session runs no model: its client's tool calls are updates (mcp-tool-calls.ts), and notices wait
 * for the client's next call. It lives until it is idle for its idle timeout, cancelled or over budget,
 * and continues as new from its wait when the server suggests it.
 */
async function serveMcp(run: AgentRun, input: SessionInput): Promise<IdleEnd> {
  const agent = run.agent;
  for (;;) {
    run.idle.arm();
    await agent.waitFor(() => (run.idle.expired() && agent.idle) || run.continueAsNewDue());
    if (run.idle.expired() && agent.idle) return { status: 'idle', diagnostic: `no tool call for ${run.idleSeconds} s (the session idle timeout)` };
    await continueAsNewWaiting(run, input);
  }
}

/** One run for a message or notices; a failure is reported and the session carries on. */
async function runOnce(run: AgentRun, input: SessionInput): Promise<RunOutcome> {
  const agent = run.agent;
  let answered: RunOutcome;
  try {
    answered = await run.loop.runTurns(input.maxTurnsPerMessage);
  } catch (error) {
    if (isCancellation(error)) throw error;
    answered = outcomeOfError(error, undefined);
    await run.loop.seal('failed');
  }
  // The transcript keeps a preview: a long reply is not read back whole (the subagent workflow's patch).
  const replyText = async () => (agent.state.lastText?.truncated && patched('long-texts-by-reference') ? (await lastAssistantTextUpTo(agent, resultTextInlineMaxChars)).text : lastAssistantFullText(agent));
  if (answered.status === 'completed') {
    agent.remember('assistant', await replyText());
  } else {
    const reply = answered.status === 'failed' ? '' : await replyText();
    agent.remember(answered.status === 'failed' ? 'event' : 'assistant', `[${answered.status}] ${answered.diagnostic ?? ''}${reply ? `\n${reply}` : ''}`.trim());
    log.warn('session run did not complete', { status: answered.status, diagnostic: answered.diagnostic });
  }
  return answered;
}

/** The end: runs to completion even when the session was cancelled; its descendants are cancelled. */
async function endSession(run: AgentRun, outcome: RunOutcome | IdleEnd, messages: number): Promise<SessionResult> {
  const agent = run.agent;
  const workflowId = agent.options.workflowId;
  await run.closeConversation(outcome.status, 'budget' in outcome ? outcome.budget : undefined);
  agent.setStatus(outcome.status === 'idle' ? 'completed' : outcome.status);
  agent.flushViews(true);
  await run.orchestrator.cancelAll(`its session ${workflowId} ended (${outcome.status})`, true);
  run.settleTimers();
  log.info('session ended', { status: outcome.status, turns: agent.state.turns });
  const status: SessionResult['status'] = outcome.status === 'cancelled' || outcome.status === 'idle' || isCapStatus(outcome.status) ? outcome.status : 'failed';
  return { workflowId, status, ...(outcome.diagnostic ? { diagnostic: outcome.diagnostic } : {}), turns: agent.state.turns, messages };
}

// A session moves up to the current build at its next workflow task (decision 0030).
setWorkflowOptions(sessionDefinitionOptions, sessionWorkflow);

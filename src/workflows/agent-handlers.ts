import { proxySinks, setHandler } from '@temporalio/workflow';
import type { InFlightSinks } from '../contracts/in-flight-sinks';
import {
  approvalUpdate,
  cancelSignal,
  childProgressSignal,
  childSettledSignal,
  peekQuery,
  refreshSignal,
  sendMessageUpdate,
  transcriptQuery,
  type SendMessageInput,
} from '../contracts/subagent-messages';
import type { Agent } from './agent';
import type { TaskOrchestrator } from './task-orchestration';

/** What differs between the session and the subagent workflow in how they take messages and cancels. */
export interface AgentHandlerHooks {
  /** The turn limit peek shows (per delegation run, or per session message). */
  maxTurns: number;
  /** Stops the workflow's run (the cancel signal). */
  cancel(reason: string): void;
  /** Throws with the reason when this workflow takes no messages now (not continuable, ended). */
  refuseMessage(input: SendMessageInput): void;
  /** Whether an accepted message starts a turn at once (the workflow waits for one). */
  startsAtOnce(): boolean;
  /** Asks the run to continue as new at its next safe point (the refresh signal). */
  refresh(): void;
}

const { inFlightCalls } = proxySinks<InFlightSinks>();

/**
 * Registers the message handlers both agent workflows share: peek and transcript queries, the cancel
 * signal, the sendMessage and approval updates, the child → parent progress and settlement signals, and
 * the refresh signal.
 */
export function registerAgentHandlers(agent: Agent, orchestrator: TaskOrchestrator, hooks: AgentHandlerHooks): void {
  setHandler(peekQuery, () => agent.peek(hooks.maxTurns));
  setHandler(transcriptQuery, () => ({ state: agent.status, entries: [...agent.state.transcript], queuedMessages: agent.state.pendingMessages.length }));
  setHandler(cancelSignal, (input) => {
    const reason = input?.reason ?? 'cancelled by request';
    hooks.cancel(reason);
    // The worker running this task aborts the run's model and tool calls running on it now, instead of at
    // their next heartbeat (a sink: no history, not called on replay; decision 0022).
    inFlightCalls.abortRun(reason);
  });
  setHandler(sendMessageUpdate, (input) => agent.acceptMessage(input, hooks.startsAtOnce()), {
    validator: (input) => {
      hooks.refuseMessage(input);
      agent.validateMessage(input);
    },
  });
  setHandler(approvalUpdate, (decision) => agent.approvals.decide(decision), { validator: (decision) => agent.approvals.validate(decision) });
  setHandler(childProgressSignal, (progress) => orchestrator.onChildProgress(progress));
  setHandler(childSettledSignal, (settled) => orchestrator.onChildSettled(settled));
  setHandler(refreshSignal, () => hooks.refresh());
}

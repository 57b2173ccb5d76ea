import { allHandlersFinished, CancellationScope, condition, workflowInfo } from '@temporalio/workflow';
import type { CarriedAgentInput } from '../contracts/agent-state';
import { isCapStatus, type BudgetCap, type SubagentState } from '../contracts/subagent';
import { capNotRunCause } from '../domain/delegation-texts';
import { Agent } from './agent';
import { AgentLoop } from './agent-loop';
import { registerAgentHandlers } from './agent-handlers';
import type { AgentOptions } from './agent-options';
import { IdleAlarm } from './idle-alarm';
import { TaskOrchestrator } from './task-orchestration';

/** What differs between the session and the subagent in how one of their runs starts. */
export interface AgentRunSettings {
  /** The turn limit peek shows (per delegation run, or per session message). */
  maxTurns: number;
  /** How long the agent may wait for a message before it ends. */
  idleTimeoutMs: number;
  /** Throws with the reason when this workflow takes no messages now (besides having ended or been cancelled). */
  refuseMessage(run: AgentRun): void;
  /** Watch the children for a lost settlement: always (a session), or only where the agent may delegate. */
  probeChildren: 'always' | 'if-delegating';
  /** Whether the agent starts as waiting (a run that begins with a wait; no views are marked). */
  startsWaiting?: (agent: Agent) => boolean;
}

/**
 * One run of a session or subagent workflow (from its start or a continue-as-new to its end or the next
 * continue-as-new): the agent, built from the input and the carried state, and everything that lives for
 * this run only — the loop, the task orchestrator with its probe, the idle alarm, the scope that a cancel
 * or a crossed cap cancels, and what the handlers asked (cancel, refresh). Nothing of it is carried: the
 * next run builds its own from the agent's state (decision 0040).
 */
export class AgentRun {
  readonly agent: Agent;
  readonly orchestrator: TaskOrchestrator;
  readonly loop: AgentLoop;
  readonly idle: IdleAlarm;
  /** The scope of the agent's work: cancelled by the cancel signal or a cap crossed outside a turn. */
  readonly scope: CancellationScope;
  #cancelReason: string | undefined;
  #refreshRequested = false;
  #ended = false;

  constructor(options: AgentOptions, carried: CarriedAgentInput | undefined, private readonly settings: AgentRunSettings) {
    this.agent = new Agent(options, carried);
    this.orchestrator = new TaskOrchestrator(this.agent);
    this.loop = new AgentLoop(this.agent, this.orchestrator);
    this.idle = new IdleAlarm(() => this.agent.state.lastActivityAt, settings.idleTimeoutMs, this.agent.quietWaits);
    this.scope = new CancellationScope();
  }

  /** Why the run was cancelled (the cancel signal), if it was. */
  get cancelReason(): string | undefined {
    return this.#cancelReason;
  }

  /** The run has ended or was cancelled: it takes no more messages or tool calls. */
  get closed(): boolean {
    return this.#ended || this.#cancelReason !== undefined;
  }

  /** The idle timeout in whole seconds (for the diagnostic). */
  get idleSeconds(): number {
    return Math.round(this.settings.idleTimeoutMs / 1000);
  }

  /** A message or a notice is waiting. */
  hasWork(): boolean {
    return this.agent.state.pendingMessages.length > 0 || this.agent.state.pendingNotices.length > 0;
  }

  /** The server suggests continue-as-new and nothing is in flight. */
  continueAsNewDue(): boolean {
    return workflowInfo().continueAsNewSuggested && this.agent.idle;
  }

  /** The refresh signal asked the run to move to the current code (at its next wait), and nothing is in flight. */
  refreshDue(): boolean {
    return this.#refreshRequested && this.agent.idle;
  }

  /**
   * Before continue-as-new: every handler has finished, and the run's timers (views, probe, idle alarm) are
   * cancelled, so the next run starts from the carried state alone.
   */
  async settleForContinueAsNew(): Promise<void> {
    await condition(allHandlersFinished);
    this.agent.settleViews();
    this.settleTimers();
  }

  /** Cancels the run's own timers (the probe's and the idle alarm's). */
  settleTimers(): void {
    this.orchestrator.settleTimers();
    this.idle.settle();
  }

  /**
   * The run ends with `status`: no more messages; what is pending is stored and every open tool call gets
   * its "not run" result, so the conversation stays valid. Never throws (the end runs to completion).
   */
  async closeConversation(status: SubagentState | 'idle', budget: BudgetCap | undefined): Promise<void> {
    this.#ended = true;
    await this.agent.storePending().catch(() => undefined);
    await this.loop.seal(status === 'cancelled' ? 'cancelled' : isCapStatus(status) ? capNotRunCause(budget ?? 'tokens') : 'failed').catch(() => undefined);
  }

  /** Registers the handlers both workflows share and starts watching the children. */
  open(): this {
    const agent = this.agent;
    if (this.settings.startsWaiting?.(agent)) agent.setStatus('waiting', true);
    agent.listen({ budgetCrossed: () => this.scope.cancel() });
    registerAgentHandlers(agent, this.orchestrator, {
      maxTurns: this.settings.maxTurns,
      cancel: (reason) => {
        this.#cancelReason = reason;
        this.scope.cancel();
      },
      refuseMessage: () => this.settings.refuseMessage(this),
      startsAtOnce: () => agent.status === 'waiting' && agent.state.pendingMessages.length === 0,
      refresh: () => {
        this.#refreshRequested = true;
      },
    });
    return this;
  }

  /** Starts watching the children for a lost settlement (see {@link AgentRunSettings.probeChildren}). */
  watchChildren(): void {
    if (this.settings.probeChildren === 'always' || this.agent.canDelegate) void this.orchestrator.probeLoop().catch(() => undefined);
  }
}

import { condition } from '@temporalio/workflow';
import type { MessageInput } from '../contracts/activities';
import type { CarriedAgentInput, CarriedAgentState, CarriedPhase } from '../contracts/agent-state';
import type { PreparedWorktree } from '../contracts/agent-wire';
import type { ModelRoute, TokenUsage } from '../contracts/model';
import type { SubagentState } from '../contracts/subagent';
import type { SubagentPeek } from '../contracts/subagent-result';
import type { SendMessageInput, SendMessageResult } from '../contracts/subagent-messages';
import { totalUsage, type AnswerEntry } from '../domain/agent-ledger';
import { capCrossing, remainingCaps, type CapCrossing, type RunCaps } from '../domain/run-caps';
import { createActivityProxies, type AgentActivityProxies } from './activity-proxies';
import { validateMessage, validateQueueRoom } from './agent-messages';
import type { AgentOptions } from './agent-options';
import { peekAgent } from './agent-snapshot';
import type { AgentLook } from './agent-look';
import { AgentStateOwner } from './agent-state-owner';
import { AgentViews } from './agent-views';
import { Approvals } from './approvals';
import { startPatches } from './start-patches';

/** What the workflow asks its agent to tell it (see {@link Agent.listen}). */
export interface AgentListeners {
  /** A cap was reached outside a model turn (a child's report): the workflow cancels its run. */
  budgetCrossed?: () => void;
  /** Something a parent or a person should see changed (an approval is now pending). */
  change?: () => void;
}

/**
 * One agent (a session or a subagent) for one run of its workflow. Its durable part is `state` (AgentState,
 * decision 0040), one JSON value owned by {@link AgentStateOwner}, changed through its methods only and
 * carried whole across continue-as-new ({@link snapshot}). What this class adds lives for this run only
 * and is rebuilt from the input and the state when the next run starts: the options, the activity proxies,
 * the live status, the views, the approvals waiting, what is in flight. Workflow code: deterministic, no
 * I/O; the conversation itself lives in the conversation store and is written through activities.
 */
export class Agent extends AgentStateOwner implements AgentLook {
  readonly options: AgentOptions;
  readonly activities: AgentActivityProxies;
  /** This run waits quietly (decision 0021); decided once when the run starts, see {@link startPatches}. */
  readonly quietWaits: boolean;
  /** This run's totals keep expired tasks' usage and its children's caps add up; decided once, see {@link startPatches}. */
  readonly spendAddsUp: boolean;
  /** Its own tool calls that wait for a decision (none at continue-as-new: they live inside a turn). */
  readonly approvals: Approvals;
  /** The live status (peek, the views and the parent see it). */
  #status: SubagentState = 'running';
  /** Turn limit of the current run (for the Web UI's current details). */
  #currentLimit = 0;
  /** Set when a cap was reached: which (the run then ends with that cap's status) and why. */
  #budgetCrossed: CapCrossing | undefined;
  /** Prompt tokens of the last model call, as its provider reported them (what a fork of this turn repeats). */
  #lastPromptTokens: number | undefined;
  /** What the workflow asked to be told (see {@link listen}). */
  #listeners: AgentListeners = {};
  /** Model calls, tool calls and foreground children in flight: continue-as-new waits for none. */
  private inFlight = 0;
  /** Search attributes and the Web UI's current details, written where the workflow waits. */
  private readonly views: AgentViews = new AgentViews(this);

  constructor(options: AgentOptions, carried?: CarriedAgentInput) {
    super(carried, options.now);
    this.options = options;
    const started = startPatches();
    this.quietWaits = started.quietWaits;
    this.spendAddsUp = started.spendAddsUp;
    this.activities = createActivityProxies(options.activity);
    if (this.state.worktree) this.options.workingDir = this.state.worktree.workingDir;
    this.approvals = new Approvals(this);
  }

  /** The live status: running, waiting for a message or an approval, or how it ended. */
  get status(): SubagentState {
    return this.#status;
  }

  /** Turn limit of the current run. */
  get currentLimit(): number {
    return this.#currentLimit;
  }

  /** The cap that was reached, once one was. */
  get budgetCrossed(): CapCrossing | undefined {
    return this.#budgetCrossed;
  }

  /** Prompt tokens of the last model call of this run. */
  get lastPromptTokens(): number | undefined {
    return this.#lastPromptTokens;
  }

  /** Tells the workflow when a cap is reached outside a model turn and when something a parent should see changed. */
  listen(listeners: AgentListeners): void {
    this.#listeners = { ...this.#listeners, ...listeners };
  }

  /** Something a parent or a person should see changed (an approval is now pending, the checks moved on). */
  changed(): void {
    this.#listeners.change?.();
  }

  /** A cap was reached outside a model turn (a child's report): the workflow cancels its run. */
  budgetWasCrossed(): void {
    this.#listeners.budgetCrossed?.();
  }

  /** A run of turns starts (`resume`: the run carried across continue-as-new goes on) under `limit` turns. */
  startTurns(limit: number, resume: boolean): void {
    if (!resume) this.startRun();
    this.#currentLimit = limit;
  }

  /** Records the model's answer at the next sequence number; returns that number. */
  override recordAnswer(answer: AnswerEntry): number {
    this.#lastPromptTokens = answer.usage.inputTokens;
    return super.recordAnswer(answer);
  }

  /** The conversation of the current attempt: the workflow's own for the first, `<id>~attempt-<n>` for retries. */
  get conversationId(): string {
    const attempt = this.state.attempt.number;
    return attempt <= 1 ? this.options.conversationId : `${this.options.conversationId}~attempt-${attempt}`;
  }

  /** Tools work in the worktree from now on (`isolation: worktree`). */
  workIn(worktree: PreparedWorktree): void {
    this.recordWorktree(worktree);
    this.options.workingDir = worktree.workingDir;
  }

  /** `provider/model` of this workflow's route; `none` for an MCP session started without one. */
  get modelName(): string {
    return this.options.route ? `${this.options.route.provider}/${this.options.route.model}` : 'none';
  }

  /** The route of its model calls; only an MCP session, which makes none, has no route. */
  get route(): ModelRoute {
    if (!this.options.route) throw new Error(`${this.options.workflowId} has no model of its own (an MCP session): it makes no model call`);
    return this.options.route;
  }

  /** Whether this workflow may delegate (SEMANTICS §3 depth rule); if not, `delegate` is not offered. */
  get canDelegate(): boolean {
    return this.options.depth < this.options.maxDepth;
  }

  /** True when no model call, tool call or foreground child is in flight. */
  get idle(): boolean {
    return this.inFlight === 0;
  }

  /** Runs `work` counted as in flight (continue-as-new waits until nothing is). */
  async busy<T>(work: () => Promise<T>): Promise<T> {
    this.flushViews();
    this.inFlight += 1;
    try {
      return await work();
    } finally {
      this.inFlight -= 1;
    }
  }

  /** Tokens used by this workflow and all its descendants (those whose records expired too). */
  totalUsage(): TokenUsage {
    return totalUsage(this.state, this.spendAddsUp);
  }

  /** The caps this workflow runs under (tokens, time, money). */
  private get caps(): RunCaps {
    return { tokenBudget: this.options.tokenBudget, timeBudgetMs: this.options.timeBudgetMs, costBudgetMicroUsd: this.options.costBudgetMicroUsd };
  }

  /** What is left of each cap now (workflow clock), with its descendants' usage; absent where there is no cap. */
  remainingCaps(): { tokens?: number; timeMs?: number; costMicroUsd?: number } {
    return remainingCaps(this.caps, { total: this.totalUsage(), startedAt: this.state.startedAt, now: Date.now() });
  }

  /** Tokens left of the budget, or undefined without a budget. */
  remainingBudget(): number | undefined {
    return this.remainingCaps().tokens;
  }

  /**
   * Checks the caps — tokens, money, time (SEMANTICS §5-§6: before every model call and on every child
   * report) — with the workflow clock. Returns the crossing once a cap is reached; the first is remembered.
   */
  checkBudget(): CapCrossing | undefined {
    if (this.#budgetCrossed) return this.#budgetCrossed;
    this.#budgetCrossed = capCrossing(this.caps, { total: this.totalUsage(), startedAt: this.state.startedAt, now: Date.now() });
    return this.#budgetCrossed;
  }

  /** Drops task records whose result was read longer than the TTL ago (and the oldest beyond the cap); their usage is retired, not lost. */
  pruneTasks(): void {
    this.expireTasks(this.options.tasks.completedTaskTtlMs);
  }

  /** Appends messages to the conversation at the next sequence numbers (stores what is pending first). */
  async append(messages: MessageInput[], summary?: string): Promise<void> {
    if (messages.length === 0) return;
    await this.storePending();
    const startSeq = this.state.length;
    await this.activities.store.appendMessages.executeWithOptions(
      { summary: summary ?? `store messages ${startSeq}–${startSeq + messages.length - 1}` },
      [{ conversationId: this.conversationId, startSeq, messages }],
    );
    this.recordAppended(messages.length);
  }

  /** Stores the pending messages now (before anything but a model call reads the conversation). */
  async storePending(): Promise<void> {
    const pending = this.state.pending;
    if (!pending) return;
    await this.activities.store.appendMessages.executeWithOptions(
      { summary: `store messages ${pending.startSeq}–${pending.startSeq + pending.messages.length - 1}` },
      [{ conversationId: this.conversationId, startSeq: pending.startSeq, messages: pending.messages }],
    );
    this.recordPendingStored(pending.startSeq);
  }

  /** Waits for `ready` (a `condition`), with the views written first. */
  async waitFor(ready: () => boolean, timeoutMs?: number): Promise<boolean> {
    this.flushViews();
    if (timeoutMs === undefined) {
      await condition(ready);
      return true;
    }
    return condition(ready, timeoutMs);
  }

  /** Sets the live status and mirrors it into the Web UI's views (`quiet`: the views are not marked). */
  setStatus(status: SubagentState, quiet = false): void {
    this.#status = status;
    if (!quiet) this.updateViews();
  }

  /**
   * Marks the views (search attributes, the Web UI's current details) as changed. They are written by
   * {@link flushViews} where the workflow waits — before each activity and each wait — so several changes
   * in one activation cost one upsert (each is a history event), and the views are current whenever the
   * workflow is waiting for something.
   */
  updateViews(): void {
    this.views.markDirty();
  }

  /**
   * Writes the views if they changed (search attributes at most once per `viewsUpsertIntervalMs`, see
   * {@link AgentViews.flush}). `force` writes them now (the end of the workflow).
   */
  flushViews(force = false): void {
    this.views.flush(force);
  }

  /** Before continue-as-new: cancels the views' interval timer (see {@link AgentViews.settle}). */
  settleViews(): void {
    this.views.settle();
  }

  /** Validates a message for this agent (the sendMessage update's validator). Throws with the reason. */
  validateMessage(input: SendMessageInput): void {
    validateMessage(input);
    validateQueueRoom(this.state, input, this.options.tasks.maxQueuedMessages);
  }

  /** Queues an accepted message (dropping a repeated delivery of the same message id). */
  acceptMessage(input: SendMessageInput, startsAtOnce: boolean): SendMessageResult {
    return this.queueMessage(input, startsAtOnce);
  }

  /** Takes the next queued message as the next user turn (stored by the next model call). */
  appendNextMessage(): boolean {
    const message = this.takeNextMessage();
    if (!message) return false;
    this.touch();
    this.remember('user', message.text ?? message.preview);
    this.appendBeforeNextTurn([message.key !== undefined ? { role: 'user', parts: [{ blobKey: message.key }] } : { role: 'user', content: message.text ?? '' }]);
    return true;
  }

  /** Peek view of this workflow. Durations are left to the reader (a query's clock stands still). */
  peek(maxTurns: number): SubagentPeek {
    return peekAgent(this, maxTurns);
  }

  /** The state to carry into the next run (continue-as-new), whole: previews and references, never whole outputs. */
  snapshot(phase: CarriedPhase): CarriedAgentState {
    return this.carried(phase, this.options.tasks.completedTaskTtlMs);
  }
}

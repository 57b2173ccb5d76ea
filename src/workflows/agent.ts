import { condition } from '@temporalio/workflow';
import type { MessageInput } from '../contracts/activities';
import { maxTaskRecords, transcriptEntries, transcriptEntryLength } from '../contracts/limits';
import { addUsage, zeroUsage, type ModelRoute, type TokenUsage } from '../contracts/model';
import type { PreparedWorktree, ContextWindowState, SubagentState } from '../contracts/subagent';
import type {
  AttemptState,
  CarriedAgentState,
  FinalOutputState,
  PendingNotice,
  QueuedMessage,
  TranscriptEntry,
} from '../contracts/carried-agent-state';
import type { RetryView, SubagentPeek, ToolCallSummary } from '../contracts/subagent-result';
import type { SendMessageInput, SendMessageResult } from '../contracts/subagent-messages';
import { capCrossing, remainingCaps, type CapCrossing, type RunCaps } from '../domain/run-caps';
import { preview } from '../domain/subagent-prompt';
import { emptyRegistry, expireTasks, retireUsage, type TaskRegistry } from '../domain/task-registry';
import { createActivityProxies, type AgentActivityProxies } from './activity-proxies';
import { acceptMessage, validateMessage, validateQueueRoom } from './agent-messages';
import type { AgentOptions } from './agent-options';
import { carriedAgentState, peekAgent } from './agent-snapshot';
import { AgentViews } from './agent-views';
import { Approvals } from './approvals';
import { quietWaits } from './quiet-waits';
import { spendAddsUp } from './spend-adds-up';

/**
 * The state of one agent (a session or a subagent): its conversation's length and compaction state,
 * counters, queued messages and notices, the bounded transcript, its tasks, and the views that show them
 * (peek, search attributes, the Web UI's current details). Workflow code: deterministic, no I/O; the
 * conversation itself lives in the conversation store and is written through activities. The views are
 * written by {@link AgentViews}; the peek view and the carried state are built in `agent-snapshot.ts`.
 */
export class Agent {
  readonly options: AgentOptions;
  readonly activities: AgentActivityProxies;
  /** This run waits quietly (decision 0021); decided once when the run starts, see {@link quietWaits}. */
  readonly quietWaits: boolean;
  /** This run's totals keep expired tasks' usage and its children's caps add up; decided once, see {@link spendAddsUp}. */
  readonly spendAddsUp: boolean;
  state: SubagentState = 'running';
  startedAt: number;
  lastActivityAt: number;
  /** Messages in the conversation store. */
  length = 0;
  turns = 0;
  /** Turns of the current run (one delegation run, one session message, one continuable activation). */
  turnsThisRun = 0;
  /** Turn limit of the current run (for the Web UI's current details). */
  currentLimit = 0;
  toolCalls = 0;
  usage: TokenUsage = zeroUsage;
  /** Usage of task records dropped from the registry: part of the total for the workflow's whole life. */
  retiredUsage: TokenUsage = zeroUsage;
  lastToolCall: ToolCallSummary | null = null;
  lastAssistantText: string | null = null;
  lastText: { seq: number; text: string; truncated: boolean } | undefined;
  answers = 0;
  transcript: TranscriptEntry[] = [];
  context: ContextWindowState | undefined;
  pendingNotices: PendingNotice[] = [];
  /** The last number given to a notice offered to an MCP client (mcp-tool-calls.ts). */
  lastNoticeNumber = 0;
  pendingMessages: QueuedMessage[] = [];
  recentMessageIds: string[] = [];
  registry: TaskRegistry;
  /** Its own tool calls that wait for a decision. */
  readonly approvals: Approvals;
  /** Child approvals already announced to this workflow's model (each once). */
  announcedApprovals: string[] = [];
  /** Whether a Stop hook already sent this run back to work (`stop_hook_active` in the hooks' input); carried, so the loop breaker holds across continue-as-new. */
  stopHookBlocked = false;
  /** Set when a cap was reached: which (the run then ends with that cap's status) and why. */
  budgetCrossed: CapCrossing | undefined;
  /** Prompt tokens of the last model call, as its provider reported them (what a fork of this turn repeats). */
  lastPromptTokens: number | undefined;
  /** Called when a cap is reached outside a model turn (a child's report): the workflow cancels its run. */
  onBudgetCrossed: (() => void) | undefined;
  /** Called when something a parent or a person should see changed (an approval is now pending). */
  onChange: (() => void) | undefined;
  /**
   * Messages with reserved sequence numbers that are not stored yet: the next model call stores them
   * first (one activity instead of two per turn), or {@link storePending} does before anything else reads
   * the conversation.
   */
  pending: { startSeq: number; messages: MessageInput[] } | undefined;
  /** The attempt of a recipe's `retry` (each has a conversation of its own). */
  attempt: AttemptState = { number: 1, messageBase: 0 };
  /** The recipe's checks as peek shows them. */
  retryView: RetryView | undefined;
  /** Structured output: the stored schema and this run's `final_output` calls. */
  finalOutput: FinalOutputState | undefined;
  /** The git worktree this agent works in (`isolation: worktree`). */
  worktree: PreparedWorktree | undefined;
  /** Model calls, tool calls and foreground children in flight: continue-as-new waits for none. */
  private inFlight = 0;
  /** Search attributes and the Web UI's current details, written where the workflow waits. */
  private readonly views: AgentViews = new AgentViews(this);

  constructor(options: AgentOptions, carried?: CarriedAgentState) {
    this.options = options;
    this.quietWaits = quietWaits();
    this.spendAddsUp = spendAddsUp();
    this.activities = createActivityProxies(options.activity);
    this.startedAt = carried?.startedAt ?? options.now;
    this.lastActivityAt = carried?.lastActivityAt ?? options.now;
    this.registry = emptyRegistry();
    this.approvals = new Approvals(this);
    if (carried) {
      this.length = carried.length;
      this.turns = carried.turns;
      this.turnsThisRun = carried.runTurns;
      this.toolCalls = carried.toolCalls;
      this.usage = carried.usage;
      this.retiredUsage = carried.retiredUsage ?? zeroUsage;
      this.stopHookBlocked = carried.stopHookBlocked === true;
      this.lastToolCall = carried.lastToolCall;
      this.lastAssistantText = carried.lastAssistantText;
      this.lastText = carried.lastText;
      this.registry = { tasks: carried.tasks, nextTaskNumber: carried.nextTaskNumber };
      this.pendingNotices = carried.pendingNotices;
      this.lastNoticeNumber = Math.max(carried.lastNoticeNumber ?? 0, ...carried.pendingNotices.map((notice) => notice.number ?? 0));
      this.pendingMessages = carried.pendingMessages;
      this.recentMessageIds = carried.recentMessageIds ?? [];
      this.answers = carried.answers;
      this.transcript = carried.transcript;
      this.announcedApprovals = carried.announcedApprovals ?? [];
      this.context = carried.context;
      this.pending = carried.pending;
      if (carried.attempt) this.attempt = carried.attempt;
      this.retryView = carried.retryView;
      this.finalOutput = carried.finalOutput;
      if (carried.worktree) this.workIn(carried.worktree);
    }
  }

  /** The conversation of the current attempt: the workflow's own for the first, `<id>~attempt-<n>` for retries. */
  get conversationId(): string {
    return this.attempt.number <= 1 ? this.options.conversationId : `${this.options.conversationId}~attempt-${this.attempt.number}`;
  }

  /** Tools work in the worktree from now on (`isolation: worktree`). */
  workIn(worktree: PreparedWorktree): void {
    this.worktree = worktree;
    this.options.workingDir = worktree.workingDir;
  }

  /**
   * Starts the next attempt of a recipe's `retry`: an empty conversation of its own (the caller stores the
   * system prompt and the task), a fresh context window and fresh structured-output counters.
   */
  startAttempt(): void {
    this.attempt = { number: this.attempt.number + 1, messageBase: this.attempt.messageBase + this.length };
    this.length = 0;
    this.context = undefined;
    this.lastText = undefined;
    if (this.finalOutput) this.finalOutput = { schemaKey: this.finalOutput.schemaKey, invalidCalls: 0, reminded: false };
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
    const own = this.spendAddsUp ? addUsage(this.usage, this.retiredUsage) : this.usage;
    return this.registry.tasks.reduce((sum, task) => addUsage(sum, task.totalUsage), own);
  }

  /** The caps this workflow runs under (tokens, time, money). */
  private get caps(): RunCaps {
    return { tokenBudget: this.options.tokenBudget, timeBudgetMs: this.options.timeBudgetMs, costBudgetMicroUsd: this.options.costBudgetMicroUsd };
  }

  /** What is left of each cap now (workflow clock), with its descendants' usage; absent where there is no cap. */
  remainingCaps(): { tokens?: number; timeMs?: number; costMicroUsd?: number } {
    return remainingCaps(this.caps, { total: this.totalUsage(), startedAt: this.startedAt, now: Date.now() });
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
    if (this.budgetCrossed) return this.budgetCrossed;
    this.budgetCrossed = capCrossing(this.caps, { total: this.totalUsage(), startedAt: this.startedAt, now: Date.now() });
    return this.budgetCrossed;
  }

  /** Drops task records whose result was read longer than the TTL ago (and the oldest beyond the cap); their usage is retired, not lost. */
  pruneTasks(): void {
    const dropped = expireTasks(this.registry, Date.now(), this.options.tasks.completedTaskTtlMs, maxTaskRecords);
    if (dropped.length > 0) this.retiredUsage = retireUsage(this.retiredUsage, dropped);
  }

  /** Appends messages to the conversation at the next sequence numbers (stores what is pending first). */
  async append(messages: MessageInput[], summary?: string): Promise<void> {
    if (messages.length === 0) return;
    await this.storePending();
    const startSeq = this.length;
    await this.activities.store.appendMessages.executeWithOptions(
      { summary: summary ?? `store messages ${startSeq}–${startSeq + messages.length - 1}` },
      [{ conversationId: this.conversationId, startSeq, messages }],
    );
    this.length += messages.length;
  }

  /**
   * Reserves the next sequence numbers for messages that the next model call stores (user messages and
   * notices right before a turn): they cost no activity of their own.
   */
  appendBeforeNextTurn(messages: MessageInput[]): void {
    if (messages.length === 0) return;
    if (!this.pending) this.pending = { startSeq: this.length, messages: [] };
    this.pending.messages.push(...messages);
    this.length += messages.length;
  }

  /** Stores the pending messages now (before anything but a model call reads the conversation). */
  async storePending(): Promise<void> {
    const pending = this.pending;
    if (!pending) return;
    await this.activities.store.appendMessages.executeWithOptions(
      { summary: `store messages ${pending.startSeq}–${pending.startSeq + pending.messages.length - 1}` },
      [{ conversationId: this.conversationId, startSeq: pending.startSeq, messages: pending.messages }],
    );
    if (this.pending === pending) this.pending = undefined;
  }

  /** Records an entry of the bounded transcript. */
  remember(role: TranscriptEntry['role'], text: string): void {
    this.transcript.push({ role, text: preview(text, transcriptEntryLength), at: Date.now() });
    if (this.transcript.length > transcriptEntries) this.transcript.splice(0, this.transcript.length - transcriptEntries);
  }

  /** Notes that something happened now (a turn ended, a message arrived): idle time counts from here. */
  touch(): void {
    this.lastActivityAt = Date.now();
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

  /** Sets the live state and mirrors it into the Web UI's views. */
  setState(state: SubagentState): void {
    this.state = state;
    this.updateViews();
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
    validateQueueRoom(this, input, this.options.tasks.maxQueuedMessages);
  }

  /** Queues an accepted message (dropping a repeated delivery of the same message id). */
  acceptMessage(input: SendMessageInput, startsAtOnce: boolean): SendMessageResult {
    return acceptMessage(this, input, startsAtOnce);
  }

  /** Takes the next queued message as the next user turn (stored by the next model call). */
  appendNextMessage(): boolean {
    const message = this.pendingMessages.shift();
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

  /** State to carry into the next run (continue-as-new): previews and references, never whole outputs. */
  snapshot(phase: CarriedAgentState['phase']): CarriedAgentState {
    return carriedAgentState(this, phase);
  }
}

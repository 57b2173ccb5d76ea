import { CancellationScope, condition, setCurrentDetails, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { MessageInput, RecipeServerWire, RunningRecipe, ToolPolicyNarrowingWire } from '../contracts/activities';
import {
  carriedTranscriptEntries,
  maxMessageLength,
  maxTaskRecords,
  previewLength,
  recentMessageIdCount,
  transcriptEntries,
  transcriptEntryLength,
  viewsUpsertIntervalMs,
} from '../contracts/limits';
import { addUsage, zeroUsage, type ModelRoute, type TokenUsage } from '../contracts/model';
import { searchAttributes } from '../contracts/search-attributes';
import type {
  Approvers,
  PreparedWorktree,
  ContextWindowState,
  ConversationPrefix,
  SubagentActivitySettings,
  SubagentState,
  TaskLimits,
} from '../contracts/subagent';
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
import { preview } from '../domain/subagent-prompt';
import { carriedRegistry, emptyRegistry, expireTasks, type TaskRegistry } from '../domain/task-registry';
import { createActivityProxies, type AgentActivityProxies } from './activity-proxies';
import { Approvals } from './approvals';

/** What a session or subagent workflow configures its agent with. */
export interface AgentOptions {
  kind: 'session' | 'subagent';
  workflowId: string;
  /**
   * Key of this workflow's conversation in the blob store (workflow id and first run id, stable across
   * continue-as-new). A recipe's retry attempts after the first get conversations of their own (see
   * {@link Agent.conversationId}).
   */
  conversationId: string;
  /** Another conversation's turns this one continues (a fork), by reference: the model sees them first. */
  prefix?: ConversationPrefix;
  label: string;
  route: ModelRoute;
  toolsets: string[];
  toolFilter?: { allow?: string[]; deny?: string[] };
  workingDir: string;
  /** 0 for a session, 1 for its children, and so on. */
  depth: number;
  maxDepth: number;
  activity: SubagentActivitySettings;
  tasks: TaskLimits;
  recipe?: RunningRecipe;
  tenant?: string;
  /** Token budget of this workflow and its descendants. */
  tokenBudget?: number;
  /** Output-token limit of each model call, if the delegation or recipe set one. */
  maxOutputTokens?: number;
  /** Narrowings of the operator's tool policy (recipe, delegation). */
  toolPolicy?: ToolPolicyNarrowingWire[];
  /** MCP servers its recipe declared. */
  recipeServers?: RecipeServerWire[];
  /** How long a tool call under `ask` waits for a decision before it is denied (ms). */
  approvalTimeoutMs: number;
  /** Who may decide its children's approvals. */
  approvers: Approvers;
  /** Wall clock at the start of this run. */
  now: number;
}

/**
 * The state of one agent (a session or a subagent): its conversation's length and compaction state,
 * counters, queued messages and notices, the bounded transcript, its tasks, and the views that show them
 * (peek, search attributes, the Web UI's current details). Workflow code: deterministic, no I/O; the
 * conversation itself lives in the conversation store and is written through activities.
 */
export class Agent {
  readonly options: AgentOptions;
  readonly activities: AgentActivityProxies;
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
  lastToolCall: ToolCallSummary | null = null;
  lastAssistantText: string | null = null;
  lastText: { seq: number; text: string; truncated: boolean } | undefined;
  answers = 0;
  transcript: TranscriptEntry[] = [];
  context: ContextWindowState | undefined;
  pendingNotices: PendingNotice[] = [];
  pendingMessages: QueuedMessage[] = [];
  recentMessageIds: string[] = [];
  registry: TaskRegistry;
  /** Its own tool calls that wait for a decision. */
  readonly approvals: Approvals;
  /** Child approvals already announced to this workflow's model (each once). */
  announcedApprovals: string[] = [];
  /** Set when the token budget was crossed: why (the run then ends with `budget`). */
  budgetCrossed: string | undefined;
  /** Called when the budget is crossed outside a model turn (a child's report): the workflow cancels its run. */
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
  private lastSearchAttributes = '';
  /** Workflow time of the last search-attribute upsert. */
  private lastUpsertAt = Number.NEGATIVE_INFINITY;
  /** A timer that writes search attributes held back by the interval is running. */
  private upsertDeferred = false;
  private lastDetails = '';
  private viewsDirty = false;

  constructor(options: AgentOptions, carried?: CarriedAgentState) {
    this.options = options;
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
      this.lastToolCall = carried.lastToolCall;
      this.lastAssistantText = carried.lastAssistantText;
      this.lastText = carried.lastText;
      this.registry = { tasks: carried.tasks, nextTaskNumber: carried.nextTaskNumber };
      this.pendingNotices = carried.pendingNotices;
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

  /** `provider/model` of this workflow's route. */
  get modelName(): string {
    return `${this.options.route.provider}/${this.options.route.model}`;
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

  /** Tokens used by this workflow and all its descendants. */
  totalUsage(): TokenUsage {
    return this.registry.tasks.reduce((sum, task) => addUsage(sum, task.totalUsage), this.usage);
  }

  /** Tokens left of the budget, or undefined without a budget. */
  remainingBudget(): number | undefined {
    if (this.options.tokenBudget === undefined) return undefined;
    const total = this.totalUsage();
    return Math.max(0, this.options.tokenBudget - total.inputTokens - total.outputTokens);
  }

  /**
   * Checks the token budget (SEMANTICS §5: before every model call and on every child report). Returns
   * the diagnostic once the budget is crossed; the first crossing is remembered.
   */
  checkBudget(): string | undefined {
    if (this.budgetCrossed) return this.budgetCrossed;
    const budget = this.options.tokenBudget;
    if (budget === undefined) return undefined;
    const total = this.totalUsage();
    const used = total.inputTokens + total.outputTokens;
    if (used < budget) return undefined;
    this.budgetCrossed = `used ${used} tokens (with its subagents); the token budget is ${budget}`;
    return this.budgetCrossed;
  }

  /** Drops task records whose result was read longer than the TTL ago (and the oldest beyond the cap). */
  pruneTasks(): void {
    expireTasks(this.registry, Date.now(), this.options.tasks.completedTaskTtlMs, maxTaskRecords);
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
    this.viewsDirty = true;
  }

  /**
   * Writes the views if they changed. The current details cost no history and are written at once. Search
   * attributes (a history event and a visibility write each) are written at most once per
   * `viewsUpsertIntervalMs`: a change within the interval is written by a timer when it ends, so the Web
   * UI and listings are never more than that behind, and a run of fast turns costs about one upsert per
   * second instead of one per turn. `force` writes them now (the end of the workflow).
   */
  flushViews(force = false): void {
    if (!this.viewsDirty && !force) return;
    this.viewsDirty = false;
    const attributes = `${this.state}|${this.turns}`;
    if (attributes !== this.lastSearchAttributes) {
      const now = Date.now();
      if (force || now - this.lastUpsertAt >= viewsUpsertIntervalMs) {
        this.lastSearchAttributes = attributes;
        this.lastUpsertAt = now;
        upsertSearchAttributes([
          { key: searchAttributes.status, value: this.state },
          { key: searchAttributes.turns, value: this.turns },
        ]);
      } else {
        this.deferUpsert(this.lastUpsertAt + viewsUpsertIntervalMs - now);
      }
    }
    const details = [
      `**${this.state}** · turn ${this.turnsThisRun} of ${this.currentLimit} (total ${this.turns}) · ${this.toolCalls} tool calls`,
      this.lastToolCall ? `last tool: \`${this.lastToolCall.name}\` (turn ${this.lastToolCall.turn})` : 'no tool calls yet',
      `idle since ${new Date(this.lastActivityAt).toISOString()}`,
      this.context ? `context compacted ${this.context.compactions} time(s)` : '',
      this.retryView ? `checks: attempt ${this.retryView.attempt} of ${this.retryView.attempts}, ${this.retryView.state}` : '',
      this.registry.tasks.length > 0 ? `tasks: ${this.registry.tasks.map((task) => `${task.taskId} ${task.state}`).join(', ')}` : '',
    ].filter(Boolean).join('\n');
    if (details !== this.lastDetails) {
      this.lastDetails = details;
      setCurrentDetails(details);
    }
  }

  /** Writes the search attributes when the interval has passed (one timer at a time; not cancelled with a run). */
  private deferUpsert(delayMs: number): void {
    if (this.upsertDeferred) return;
    this.upsertDeferred = true;
    void CancellationScope.nonCancellable(() => sleep(Math.max(1, delayMs))).then(() => {
      this.upsertDeferred = false;
      this.viewsDirty = true;
      this.flushViews();
    }).catch(() => undefined); // the workflow ended or was evicted meanwhile
  }

  /** Validates a message for this agent (the sendMessage update's validator). Throws with the reason. */
  validateMessage(input: SendMessageInput): void {
    const hasText = typeof input?.message === 'string';
    const hasKey = typeof input?.messageKey === 'string';
    if (hasText === hasKey) throw new Error('give the message as `message` (text) or `messageKey` (a stored message), not both and not neither');
    if (hasText && (input.message ?? '').trim().length === 0) throw new Error('message must be a non-empty string');
    const length = hasText ? (input.message ?? '').length : (input.messageChars ?? 0);
    if (length > maxMessageLength) throw new Error(`message is ${length} characters; the limit is ${maxMessageLength}`);
  }

  /** Queues an accepted message (dropping a repeated delivery of the same message id). */
  acceptMessage(input: SendMessageInput, startsAtOnce: boolean): SendMessageResult {
    if (input.messageId !== undefined && this.recentMessageIds.includes(input.messageId)) {
      return { accepted: true, queuedTurns: this.pendingMessages.length, duplicate: true };
    }
    if (input.messageId !== undefined) {
      this.recentMessageIds.push(input.messageId);
      if (this.recentMessageIds.length > recentMessageIdCount) this.recentMessageIds.splice(0, this.recentMessageIds.length - recentMessageIdCount);
    }
    const text = input.message;
    this.pendingMessages.push({
      ...(text !== undefined ? { text } : {}),
      ...(input.messageKey !== undefined ? { key: input.messageKey } : {}),
      preview: text !== undefined ? preview(text, previewLength) : `(stored message, ${input.messageChars ?? 0} characters)`,
    });
    return { accepted: true, queuedTurns: startsAtOnce ? 0 : this.pendingMessages.length };
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
    return {
      workflowId: this.options.workflowId,
      label: this.options.label,
      state: this.state,
      startedAt: this.startedAt,
      lastActivityAt: this.lastActivityAt,
      turns: this.turns,
      maxTurns,
      toolCalls: this.toolCalls,
      ...(this.context ? { compactions: this.context.compactions } : {}),
      ...(this.retryView ? { retry: this.retryView } : {}),
      lastToolCall: this.lastToolCall,
      lastAssistantText: this.lastAssistantText,
      usage: this.usage,
      model: this.modelName,
      ...(this.registry.tasks.length > 0
        ? { tasks: this.registry.tasks.map((task) => ({ taskId: task.taskId, state: task.state, description: task.description, turns: task.peek?.turns ?? task.result?.turns ?? 0 })) }
        : {}),
      ...(this.pendingMessages.length > 0 ? { queuedMessages: this.pendingMessages.length } : {}),
      ...(this.approvals.pending.length > 0 ? { pendingApprovals: this.approvals.pending } : {}),
    };
  }

  /** State to carry into the next run (continue-as-new): previews and references, never whole outputs. */
  snapshot(phase: CarriedAgentState['phase']): CarriedAgentState {
    this.pruneTasks();
    const registry = carriedRegistry(this.registry, previewLength);
    return {
      phase,
      startedAt: this.startedAt,
      lastActivityAt: this.lastActivityAt,
      length: this.length,
      turns: this.turns,
      toolCalls: this.toolCalls,
      usage: this.usage,
      lastToolCall: this.lastToolCall,
      lastAssistantText: this.lastAssistantText,
      ...(this.lastText ? { lastText: this.lastText } : {}),
      tasks: registry.tasks,
      nextTaskNumber: registry.nextTaskNumber,
      announcedApprovals: this.announcedApprovals,
      pendingNotices: this.pendingNotices,
      pendingMessages: this.pendingMessages,
      recentMessageIds: this.recentMessageIds,
      runTurns: this.turnsThisRun,
      answers: this.answers,
      ...(this.context ? { context: this.context } : {}),
      ...(this.pending ? { pending: this.pending } : {}),
      ...(this.attempt.number > 1 ? { attempt: this.attempt } : {}),
      ...(this.retryView ? { retryView: this.retryView } : {}),
      ...(this.finalOutput ? { finalOutput: this.finalOutput } : {}),
      ...(this.worktree ? { worktree: this.worktree } : {}),
      // Only the recent transcript travels: the whole conversation is in the conversation store.
      transcript: this.transcript.slice(-carriedTranscriptEntries),
    };
  }
}

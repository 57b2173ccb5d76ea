import type { MessageInput } from '../contracts/activities';
import type { AgentState, AgentStateView, CarriedAgentInput, CarriedAgentState, CarriedPhase } from '../contracts/agent-state';
import type { ContextWindowState, PreparedWorktree } from '../contracts/agent-wire';
import type { PendingNotice, QueuedMessage, TaskRecord, TranscriptEntry } from '../contracts/carried-agent-state';
import { maxTaskRecords } from '../contracts/limits/workflow';
import type { TokenUsage } from '../contracts/model';
import type { RetryView, ToolCallSummary } from '../contracts/subagent-result';
import type { SendMessageInput, SendMessageResult } from '../contracts/subagent-messages';
import * as ledger from '../domain/agent-ledger';
import * as lifecycle from '../domain/agent-state';
import { queueMessage, takeNextMessage } from '../domain/message-queue';
import * as notices from '../domain/notices';
import { addTask, findTask, removeTask, replaceTask, type NewTask } from '../domain/task-registry';

/**
 * The owner of an agent's durable state (AgentState, decision 0040): the one place that assigns it. Each
 * method applies one pure function of `src/domain/` and keeps the result; everyone else reads the state
 * through {@link state}, whose type allows no assignment. {@link Agent} extends it with what lives for one
 * run. The clock is the workflow's (`Date.now()` in workflow code).
 */
export class AgentStateOwner {
  #state: AgentState;

  /** The state carried into this run (`carried`), or a new one for a first run that starts at `now`. */
  constructor(carried: CarriedAgentInput | undefined, now: number) {
    this.#state = lifecycle.agentStateOf(carried, now);
  }

  /** The durable state, read-only. */
  get state(): AgentStateView {
    return this.#state;
  }

  /** The state to carry into the next run (continue-as-new), whole: expired task records go first. */
  carried(phase: CarriedPhase, ttlMs: number): CarriedAgentState {
    this.expireTasks(ttlMs);
    return lifecycle.carriedAgentState(this.#state, phase);
  }

  /** A new run of turns starts: its turn count, final_output calls and Stop-hook flag start over. */
  startRun(): void {
    this.#state = lifecycle.startRun(this.#state);
  }

  /** Starts the next attempt of a recipe's `retry` (an empty conversation of its own). */
  startAttempt(): void {
    this.#state = lifecycle.startAttempt(this.#state);
  }

  /** The agent works in this worktree from now on. */
  recordWorktree(worktree: PreparedWorktree): void {
    this.#state = lifecycle.workIn(this.#state, worktree);
  }

  /** Notes that something happened now (a turn ended, a message arrived): idle time counts from here. */
  touch(): void {
    this.#state = lifecycle.touch(this.#state, Date.now());
  }

  /** Records an entry of the bounded transcript. */
  remember(role: TranscriptEntry['role'], text: string): void {
    this.#state = lifecycle.remember(this.#state, role, text, Date.now());
  }

  /** A Stop hook sent the run back to work. */
  blockStop(): void {
    this.#state = lifecycle.blockStop(this.#state);
  }

  /** One more settled activation (a continuable subagent). */
  countAnswer(): void {
    this.#state = lifecycle.countAnswer(this.#state);
  }

  /** What peek shows of the recipe's checks. */
  showRetry(view: RetryView): void {
    this.#state = lifecycle.showRetry(this.#state, view);
  }

  /** Structured output from now on, with the stored schema. */
  expectFinalOutput(schemaKey: string): void {
    this.#state = lifecycle.expectFinalOutput(this.#state, schemaKey);
  }

  /** The run got its reminder to call final_output. */
  remindFinalOutput(): void {
    this.#state = lifecycle.remindFinalOutput(this.#state);
  }

  /** `count` final_output calls were rejected, the last with `errors`. */
  rejectFinalOutputs(count: number, errors: string[]): void {
    this.#state = lifecycle.rejectFinalOutputs(this.#state, count, errors);
  }

  /** A model turn starts; returns its number in this run. */
  beginTurn(): number {
    this.#state = ledger.beginTurn(this.#state);
    return this.#state.runTurns;
  }

  /** Records the model's answer at the next sequence number; returns that number. */
  recordAnswer(answer: ledger.AnswerEntry): number {
    const seq = this.#state.length;
    this.#state = ledger.recordAnswer(this.#state, answer, Date.now());
    return seq;
  }

  /** The text stored at `seq` (an accepted final_output's JSON) is the last answer. */
  recordLastText(seq: number, text: string, truncated: boolean): void {
    this.#state = ledger.withLastText(this.#state, seq, text, truncated);
  }

  /** Tool calls of this turn take the next sequence numbers for their results. */
  recordToolCalls(calls: readonly Pick<ToolCallSummary, 'name' | 'argumentsPreview'>[]): void {
    this.#state = ledger.recordToolCalls(this.#state, calls);
  }

  /** An MCP client's tool call (its result is not stored in a conversation). */
  recordMcpToolCall(call: Pick<ToolCallSummary, 'name' | 'argumentsPreview'>): void {
    this.#state = ledger.countToolCall(this.#state, call);
  }

  /** `count` messages were stored at the end of the conversation (or their numbers taken for "not run" results). */
  recordAppended(count: number): void {
    this.#state = ledger.appended(this.#state, count);
  }

  /** Reserves the next sequence numbers for messages the next model call stores. */
  appendBeforeNextTurn(messages: MessageInput[]): void {
    this.#state = ledger.appendBeforeNextTurn(this.#state, messages);
  }

  /** The pending messages that start at `startSeq` were stored (all of them, when `startSeq` is absent: a model call stored them). */
  recordPendingStored(startSeq = this.#state.pending?.startSeq): void {
    if (startSeq !== undefined) this.#state = ledger.pendingStored(this.#state, startSeq);
  }

  /** Usage of a compaction, and the new window when it compacted. */
  recordCompaction(usage: TokenUsage, window: ContextWindowState | undefined): void {
    this.#state = ledger.spend(this.#state, usage);
    if (window) this.#state = ledger.compacted(this.#state, window);
  }

  /** Drops task records read longer than `ttlMs` ago (and the oldest beyond the cap); their usage is retired, not lost. */
  expireTasks(ttlMs: number): void {
    this.#state = ledger.pruneTasks(this.#state, Date.now(), ttlMs, maxTaskRecords);
  }

  /** Adds a task in state `starting` (the slot is taken at once, before any await) and returns its record. */
  addTask(init: Omit<NewTask, 'now'>): TaskRecord {
    const added = addTask(this.#state, { ...init, now: Date.now() });
    this.#state = { ...this.#state, ...added.registry };
    return added.task;
  }

  /** Removes a task that never started. */
  removeTask(taskId: string): void {
    this.#state = { ...this.#state, tasks: removeTask(this.#state, taskId) };
  }

  /**
   * Changes the record of task `taskId` by `change` (a function of src/domain/task-registry.ts) and
   * returns the new record; undefined when there is no such task or `change` returns none (nothing changed).
   */
  updateTask(taskId: string, change: (task: TaskRecord) => TaskRecord | undefined): TaskRecord | undefined {
    const task = findTask(this.#state, taskId);
    const changed = task ? change(task) : undefined;
    if (!changed) return undefined;
    if (changed !== task) this.#state = { ...this.#state, tasks: replaceTask(this.#state, changed) };
    return changed;
  }

  /** Queues an accepted message (a repeated delivery of the same message id is dropped). */
  queueMessage(input: SendMessageInput, startsAtOnce: boolean): SendMessageResult {
    const queued = queueMessage(this.#state, input, startsAtOnce);
    this.#state = queued.state;
    return queued.result;
  }

  /** Takes the next queued message, if any. */
  takeNextMessage(): QueuedMessage | undefined {
    const next = takeNextMessage(this.#state);
    this.#state = next.state;
    return next.message;
  }

  /** Queues a notice for the next model call (or the MCP client). */
  addNotice(notice: PendingNotice): void {
    this.#state = notices.addNotice(this.#state, notice);
  }

  /** Takes every waiting notice. */
  takeNotices(): PendingNotice[] {
    const taken = notices.takeNotices(this.#state);
    this.#state = taken.state;
    return taken.notices;
  }

  /** Every waiting notice, each numbered the first time it is offered (to an MCP client). */
  offerNotices(): PendingNotice[] {
    this.#state = notices.numberNotices(this.#state);
    return [...this.#state.pendingNotices];
  }

  /** Drops the notices the MCP client got (numbers up to `upTo`) and returns them. */
  acknowledgeNotices(upTo: number): PendingNotice[] {
    const acknowledged = notices.acknowledgeNotices(this.#state, upTo);
    this.#state = acknowledged.state;
    return acknowledged.acknowledged;
  }

  /** Notes a child's approval as announced to the model; false when it already was. */
  announceApproval(approvalId: string): boolean {
    const announced = notices.announceApproval(this.#state, approvalId);
    this.#state = announced.state;
    return announced.announced;
  }
}

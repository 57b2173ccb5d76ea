import {
  ActivityCancellationType,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  proxyActivities,
  setCurrentDetails,
  startChild,
  upsertSearchAttributes,
  type ChildWorkflowHandle,
} from '@temporalio/workflow';
import type { ActivityInterfaceFor } from '@temporalio/workflow';
import type { ApprovalDecision, ModelTurnOutput, RecipeServerWire, RunningRecipe, SubagentActivities, ToolCallRef, ToolPolicyNarrowingWire } from '../contracts/activities';
import { FailureType } from '../contracts/failures';
import type { JsonObject } from '../contracts/json';
import { cancelSettleWaitMs, carriedTranscriptEntries, previewLength, transcriptEntries, transcriptEntryLength } from '../contracts/limits';
import { addUsage, zeroUsage, type ModelRoute, type TokenUsage } from '../contracts/model';
import { searchAttributes } from '../contracts/search-attributes';
import {
  approvalSignal,
  cancelSignal,
  messageSignal,
  type CarriedAgentState,
  type ChildProgressInput,
  type ApprovalInput,
  type ChildSettledInput,
  type EndStatus,
  type PendingApproval,
  type SubagentActivitySettings,
  type SubagentPeek,
  type SubagentResult,
  type SubagentState,
  type TaskLimits,
  type TaskRecord,
  type ToolCallSummary,
  type TranscriptEntry,
} from '../contracts/subagent';
import {
  formatApprovalNotice,
  formatForegroundResult,
  formatPeek,
  formatSettlementNotice,
  formatTaskResultBlock,
  formatWaitTimeout,
} from '../domain/delegation-texts';
import { isOrchestrationTool, OrchestrationTool } from '../domain/orchestration-tools';
import { preview, turnBudgetNote } from '../domain/subagent-prompt';

/** What the agent loop of a session or subagent is configured with. */
export interface AgentCoreOptions {
  kind: 'session' | 'subagent';
  workflowId: string;
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
  /** Narrowings of the operator's tool policy (recipe, delegation). */
  toolPolicy?: ToolPolicyNarrowingWire[];
  /** MCP servers its recipe declared. */
  recipeServers?: RecipeServerWire[];
  /** How long a tool call under `ask` waits for a decision before it is denied (ms). */
  approvalTimeoutMs: number;
  /** Wall clock at the start of the first run. */
  now: number;
}

/** How one run of model turns ended. */
export interface RunOutcome {
  status: EndStatus;
  diagnostic?: string;
}

type ToolOutcome = { content: string; isError: boolean };

/** Hooks of {@link AgentCore.runTurns}. */
export interface RunHooks {
  /** Called as each model call starts (progress reporting). */
  onTurn?: () => void;
  /** Called before each model call; may continue-as-new (it then never returns). */
  beforeTurn?: () => Promise<void>;
  /** Continue the run counted in `runTurns` (after continue-as-new) instead of starting a new one. */
  resume?: boolean;
}

/**
 * The agent loop and the delegation bookkeeping shared by the session and subagent workflows. Runs
 * inside workflow code: deterministic, no I/O; the conversation lives in the conversation store and
 * every model call, tool call and store access is an activity.
 */
export class AgentCore {
  readonly options: AgentCoreOptions;
  state: SubagentState = 'running';
  startedAt: number;
  length = 0;
  turns = 0;
  turnsThisRun = 0;
  /** Turn limit of the current run (for the Web UI's current details). */
  currentLimit = 0;
  toolCalls = 0;
  usage: TokenUsage = zeroUsage;
  lastActivityAt: number;
  lastToolCall: ToolCallSummary | null = null;
  lastAssistantText: string | null = null;
  lastText: { seq: number; text: string; truncated: boolean } | undefined;
  tasks: TaskRecord[] = [];
  nextTaskNumber = 1;
  pendingNotices: string[] = [];
  pendingMessages: string[] = [];
  answers = 0;
  transcript: TranscriptEntry[] = [];
  /** Tool calls waiting for an approval, and the decisions that arrived for them. */
  pendingApprovals: PendingApproval[] = [];
  /** Approval ids of children already announced to this workflow's model (each once). */
  announcedApprovals: string[] = [];
  private approvalDecisions: Record<string, ApprovalDecision> = {};
  /** Called when something a parent or a person should see changed (an approval is now pending). */
  onChange: (() => void) | undefined;
  /** Foreground children and other in-flight work that must finish before continue-as-new. */
  private inFlight = 0;

  private readonly model: ActivityInterfaceFor<SubagentActivities>;
  private readonly tools: ActivityInterfaceFor<SubagentActivities>;
  private readonly store: ActivityInterfaceFor<SubagentActivities>;

  constructor(options: AgentCoreOptions, carried?: CarriedAgentState) {
    this.options = options;
    this.startedAt = carried?.startedAt ?? options.now;
    this.lastActivityAt = options.now;
    if (carried) {
      this.length = carried.length;
      this.turns = carried.turns;
      this.turnsThisRun = carried.runTurns;
      this.toolCalls = carried.toolCalls;
      this.usage = carried.usage;
      this.lastToolCall = carried.lastToolCall;
      this.lastAssistantText = carried.lastAssistantText;
      this.lastText = carried.lastText;
      this.tasks = carried.tasks;
      this.nextTaskNumber = carried.nextTaskNumber;
      this.pendingNotices = carried.pendingNotices;
      this.pendingMessages = carried.pendingMessages;
      this.answers = carried.answers;
      this.transcript = carried.transcript;
      this.announcedApprovals = carried.announcedApprovals ?? [];
    }
    const settings = options.activity;
    const nonRetryableErrorTypes = [
      FailureType.modelRequestRejected,
      FailureType.modelBadResponse,
      FailureType.modelNotConfigured,
      FailureType.scriptExhausted,
      FailureType.invalidInput,
      FailureType.blobMissing,
    ];
    this.model = proxyActivities<SubagentActivities>({
      startToCloseTimeout: settings.modelCallTimeoutMs,
      heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
      // Wait for the activity to acknowledge cancellation, so "cancelled" means the HTTP call was aborted.
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      retry: { initialInterval: 1_000, backoffCoefficient: 2, maximumInterval: 60_000, maximumAttempts: settings.modelMaximumAttempts, nonRetryableErrorTypes },
    });
    this.tools = proxyActivities<SubagentActivities>({
      startToCloseTimeout: settings.toolCallTimeoutMs,
      heartbeatTimeout: settings.modelHeartbeatTimeoutMs,
      cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
      // Tool errors go back to the model as results; the activity is retried only when its worker was lost.
      retry: { initialInterval: 1_000, maximumAttempts: 3, nonRetryableErrorTypes },
    });
    this.store = proxyActivities<SubagentActivities>({
      startToCloseTimeout: 60_000,
      retry: { initialInterval: 500, maximumAttempts: 10, nonRetryableErrorTypes },
    });
  }

  /** `provider/model` of this workflow's route. */
  get modelName(): string {
    return `${this.options.route.provider}/${this.options.route.model}`;
  }

  /** Whether this workflow may delegate (SEMANTICS §3 depth rule); if not, `delegate` is not offered. */
  get canDelegate(): boolean {
    return this.options.depth < this.options.maxDepth;
  }

  /** Tokens used by this workflow and all its descendants. */
  totalUsage(): TokenUsage {
    return this.tasks.reduce((sum, task) => addUsage(sum, task.totalUsage), this.usage);
  }

  /** True when no foreground child, tool call or model call is in flight. */
  get idle(): boolean {
    return this.inFlight === 0;
  }

  /** Appends messages to the conversation. */
  async append(messages: Parameters<SubagentActivities['appendMessages']>[0]['messages']): Promise<void> {
    if (messages.length === 0) return;
    await this.store.appendMessages.executeWithOptions({ summary: `store messages ${this.length}–${this.length + messages.length - 1}` }, [{ conversationId: this.options.workflowId, startSeq: this.length, messages }]);
    this.length += messages.length;
  }

  /** Records an entry of the bounded transcript. */
  remember(role: TranscriptEntry['role'], text: string): void {
    this.transcript.push({ role, text: preview(text, transcriptEntryLength), at: Date.now() });
    if (this.transcript.length > transcriptEntries) this.transcript.splice(0, this.transcript.length - transcriptEntries);
  }

  private updateSearchAttributes(): void {
    upsertSearchAttributes([
      { key: searchAttributes.status, value: this.state },
      { key: searchAttributes.turns, value: this.turns },
    ]);
    // Current details: what the Web UI shows for a running workflow (turn n of max, last tool, idle since).
    setCurrentDetails([
      `**${this.state}** · turn ${this.turnsThisRun} of ${this.currentLimit} (total ${this.turns}) · ${this.toolCalls} tool calls`,
      this.lastToolCall ? `last tool: \`${this.lastToolCall.name}\` (turn ${this.lastToolCall.turn})` : 'no tool calls yet',
      `idle since ${new Date(this.lastActivityAt).toISOString()}`,
      this.tasks.length > 0 ? `tasks: ${this.tasks.map((task) => `${task.taskId} ${task.state}`).join(', ')}` : '',
    ].filter(Boolean).join('\n'));
  }

  /** Sets the live state and mirrors it into the search attributes. */
  setState(state: SubagentState): void {
    this.state = state;
    this.updateSearchAttributes();
  }

  /**
   * Runs model turns until the model answers without tool calls, `limit` turns were used, or the token
   * budget is crossed. Throws on cancellation and on activity failures (the caller classifies them).
   */
  async runTurns(limit: number, hooks: RunHooks = {}): Promise<RunOutcome> {
    if (!hooks.resume) this.turnsThisRun = 0;
    this.currentLimit = limit;
    const onTurn = hooks.onTurn;
    for (;;) {
      await hooks.beforeTurn?.();
      if (this.pendingNotices.length > 0) {
        const notices = this.pendingNotices.splice(0);
        await this.append(notices.map((content) => ({ role: 'user' as const, content })));
      }
      this.turns += 1;
      this.turnsThisRun += 1;
      const turn = this.turnsThisRun;
      // One progress report per turn, as the model call starts: turns, tool calls and the last tool call
      // and text of the previous turn (the settlement signal carries the end).
      onTurn?.();
      this.inFlight += 1;
      let answer: ModelTurnOutput;
      try {
        answer = await this.model.modelTurn.executeWithOptions({ summary: `model ${this.modelName} · turn ${this.turns}` }, [{
          workflowId: this.options.workflowId,
          conversationId: this.options.workflowId,
          length: this.length,
          route: this.options.route,
          toolsets: this.options.toolsets,
          ...(this.options.toolFilter ? { toolFilter: this.options.toolFilter } : {}),
          turn,
          maxTurns: limit,
          ...(turnBudgetNote(turn, limit) ? { note: turnBudgetNote(turn, limit) } : {}),
          ...(this.canDelegate ? { orchestrationTools: Object.values(OrchestrationTool) } : {}),
          ...(this.options.toolPolicy ? { toolPolicy: this.options.toolPolicy } : {}),
          ...(this.options.recipeServers ? { recipeServers: this.options.recipeServers } : {}),
        }]);
      } finally {
        this.inFlight -= 1;
      }
      const assistantSeq = this.length;
      this.length += 1;
      this.lastActivityAt = Date.now();
      this.usage = addUsage(this.usage, answer.usage);
      if (answer.text.length > 0) {
        this.lastAssistantText = preview(answer.text, previewLength);
        this.lastText = { seq: assistantSeq, text: answer.text, truncated: answer.textTruncated };
      }
      this.updateSearchAttributes();

      const budget = this.options.tokenBudget;
      const total = this.totalUsage();
      if (budget !== undefined && total.inputTokens + total.outputTokens > budget) {
        return { status: 'budget', diagnostic: `used ${total.inputTokens + total.outputTokens} tokens (with its subagents); the token budget is ${budget}` };
      }
      if (answer.toolCalls.length === 0) return { status: 'completed' };
      if (turn >= limit) {
        return { status: 'max_turns', diagnostic: `reached its turn limit (${limit} turns) before giving a final answer` };
      }
      await this.runToolCalls(answer.toolCalls, assistantSeq);
      this.lastActivityAt = Date.now();
    }
  }

  /** Runs all tool calls of one answer in parallel; their results are stored in call order. */
  private async runToolCalls(calls: ToolCallRef[], assistantSeq: number): Promise<void> {
    const firstResultSeq = this.length;
    this.length += calls.length;
    this.toolCalls += calls.length;
    const last = calls[calls.length - 1];
    if (last) this.lastToolCall = { name: last.name, argumentsPreview: last.argumentsPreview, turn: this.turns };
    this.inFlight += 1;
    try {
      await Promise.all(calls.map(async (call, index) => {
        const resultSeq = firstResultSeq + index;
        if (isOrchestrationTool(call.name) && this.canDelegate) {
          const outcome = await this.orchestrate(call);
          await this.store.appendMessages.executeWithOptions({ summary: `store ${call.name} result` }, [{
            conversationId: this.options.workflowId,
            startSeq: resultSeq,
            messages: [{ role: 'tool', toolCallId: call.id, toolName: call.name, content: outcome.content, ...(outcome.isError ? { isError: true } : {}) }],
          }]);
          return;
        }
        const approval = call.needsApproval ? await this.awaitApproval(call, assistantSeq, index) : undefined;
        await this.tools.runTool.executeWithOptions({ summary: `tool ${call.name}${approval ? ` (${approval.decision === 'approve' ? 'approved' : 'denied'})` : ''}` }, [{
          workflowId: this.options.workflowId,
          conversationId: this.options.workflowId,
          assistantSeq,
          callIndex: index,
          resultSeq,
          workingDir: this.options.workingDir,
          toolsets: this.options.toolsets,
          ...(this.options.toolFilter ? { toolFilter: this.options.toolFilter } : {}),
          ...(this.options.toolPolicy ? { toolPolicy: this.options.toolPolicy } : {}),
          ...(this.options.recipeServers ? { recipeServers: this.options.recipeServers } : {}),
          ...(approval ? { approval } : {}),
        }]);
      }));
    } finally {
      this.inFlight -= 1;
    }
  }

  /** The text of the last assistant message (read back by reference when it was long). */
  async lastAssistantFullText(): Promise<string> {
    if (!this.lastText) return '';
    if (!this.lastText.truncated) return this.lastText.text;
    return this.store.readMessageText.executeWithOptions({ summary: `read message ${this.lastText.seq}` }, [{ conversationId: this.options.workflowId, seq: this.lastText.seq }]);
  }

  // ---- approvals -----------------------------------------------------------------------------------

  /**
   * Waits for a person's (or the parent's) decision on a tool call under an `ask` policy. The wait is a
   * condition on workflow state, so it survives worker and server restarts; no decision within the
   * approval timeout counts as a denial.
   */
  private async awaitApproval(call: ToolCallRef, assistantSeq: number, index: number): Promise<ApprovalDecision> {
    const id = `${this.options.workflowId}:${assistantSeq}:${index}`;
    const now = Date.now();
    const timeoutMs = this.options.approvalTimeoutMs;
    this.pendingApprovals.push({ id, workflowId: this.options.workflowId, tool: call.name, argumentsPreview: call.argumentsPreview, requestedAt: now, expiresAt: now + timeoutMs });
    this.setState('waiting_approval');
    this.onChange?.();
    try {
      const decided = await condition(() => this.approvalDecisions[id] !== undefined, timeoutMs);
      const decision = this.approvalDecisions[id];
      if (decided && decision) return decision;
      return { decision: 'deny', by: 'timeout', reason: `no decision within ${Math.round(timeoutMs / 1000)} s` };
    } finally {
      this.pendingApprovals = this.pendingApprovals.filter((pending) => pending.id !== id);
      delete this.approvalDecisions[id];
      if (this.pendingApprovals.length === 0 && this.state === 'waiting_approval') this.setState('running');
    }
  }

  /** Validates an approval update: the id must be a pending approval of this workflow. */
  validateApproval(input: ApprovalInput): void {
    if (!input || typeof input.approvalId !== 'string' || !this.pendingApprovals.some((pending) => pending.id === input.approvalId)) {
      const pending = this.pendingApprovals.map((entry) => entry.id);
      throw new Error(`no pending approval "${String(input?.approvalId)}" in ${this.options.workflowId}; pending: ${pending.length > 0 ? pending.join(', ') : '(none)'}`);
    }
    if (input.decision !== 'approve' && input.decision !== 'deny') throw new Error(`decision must be "approve" or "deny", not "${String(input.decision)}"`);
  }

  /** Records an approval decision (after {@link validateApproval}). */
  decideApproval(input: ApprovalInput): { accepted: true } {
    this.approvalDecisions[input.approvalId] = { decision: input.decision, by: input.by ?? 'api', ...(input.reason ? { reason: input.reason } : {}) };
    return { accepted: true };
  }

  // ---- orchestration tools -------------------------------------------------------------------------

  private async orchestrate(call: ToolCallRef): Promise<ToolOutcome> {
    const args: JsonObject = call.arguments ?? {};
    switch (call.name) {
      case OrchestrationTool.delegate:
        return this.delegate(args);
      case OrchestrationTool.load:
        return this.load(args);
      case OrchestrationTool.sendMessage:
        return this.sendMessage(args);
      case OrchestrationTool.approve:
        return this.approve(args);
      case OrchestrationTool.listSubagentModels:
        return {
          content: await this.store.listSubagentModels.executeWithOptions({ summary: 'list subagent models' }, [{
            ...(typeof args.provider === 'string' ? { provider: args.provider } : {}),
            ...(typeof args.model === 'string' ? { model: args.model } : {}),
          }]),
          isError: false,
        };
      default:
        return { content: `Unknown tool "${call.name}".`, isError: true };
    }
  }

  /** Background tasks that hold a slot: running, or continuable and alive. */
  private busyBackgroundTasks(): number {
    return this.tasks.filter((task) => task.mode !== 'foreground' && (task.state === 'starting' || task.state === 'running' || task.state === 'waiting')).length;
  }

  /** `delegate` (SEMANTICS §2): validate, plan (activity), start a child workflow. */
  async delegate(args: JsonObject): Promise<ToolOutcome> {
    // Full validation (zod, strict) happens in the planning activity; zod stays out of the workflow
    // bundle. Here only what decides the bookkeeping is read.
    const request = {
      instructions: typeof args.instructions === 'string' && args.instructions.length > 0 ? args.instructions : undefined,
      source: typeof args.source === 'string' && args.source.length > 0 ? args.source : undefined,
      parameters: args.parameters,
      async: args.async === true,
      continuable: args.continuable === true,
      description: typeof args.description === 'string' ? args.description : undefined,
    };
    if (!request.instructions && !request.source) {
      return { content: 'delegate was not started: give `instructions`, a `source`, or both.', isError: true };
    }
    if (request.parameters && !request.source) {
      return { content: 'delegate was not started: `parameters` are only valid together with `source`.', isError: true };
    }
    if (!this.canDelegate) {
      return { content: `delegate was not started: this agent is at depth ${this.options.depth} and the depth limit is ${this.options.maxDepth}, so it may not delegate.`, isError: true };
    }
    const background = request.async === true || request.continuable === true;
    // The slot is taken before the first await, so parallel delegate calls in one turn are counted exactly.
    if (background && this.busyBackgroundTasks() >= this.options.tasks.maxBackgroundTasks) {
      return {
        content: `delegate was not started: ${this.busyBackgroundTasks()} background tasks are running and the limit is ${this.options.tasks.maxBackgroundTasks}. Wait for one (load with its task id) or cancel one first.`,
        isError: true,
      };
    }
    const taskId = `task-${this.nextTaskNumber}`;
    this.nextTaskNumber += 1;
    const record: TaskRecord = {
      taskId,
      workflowId: `${this.options.workflowId}/${taskId}`,
      description: request.description ?? preview(request.instructions ?? request.source ?? taskId, 80),
      mode: request.continuable ? 'continuable' : background ? 'background' : 'foreground',
      state: 'starting',
      startedAt: Date.now(),
      resultRead: false,
      totalUsage: zeroUsage,
    };
    this.tasks.push(record);

    this.inFlight += 1;
    try {
      const plan = await this.store.planDelegation.executeWithOptions({ summary: `plan ${taskId}: ${record.description}` }, [{
        request: args,
        parent: {
          workflowId: this.options.workflowId,
          taskId,
          childDepth: this.options.depth + 1,
          maxDepth: this.options.maxDepth,
          workingDir: this.options.workingDir,
          route: this.options.route,
          toolsets: this.options.toolsets,
          ...(this.options.toolFilter ? { toolFilter: this.options.toolFilter } : {}),
          ...(this.options.recipe ? { recipe: this.options.recipe } : {}),
          ...(this.options.toolPolicy ? { toolPolicy: this.options.toolPolicy } : {}),
          ...(this.options.recipeServers ? { recipeServers: this.options.recipeServers } : {}),
          ...(this.options.tenant ? { tenant: this.options.tenant } : {}),
          activity: this.options.activity,
        },
      }]);
      if (!plan.ok) {
        this.tasks = this.tasks.filter((task) => task !== record);
        return { content: `delegate was not started: ${plan.message}`, isError: true };
      }
      const input = plan.input;
      const handle = await CancellationScope.nonCancellable(() =>
        startChild('subagentWorkflow', {
          workflowId: record.workflowId,
          args: [input],
          // Background children outlive the parent's continue-as-new; cancellation is explicit (cancelTask).
          parentClosePolicy: ParentClosePolicy.ABANDON,
          staticSummary: `${record.description}`,
          staticDetails: [
            `source: ${plan.source ? `${plan.source.kind} ${plan.source.name} @ ${plan.source.version}` : 'ad hoc'}`,
            `model: ${input.route.provider}/${input.route.model}`,
            `max turns: ${input.maxTurns}`,
            `parent: ${this.options.workflowId}`,
          ].join('\n'),
          typedSearchAttributes: [
            { key: searchAttributes.kind, value: 'subagent' },
            { key: searchAttributes.source, value: plan.source?.name ?? 'ad-hoc' },
            { key: searchAttributes.parent, value: this.options.workflowId },
            { key: searchAttributes.status, value: 'running' },
            { key: searchAttributes.model, value: `${input.route.provider}/${input.route.model}` },
            { key: searchAttributes.turns, value: 0 },
            ...(this.options.tenant ? [{ key: searchAttributes.tenant, value: this.options.tenant }] : []),
          ],
        }),
      );
      record.state = 'running';
      this.watchChild(record, handle);
      const warnings = plan.warnings.length > 0 ? `\nNote: ${plan.warnings.join('\nNote: ')}` : '';
      if (record.mode !== 'foreground') {
        return {
          content:
            `Started ${taskId} in the background${record.mode === 'continuable' ? ' (continuable: send_message keeps talking to it)' : ''}. ` +
            `You will get a notice when it ${record.mode === 'continuable' ? 'answers' : 'ends'}; load with source "${taskId}" waits for it, peek: true shows progress, cancel: true stops it.${warnings}`,
          isError: false,
        };
      }
      await condition(() => record.result !== undefined);
      const result = record.result;
      if (!result) return { content: 'The subagent left no result.', isError: true };
      record.resultRead = true;
      const formatted = formatForegroundResult(result);
      return { content: formatted.text + warnings, isError: formatted.isError };
    } finally {
      this.inFlight -= 1;
    }
  }

  /** Follows a child started in this run: its result settles the record even if a signal is lost. */
  private watchChild(record: TaskRecord, handle: ChildWorkflowHandle<(input: unknown) => Promise<SubagentResult>>): void {
    void CancellationScope.nonCancellable(async () => {
      try {
        const result = await handle.result();
        this.settle(record, result, true, record.totalUsage);
      } catch (error) {
        if (record.result === undefined) {
          this.settle(record, {
            workflowId: record.workflowId,
            status: 'failed',
            output: '',
            partialOutput: '',
            diagnostic: error instanceof Error ? error.message : String(error),
            turns: record.peek?.turns ?? 0,
            toolCalls: record.peek?.toolCalls ?? 0,
            usage: record.peek?.usage ?? zeroUsage,
            durationMs: Date.now() - record.startedAt,
          }, true, record.totalUsage);
        }
      }
    });
  }

  private settle(record: TaskRecord, result: SubagentResult, final: boolean, totalUsage: TokenUsage): void {
    const alreadyFinal = record.result !== undefined && (record.state !== 'waiting' && record.state !== 'running');
    if (alreadyFinal) return;
    record.totalUsage = totalUsage;
    record.result = result;
    record.settledAt = Date.now();
    record.resultRead = record.mode === 'foreground';
    record.state = final ? result.status : 'waiting';
    if (record.peek) record.peek = { ...record.peek, state: record.state, turns: result.turns };
    if (record.mode !== 'foreground') {
      const notice = formatSettlementNotice(record.taskId, result, final);
      this.pendingNotices.push(notice);
      this.remember('notice', notice);
    }
  }

  /** Handles a child's progress signal. */
  onChildProgress(input: ChildProgressInput): void {
    const record = this.tasks.find((task) => task.taskId === input.taskId);
    if (!record) return;
    record.peek = input.peek;
    record.totalUsage = input.totalUsage;
    if (record.state === 'starting' || record.state === 'waiting' || record.state === 'running') record.state = input.peek.state === 'waiting' ? 'waiting' : 'running';
    // A child's tool call that waits for an approval becomes one notice: the delegating model may decide
    // with the `approve` tool (a person may decide through the API first; whichever comes first counts).
    for (const pending of input.peek.pendingApprovals ?? []) {
      if (this.announcedApprovals.includes(pending.id)) continue;
      this.announcedApprovals.push(pending.id);
      if (this.announcedApprovals.length > 200) this.announcedApprovals.splice(0, this.announcedApprovals.length - 200);
      const notice = formatApprovalNotice(record.taskId, pending);
      this.pendingNotices.push(notice);
      this.remember('notice', notice);
    }
  }

  /** `approve`: decide a tool call of one of this workflow's tasks that waits for an approval. */
  async approve(args: JsonObject): Promise<ToolOutcome> {
    const approvalId = typeof args.approval_id === 'string' ? args.approval_id : undefined;
    const decision = args.decision === 'approve' || args.decision === 'deny' ? args.decision : undefined;
    if (!approvalId || !decision) return { content: 'approve needs `approval_id` and `decision` ("approve" or "deny").', isError: true };
    const task = this.tasks.find((candidate) => approvalId.startsWith(`${candidate.workflowId}:`));
    const pending = task?.peek?.pendingApprovals?.some((entry) => entry.id === approvalId);
    if (!task || !pending) return { content: `No approval "${approvalId}" is pending in your tasks.`, isError: true };
    await CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(task.workflowId).signal(approvalSignal, {
        approvalId,
        decision,
        by: `parent ${this.options.workflowId}`,
        ...(typeof args.reason === 'string' ? { reason: args.reason } : {}),
      }),
    );
    return { content: `Sent "${decision}" for ${approvalId} to ${task.taskId}.`, isError: false };
  }

  /** Handles a child's settlement signal. */
  onChildSettled(input: ChildSettledInput): void {
    const record = this.tasks.find((task) => task.taskId === input.taskId);
    if (!record) return;
    if (!input.final && record.state !== 'running' && record.state !== 'starting') return;
    this.settle(record, input.result, input.final, input.totalUsage);
  }

  /** Drops finished results that were read and whose TTL has passed (unread results are kept). */
  private expireTasks(): void {
    const now = Date.now();
    this.tasks = this.tasks.filter((task) => {
      if (task.settledAt === undefined || task.state === 'waiting' || task.state === 'running') return true;
      return !(task.resultRead && now - task.settledAt > this.options.tasks.completedTaskTtlMs);
    });
  }

  /** `load` (SEMANTICS §2): listing, a task (wait / peek / cancel), or a source's content. */
  async load(args: JsonObject): Promise<ToolOutcome> {
    this.expireTasks();
    const source = typeof args.source === 'string' ? args.source : undefined;
    if (source === undefined) {
      const tasks = this.tasks
        .filter((task) => task.mode !== 'foreground')
        .map((task) => ({
          id: task.taskId,
          state: listingState(task.state),
          description: task.description,
        }));
      return { content: await this.store.loadListing.executeWithOptions({ summary: 'load listing' }, [{ workingDir: this.options.workingDir, ...(this.options.recipe ? { recipe: this.options.recipe } : {}), tasks }]), isError: false };
    }
    const task = this.tasks.find((candidate) => candidate.taskId === source);
    if (task) {
      if (args.cancel === true) return this.cancelTask(task);
      if (args.peek === true) return { content: formatPeek(task.taskId, task.peek, task.state), isError: false };
      const waitMs = this.options.tasks.waitTimeoutMs;
      const settled = await condition(() => task.result !== undefined && task.state !== 'running', waitMs);
      if (!settled || !task.result) return { content: formatWaitTimeout(task.taskId, waitMs), isError: false };
      task.resultRead = true;
      return { content: formatTaskResultBlock(task.taskId, task.result), isError: false };
    }
    return { content: await this.store.loadSource.executeWithOptions({ summary: `load ${source}` }, [{ name: source, workingDir: this.options.workingDir, ...(this.options.recipe ? { recipe: this.options.recipe } : {}) }]), isError: false };
  }

  /** Cancels a task and everything under it, and returns what it had produced. */
  async cancelTask(task: TaskRecord, reason = 'cancelled by the delegating agent'): Promise<ToolOutcome> {
    if (task.state !== 'running' && task.state !== 'waiting' && task.state !== 'starting') {
      return { content: `Task ${task.taskId} had already ended (${task.state}).\n${task.result ? formatTaskResultBlock(task.taskId, task.result) : ''}`, isError: false };
    }
    await CancellationScope.nonCancellable(() => getExternalWorkflowHandle(task.workflowId).signal(cancelSignal, { reason }));
    const settled = await condition(() => task.result !== undefined && task.state !== 'running' && task.state !== 'waiting', cancelSettleWaitMs);
    if (!settled || !task.result) return { content: `Asked ${task.taskId} to cancel; it has not confirmed yet.`, isError: false };
    task.resultRead = true;
    return { content: formatTaskResultBlock(task.taskId, task.result), isError: false };
  }

  /** Cancels every task still alive (used when this workflow ends or is cancelled). */
  async cancelAllTasks(reason: string): Promise<void> {
    const alive = this.tasks.filter((task) => task.state === 'running' || task.state === 'waiting' || task.state === 'starting');
    await Promise.all(alive.map(async (task) => {
      try {
        await getExternalWorkflowHandle(task.workflowId).signal(cancelSignal, { reason });
      } catch {
        // The child may have ended in the meantime; nothing more to cancel.
      }
    }));
  }

  /** `send_message` to a continuable task of this workflow. */
  async sendMessage(args: JsonObject): Promise<ToolOutcome> {
    const taskId = typeof args.task_id === 'string' ? args.task_id : undefined;
    const message = typeof args.message === 'string' ? args.message : undefined;
    if (!taskId || !message) return { content: 'send_message needs `task_id` and a non-empty `message`.', isError: true };
    const task = this.tasks.find((candidate) => candidate.taskId === taskId);
    if (!task) {
      const known = this.tasks.filter((candidate) => candidate.mode === 'continuable').map((candidate) => candidate.taskId);
      return { content: `Message not delivered: ${taskId} is not one of your tasks.${known.length > 0 ? ` Your continuable tasks: ${known.join(', ')}.` : ''}`, isError: true };
    }
    if (task.mode !== 'continuable') return { content: `Message not delivered: ${taskId} is not continuable (delegate with continuable: true to keep talking to a subagent).`, isError: true };
    if (task.state !== 'running' && task.state !== 'waiting') return { content: `Message not delivered: ${taskId} has ended (${task.state}).`, isError: true };
    await CancellationScope.nonCancellable(() => getExternalWorkflowHandle(task.workflowId).signal(messageSignal, { message }));
    task.state = 'running';
    return { content: `Message delivered to ${taskId}. Its answer will arrive as a task notice.`, isError: false };
  }

  // ---- views and state -----------------------------------------------------------------------------

  /** Peek view of this workflow. */
  peek(label: string): SubagentPeek {
    return {
      workflowId: this.options.workflowId,
      label,
      state: this.state,
      startedAt: this.startedAt,
      elapsedMs: Date.now() - this.startedAt,
      turns: this.turns,
      maxTurns: 0,
      idleMs: Date.now() - this.lastActivityAt,
      toolCalls: this.toolCalls,
      lastToolCall: this.lastToolCall,
      lastAssistantText: this.lastAssistantText,
      usage: this.usage,
      model: this.modelName,
      ...(this.tasks.length > 0
        ? { tasks: this.tasks.map((task) => ({ taskId: task.taskId, state: task.state, description: task.description, turns: task.peek?.turns ?? task.result?.turns ?? 0 })) }
        : {}),
      ...(this.pendingMessages.length > 0 ? { queuedMessages: this.pendingMessages.length } : {}),
      ...(this.pendingApprovals.length > 0 ? { pendingApprovals: this.pendingApprovals } : {}),
    };
  }

  /** State to carry into the next run (continue-as-new). */
  snapshot(phase: CarriedAgentState['phase']): CarriedAgentState {
    return {
      phase,
      startedAt: this.startedAt,
      length: this.length,
      turns: this.turns,
      toolCalls: this.toolCalls,
      usage: this.usage,
      lastToolCall: this.lastToolCall,
      lastAssistantText: this.lastAssistantText,
      ...(this.lastText ? { lastText: this.lastText } : {}),
      tasks: this.tasks,
      announcedApprovals: this.announcedApprovals,
      nextTaskNumber: this.nextTaskNumber,
      pendingNotices: this.pendingNotices,
      pendingMessages: this.pendingMessages,
      runTurns: this.turnsThisRun,
      answers: this.answers,
      // Only the recent transcript travels: the whole conversation is in the conversation store.
      transcript: this.transcript.slice(-carriedTranscriptEntries),
    };
  }
}

function listingState(state: TaskRecord['state']): 'running' | 'completed' | 'failed' | 'cancelled' {
  switch (state) {
    case 'completed':
      return 'completed';
    case 'cancelled':
      return 'cancelled';
    case 'failed':
    case 'max_turns':
    case 'budget':
      return 'failed';
    default:
      return 'running';
  }
}

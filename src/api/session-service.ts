import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { ErrandConfig } from '../settings/config';
import type { AckNoticesInput, CallToolInput, CallToolResult } from '../contracts/mcp-session';
import type { TextPart } from '../contracts/agent-wire';
import type { SessionInput } from '../contracts/session';
import type { ApprovalInput, CancelInput, PendingApproval, SendMessageInput, SendMessageResult, TranscriptView } from '../contracts/subagent-messages';
import { livePartial } from '../contracts/live-text';
import { messageNames } from '../contracts/wire-names';
import { errandWorkflowId } from '../contracts/workflow-ids';
import type { SubagentPeek } from '../contracts/subagent-result';
import type { CapSettings } from '../settings/cap-settings';
import { usdToMicro } from '../domain/run-caps';
import { modelEntryId, withDefaultEffort } from '../llm/provider-config';
import { mcpSessionSource, sessionStartOptions } from '../observability/start-options';
import { approversFor } from '../tools/tool-policy';
import { mcpToolsWithEffects, stillRunningText } from '../domain/mcp-session-tools';
import type { McpSessionToolName } from '../contracts/mcp-session';
import type { BlobStore } from '../activities/blob-store';
import { inboundMessage } from '../activities/inbound-message';
import type { DailyCostCap } from './daily-cost-cap';
import { ApiProblem, ProblemKind } from './problem';
import { UpdateRefused } from './queue-full';
import { updateRefusalProblem } from './update-refusal';
import { idempotentSessionId } from './delegation-ids';
import { startIdempotently, type Idempotency } from './idempotent-start';
import type { TemporalGateway, UpdateOutcome } from './temporal-gateway';
import { sendUpdateAcrossRunChange } from '../temporal/temporal-update-retry';
import { approvalsListDeadlineMs, approvalsListMaxWorkflows, approvalsQueryParallelism, mcpStartVisibilityLagMs, peekQueryTimeoutMs } from '../contracts/limits/api';
import { GrpcCode, isGrpcStatus } from '../temporal/grpc-status';

/** What a caller may set when starting a session. */
export interface StartSessionRequest {
  label?: string | undefined;
  instructions?: string | undefined;
  context?: string | undefined;
  message?: string | undefined;
  maxTurnsPerMessage?: number | undefined;
  maxDepth?: number | undefined;
  /** Tokens the session and its tasks may use. */
  tokenBudget?: number | undefined;
  /** Wall-clock seconds the session may run (at most the operator's `ERRAND_MAX_TIME_BUDGET_SECS`). */
  timeBudget?: number | undefined;
  /** US dollars the session and its tasks may spend (at most the operator's `ERRAND_MAX_COST_BUDGET_USD`). */
  costBudgetUsd?: number | undefined;
  /** An MCP session: no model of its own, its MCP client calls the tools (SEMANTICS §6). */
  mcp?: boolean | undefined;
}

/**
 * A session's time and cost caps: what the request asks for (the route refused more than the operator's),
 * else the operator's ceiling; `Math.min` keeps the ceiling for any other caller.
 */
function sessionCaps(request: StartSessionRequest, operator: CapSettings): { timeBudgetMs?: number; costBudgetMicroUsd?: number } {
  const time = request.timeBudget !== undefined ? request.timeBudget * 1_000 : undefined;
  const cost = request.costBudgetUsd !== undefined ? usdToMicro(request.costBudgetUsd) : undefined;
  const timeBudgetMs = time === undefined ? operator.timeBudgetMs : Math.min(time, operator.timeBudgetMs ?? time);
  const costBudgetMicroUsd = cost === undefined ? operator.costBudgetMicroUsd : Math.min(cost, operator.costBudgetMicroUsd ?? cost);
  return { ...(timeBudgetMs !== undefined ? { timeBudgetMs } : {}), ...(costBudgetMicroUsd !== undefined ? { costBudgetMicroUsd } : {}) };
}

/** Whether the configured entry of `route`'s model carries prices. */
function modelHasPrices(providers: ErrandConfig['providers'], route: { provider: string; model: string }): boolean {
  const entry = providers.find((provider) => provider.name === route.provider)?.models.find((candidate) => modelEntryId(candidate) === route.model);
  return entry !== undefined && typeof entry !== 'string' && entry.prices !== undefined;
}

function notFound(kind: string, id: string): ApiProblem {
  return new ApiProblem(404, ProblemKind.notFound, `No such ${kind}`, { detail: `${kind} ${id} does not exist for this API key` });
}

function updateRejection(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The value of a completed update; a refused one is thrown as {@link UpdateRefused}. */
function updateValue(outcome: UpdateOutcome): unknown {
  if (outcome.stage === 'failed') throw new UpdateRefused(outcome.message, outcome.failureType);
  return outcome.stage === 'completed' ? outcome.value : undefined;
}

/** How one MCP tool call is sent (routes/mcp-routes.ts and `errand mcp`). */
export interface ToolCallOptions {
  /**
   * The JSON-RPC id of the client's request. A call that changes something (delegate, send_message) sent
   * again with the same id, tool and arguments is the same update, so a retried request never starts a
   * second task; a read (load, list_subagent_models) runs again.
   */
  requestId?: string | number | undefined;
  /** Longest wait for the call's result; past it the answer says the call is still running. Unbounded when absent. */
  waitMs?: number | undefined;
  /** The caller has just checked that the session is the tenant's and running (one describe per request). */
  checked?: boolean | undefined;
}

/**
 * The update id of an MCP tool call: random for a read, and for a call that changes something derived
 * from the session, the request id and a hash of the tool and its arguments (so a client's retry is the
 * same update, and a request id used again for another call is not).
 */
export function toolCallUpdateId(sessionId: string, input: CallToolInput, requestId: string | number | undefined): string {
  if (requestId === undefined || !mcpToolsWithEffects.includes(input.name as McpSessionToolName)) return randomUUID();
  const hash = createHash('sha256').update(JSON.stringify([sessionId, requestId, input.name, input.arguments])).digest('hex');
  return `mcp-call-${hash.slice(0, 40)}`;
}

/**
 * Parent sessions and approvals through the API: start a session, send it messages, read its transcript,
 * and list / decide the tool calls that wait for a person. Every read or write checks that the workflow
 * belongs to the caller's tenant; anything else is a 404.
 */
export class SessionService {
  /**
   * @param workingDirFor where a tenant's sessions work (`<working root>/<tenant>`; see tenant-working-dir.ts).
   * @param blobs the workers' blob store, for long messages (inline when absent).
   */
  constructor(
    /** Temporal, over its HTTP API or the SDK (temporal-gateway-factory.ts). */
    private readonly gateway: TemporalGateway,
    private readonly config: ErrandConfig,
    private readonly workingDirFor: (tenant: string) => string,
    /** Where long messages are stored so only their key passes through history. */
    private readonly blobs?: BlobStore,
    /** The operator's daily cost cap per tenant: a start holds part of it, a message is refused at it. */
    private readonly dailyCap?: DailyCostCap,
  ) {}

  /** MCP sessions this process started lately, by id: counted until visibility surely lists them. */
  private readonly recentMcpStarts = new Map<string, { tenant: string; at: number }>();
  /** The last MCP session start of each tenant on this process, which the next one waits for. */
  private readonly mcpStartTurns = new Map<string, Promise<void>>();

  /**
   * Starts a session workflow for a tenant. The route has already refused limits over the operator's
   * (request-limits.ts); the `Math.min` keeps that true for any other caller of this method.
   */
  async start(tenant: string, request: StartSessionRequest, idempotency?: Idempotency): Promise<{ id: string; runId: string; created: boolean }> {
    const workflowId = idempotency ? idempotentSessionId(tenant, idempotency.key) : errandWorkflowId(randomBytes(8).toString('hex'));
    const defaultModel = this.config.defaultModel;
    // An MCP session calls no model (its client's model calls the tools): it needs none, and its delegations
    // choose theirs at planning on the worker, which says so when none can be chosen.
    if (!defaultModel && !request.mcp) {
      throw new ApiProblem(422, ProblemKind.invalidDelegation, 'No model is configured', { detail: 'set ERRAND_DEFAULT_MODEL ("<provider>/<model>") or configure providers' });
    }
    const route = defaultModel ? withDefaultEffort(this.config.providers, defaultModel) : undefined;
    const caps = sessionCaps(request, this.config.caps);
    if (route && caps.costBudgetMicroUsd !== undefined && !modelHasPrices(this.config.providers, route)) {
      throw new ApiProblem(422, ProblemKind.invalidDelegation, 'A cost cap needs a model with prices', {
        detail: `costBudgetUsd: the session's model ${route.provider}/${route.model} has no prices in the provider configuration, so the cost of its calls is unknown; leave costBudgetUsd out or give the model entry prices`,
      });
    }
    const input: SessionInput = {
      label: request.label ?? (request.mcp ? 'MCP session' : 'API session'),
      // A session thinks as hard as its model's entry says by default (its defaultReasoningEffort).
      ...(route ? { route } : {}),
      toolsets: ['developer', ...this.config.tools.mcpServers.map((server) => server.name)],
      workingDir: this.workingDirFor(tenant),
      system: { ...(request.instructions ? { instructions: request.instructions } : {}), ...(request.context ? { context: request.context } : {}) },
      maxTurnsPerMessage: Math.min(request.maxTurnsPerMessage ?? this.config.sessionMaxTurns, this.config.sessionMaxTurns),
      maxDepth: Math.min(request.maxDepth ?? this.config.subagent.maxDepth, this.config.subagent.maxDepth),
      tenant,
      tasks: this.config.tasks,
      activity: this.config.subagent.activity,
      approvalTimeoutMs: this.config.approvalTimeoutMs,
      idleTimeoutMs: this.config.sessionIdleTimeoutMs,
      approvers: approversFor(this.config.toolPolicy),
      ...(request.tokenBudget !== undefined ? { tokenBudget: request.tokenBudget } : {}),
      ...caps,
      ...(request.message ? { initialMessage: request.message } : {}),
      ...(request.mcp ? { mcp: true } : {}),
    };
    // An MCP session makes no model call of its own (its tasks' calls are checked by the workers): it holds nothing.
    if (request.mcp) await this.dailyCap?.check(tenant);
    else await this.dailyCap?.hold(tenant, workflowId, input.costBudgetMicroUsd);
    const visible = sessionStartOptions(input, { workflowId, tenant, startedBy: 'api' });
    const start = { workflowType: 'sessionWorkflow', workflowId, taskQueue: this.config.temporal.taskQueue, args: [input], visible };
    if (idempotency) return { id: workflowId, ...(await startIdempotently(this.gateway, start, tenant, idempotency, 'session')) };
    const { runId } = await this.gateway.start(start);
    return { id: workflowId, runId, created: true };
  }

  private async owned(tenant: string, id: string, kind: 'session' | 'any'): Promise<{ running: boolean }> {
    try {
      const { attributes, statusName } = await this.gateway.describe(id);
      if (attributes.tenant !== tenant) throw notFound(kind === 'session' ? 'session' : 'workflow', id);
      if (kind === 'session' && attributes.kind !== 'session') throw notFound('session', id);
      return { running: statusName === 'RUNNING' };
    } catch (error) {
      if (isGrpcStatus(error, GrpcCode.notFound)) throw notFound(kind === 'session' ? 'session' : 'workflow', id);
      throw error;
    }
  }

  /** The session's state, transcript and tasks. */
  async get(tenant: string, id: string): Promise<{ id: string; running: boolean; transcript: TranscriptView; peek: SubagentPeek & { partial?: ReturnType<typeof livePartial> } & Record<string, unknown> }> {
    const { running } = await this.owned(tenant, id, 'session');
    // With a deadline, as DelegationService.peek: a query is answered by a worker, which may be absent.
    let transcript: TranscriptView;
    let peek: SubagentPeek;
    try {
      // Both queries end (answer, fail or pass the deadline) before the request is answered: a query still
      // retrying after its sibling failed would outlive the request (and the connection, at shutdown).
      const [transcriptRead, peekRead] = await Promise.allSettled([
        this.gateway.query(id, messageNames.transcriptQuery, [], peekQueryTimeoutMs),
        this.gateway.query(id, messageNames.peekQuery, [], peekQueryTimeoutMs),
      ]);
      if (transcriptRead.status === 'rejected') throw transcriptRead.reason;
      if (peekRead.status === 'rejected') throw peekRead.reason;
      [transcript, peek] = [transcriptRead.value as TranscriptView, peekRead.value as SubagentPeek];
    } catch (error) {
      if (!isGrpcStatus(error, GrpcCode.deadlineExceeded)) throw error;
      throw new ApiProblem(503, ProblemKind.unavailable, 'The session did not answer', {
        detail: `no worker answered session ${id} within ${peekQueryTimeoutMs} ms; retry later`,
        headers: { 'retry-after': '5' },
      });
    }
    // Described after the queries, so a turn that ended in between shows its answer, not its partial text.
    const live = running ? await this.gateway.describe(id).then((described) => described.liveText, () => undefined) : undefined;
    return { id, running, transcript, peek: { ...peek, ...(live ? { partial: livePartial(live) } : {}) } };
  }

  /** Sends a user message; answers once the session has durably accepted it. */
  async sendMessage(tenant: string, id: string, message: string, updateId: string = randomUUID()): Promise<{ id: string; accepted: true; queuedTurns: number }> {
    const { running } = await this.owned(tenant, id, 'session');
    if (!running) throw new ApiProblem(409, ProblemKind.conflict, 'The session has ended', { detail: `session ${id} takes no more messages` });
    await this.dailyCap?.check(tenant);
    try {
      const inbound: SendMessageInput = await inboundMessage(this.blobs, message, { from: `api:${tenant}` });
      const outcome = await sendUpdateAcrossRunChange(() => this.gateway.update(id, messageNames.sendMessageUpdate, inbound, { updateId, waitFor: 'completed' }));
      const result = updateValue(outcome) as SendMessageResult;
      return { id, accepted: true, queuedTurns: result.queuedTurns };
    } catch (error) {
      if (error instanceof UpdateRefused) throw updateRefusalProblem(error, { conflict: 'The message was not accepted', ended: 'The session has ended' });
      throw new ApiProblem(409, ProblemKind.conflict, 'The message was not accepted', { detail: updateRejection(error) });
    }
  }

  /**
   * Runs one orchestration tool of an MCP session (the `callTool` update) and returns its result with the
   * notices waiting for the client. A refused call (unknown tool, not an MCP session, ended) is a conflict.
   */
  async callTool(tenant: string, id: string, input: CallToolInput, options: ToolCallOptions = {}): Promise<CallToolResult> {
    if (!options.checked) {
      const { running } = await this.owned(tenant, id, 'session');
      if (!running) throw new ApiProblem(409, ProblemKind.conflict, 'The session has ended', { detail: `session ${id} takes no more tool calls` });
    }
    // One id for every attempt: a retry after a continue-as-new (or the client's own retry of a call with
    // effects) is the same call, never a second one.
    // A message to a continuable task makes model calls: refused at the cap like a session's message.
    if (input.name === 'send_message') await this.dailyCap?.check(tenant);
    const updateId = toolCallUpdateId(id, input, options.requestId);
    const waitMs = options.waitMs;
    try {
      const outcome = await sendUpdateAcrossRunChange(() => this.gateway.update(id, messageNames.callToolUpdate, input, { updateId, waitFor: 'completed', ...(waitMs !== undefined ? { timeoutMs: waitMs } : {}) }));
      // No result within the wait: the call goes on in the session, and its notices stay there for the next call.
      if (outcome.stage === 'accepted') return { parts: [stillRunningText(input.name, input.arguments, waitMs ?? 0)], isError: false, notices: [] };
      const result = updateValue(outcome) as CallToolResult;
      // The answer is in hand: the session may drop the notices it carries. An acknowledgement that fails
      // leaves them for the next call (at least once).
      if (result.noticesUpTo !== undefined) await this.gateway.signal(id, messageNames.ackNoticesSignal, { upTo: result.noticesUpTo } satisfies AckNoticesInput).catch(() => undefined);
      return result;
    } catch (error) {
      if (!(error instanceof UpdateRefused)) throw error;
      throw updateRefusalProblem(error, { conflict: 'The tool call was not accepted', ended: 'The session has ended' });
    }
  }

  /** Whether a session of the tenant is running: one describe, no worker needed (404 when it is not the tenant's session). */
  async isRunning(tenant: string, id: string): Promise<boolean> {
    return (await this.owned(tenant, id, 'session')).running;
  }

  /**
   * Starts an MCP session for the tenant unless it already runs `atMost` (`ERRAND_API_MAX_MCP_SESSIONS`);
   * `held` is the count that refused it. The count is Temporal visibility's running sessions joined with
   * the ones this process started in the last moments, which visibility may not list yet, and one tenant's
   * starts on this process wait for each other, so a burst of `initialize`s cannot pass the cap here.
   */
  async startMcpSession(tenant: string, atMost: number): Promise<{ id: string } | { held: number }> {
    const turn = (this.mcpStartTurns.get(tenant) ?? Promise.resolve()).then(async () => {
      const held = await this.runningMcpSessions(tenant, atMost);
      if (held >= atMost) return { held };
      const { id } = await this.start(tenant, { mcp: true });
      this.recentMcpStarts.set(id, { tenant, at: Date.now() });
      return { id };
    });
    const settled = turn.then(() => undefined, () => undefined);
    this.mcpStartTurns.set(tenant, settled);
    void settled.then(() => { if (this.mcpStartTurns.get(tenant) === settled) this.mcpStartTurns.delete(tenant); });
    return turn;
  }

  /** How many MCP sessions of the tenant run, up to `atMost`: visibility's list and this process's recent starts. */
  private async runningMcpSessions(tenant: string, atMost: number): Promise<number> {
    const now = Date.now();
    const recent: string[] = [];
    for (const [id, start] of this.recentMcpStarts) {
      if (now - start.at > mcpStartVisibilityLagMs) this.recentMcpStarts.delete(id);
      else if (start.tenant === tenant) recent.push(id);
    }
    const query = `ErrandTenant = '${tenant.replace(/'/g, "\\'")}' AND ErrandKind = 'session' AND ErrandSource = '${mcpSessionSource}' AND ExecutionStatus = 'Running'`;
    const listed = (await this.gateway.list(query, atMost + recent.length)).executions.map((execution) => execution.workflowId);
    return new Set([...listed, ...recent]).size;
  }

  /** The notices an MCP session holds for its client's next tool result (read, not taken). */
  async pendingNotices(tenant: string, id: string): Promise<TextPart[][]> {
    await this.owned(tenant, id, 'session');
    // The SDK's query has no deadline of its own here; the gateway's is the attempt timeout.
    return (await this.gateway.query(id, messageNames.pendingNoticesQuery, [], peekQueryTimeoutMs)) as TextPart[][];
  }

  /**
   * Cancels a session: its run stops, every task under it is cancelled, and it ends `cancelled`. Answers
   * once the cancel signal is recorded; a session that has already ended is a conflict.
   */
  async cancel(tenant: string, id: string, reason: string | undefined): Promise<{ id: string; cancelling: true }> {
    const { running } = await this.owned(tenant, id, 'session');
    this.recentMcpStarts.delete(id);
    const ended = () => new ApiProblem(409, ProblemKind.conflict, 'The session has ended', { detail: `session ${id} is not running` });
    if (!running) throw ended();
    try {
      const input: CancelInput = { reason: reason ?? `cancelled through the API by ${tenant}` };
      await this.gateway.signal(id, messageNames.cancelSignal, input);
    } catch (error) {
      // The session ended between the describe and the signal (a cancel already on its way, its idle
      // alarm, a terminate): Temporal answers NOT_FOUND "workflow execution already completed".
      if (isGrpcStatus(error, GrpcCode.notFound)) throw ended();
      throw error;
    }
    return { id, cancelling: true };
  }

  /**
   * Tool calls of the tenant's running workflows that wait for an approval (Temporal visibility). The
   * workflows are queried a few at a time, all within one deadline; one that does not answer in time (or
   * ended in between) has nothing to show.
   */
  async listApprovals(tenant: string): Promise<PendingApproval[]> {
    const query = `ErrandTenant = '${tenant.replace(/'/g, "\\'")}' AND ErrandStatus = 'waiting_approval' AND ExecutionStatus = 'Running'`;
    const deadline = Date.now() + approvalsListDeadlineMs;
    // Bounded: one page of waiting workflows is plenty for a person.
    const ids = (await this.gateway.list(query, approvalsListMaxWorkflows)).executions.map((execution) => execution.workflowId).slice(0, approvalsListMaxWorkflows);
    const approvals: PendingApproval[] = [];
    let next = 0;
    const queryNext = async (): Promise<void> => {
      for (let id = ids[next++]; id !== undefined; id = ids[next++]) {
        const workflowId = id;
        try {
          const peek = (await this.gateway.query(workflowId, messageNames.peekQuery, [], Math.max(1, deadline - Date.now()))) as SubagentPeek;
          approvals.push(...(peek.pendingApprovals ?? []));
        } catch {
          // Ended between the listing and the query, or no worker answered before the deadline.
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(approvalsQueryParallelism, ids.length) }, queryNext));
    return approvals.sort((a, b) => a.requestedAt - b.requestedAt);
  }

  /** Approves or denies a pending tool call. The approval id names its workflow. */
  async decide(tenant: string, approvalId: string, decision: 'approve' | 'deny', reason: string | undefined): Promise<{ id: string; decision: 'approve' | 'deny' }> {
    const match = /^(.+):(\d+):(\d+)$/.exec(approvalId);
    if (!match?.[1]) throw new ApiProblem(404, ProblemKind.notFound, 'No such approval', { detail: `"${approvalId}" is not an approval id (<workflow id>:<message>:<call>)` });
    const workflowId = match[1];
    await this.owned(tenant, workflowId, 'any');
    try {
      const updateId = randomUUID();
      const input: ApprovalInput = { approvalId, decision, by: `api:${tenant}`, ...(reason ? { reason } : {}) };
      updateValue(await sendUpdateAcrossRunChange(() => this.gateway.update(workflowId, messageNames.approvalUpdate, input, { updateId, waitFor: 'completed' })));
    } catch (error) {
      if (error instanceof UpdateRefused) throw updateRefusalProblem(error, { conflict: 'The approval is not pending' });
      throw new ApiProblem(409, ProblemKind.conflict, 'The approval is not pending', { detail: updateRejection(error) });
    }
    return { id: approvalId, decision };
  }
}

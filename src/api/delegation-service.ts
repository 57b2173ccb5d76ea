import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  peekSchema,
  subagentResultSchema,
  type DelegationStatus,
  type DelegationSummary,
  type ListDelegationsResponse,
  type PeekView,
  type ResultResponse,
  type SubagentResultView,
} from '../contracts/api';
import { livePartial } from '../contracts/live-text';
import { peekQueryTimeoutMs } from '../contracts/limits';
import type { SendMessageInput, SendMessageResult, CancelInput } from '../contracts/subagent-messages';
import type { SourceSummary, SubagentInput } from '../contracts/subagent';
import { messageNames } from '../contracts/wire-names';
import { isOwnedSubagent, peekDurations } from './delegation-facts';
import { listDelegations, type ListDelegationsFilters } from './delegation-listing';
import { summaryOf, type ExecutionFacts } from './execution-facts';
import { GrpcCode, isGrpcStatus } from '../grpc-status';
import { idempotentDelegationId, newDelegationId } from './delegation-ids';
import { startIdempotently, type Idempotency } from './idempotent-start';
import { sendUpdateAcrossRunChange } from '../temporal-update-retry';

export { deriveState } from './delegation-facts';
import { subagentStartOptions } from '../observability/start-options';
import { ApiProblem, delegationNotFound, ProblemKind } from './problem';
import { queueFullProblem, UpdateRefused } from './queue-full';
import type { DailyCostCap } from './daily-cost-cap';
import type { TemporalGateway, WorkflowFacts } from './temporal-gateway';
import type { BlobStore } from '../activities/blob-store';
import { inboundMessage } from '../activities/inbound-message';
import { withWholeOutput } from './whole-output';

/** A workflow's result as it may come: a child's is slimmed for its parent (`structuredCut`, src/domain/child-result.ts). */
const slimResultSchema = subagentResultSchema.extend({ structuredCut: z.boolean().optional() });

/**
 * What the API does with Temporal: start a subagent workflow, describe, peek, wait for, cancel, message
 * and list delegations — always within one tenant. A delegation of another tenant is reported exactly like
 * one that does not exist (404), so ids reveal nothing across tenants. Temporal is reached through a
 * {@link TemporalGateway}: its HTTP API or the SDK's gRPC client (decision 0026).
 */

/** Workflow type name of the subagent workflow. */
export const subagentWorkflowType = 'subagentWorkflow';

/** Settings of a {@link DelegationService}. */
export interface DelegationServiceOptions {
  /** Temporal, over its HTTP API or the SDK (temporal-gateway-factory.ts). */
  gateway: TemporalGateway;
  taskQueue: string;
  /** Who starts workflows, for the static details (e.g. "HTTP API", "errand CLI"). */
  startedBy: string;
  peekTimeoutMs?: number;
  /** Where long messages are stored so only their key passes through history (the workers' blob store). */
  blobs?: BlobStore;
  /** The operator's daily cost cap per tenant: a start holds part of it, a message is refused at it. */
  dailyCap?: DailyCostCap;
}

/** Arguments of {@link DelegationService.start}. */
export interface StartDelegationArguments {
  tenant: string;
  input: SubagentInput;
  source?: SourceSummary;
  /**
   * With an Idempotency-Key: the key, and the request's fingerprint to refuse the key reused for a different
   * request (kept in the workflow's memo). Without one, nothing is kept: a plain start needs neither.
   */
  idempotency?: Idempotency;
}


function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A delegation of the asking tenant, as described. */
export interface OwnedDelegation {
  facts: ExecutionFacts;
  summary: string | null;
  description: WorkflowFacts;
}

/** Temporal operations of the API, tenant-scoped. */
export class DelegationService {
  private readonly options: DelegationServiceOptions;

  constructor(options: DelegationServiceOptions) {
    this.options = options;
  }

  /**
   * Starts a subagent workflow. With an Idempotency-Key the workflow id is derived from tenant and key,
   * and Temporal's policies make a retry land on the same workflow: USE_EXISTING while it runs,
   * REJECT_DUPLICATE once it closed (we then answer with that closed delegation).
   */
  async start(args: StartDelegationArguments): Promise<{ id: string; runId: string; created: boolean }> {
    const { input, source, tenant, idempotency } = args;
    const { gateway } = this.options;
    const workflowId = idempotency === undefined ? newDelegationId() : idempotentDelegationId(tenant, idempotency.key);
    await this.options.dailyCap?.hold(tenant, workflowId, input.costBudgetMicroUsd);
    const visible = subagentStartOptions({ ...input, tenant }, { workflowId, tenant, startedBy: this.options.startedBy, ...(source ? { source } : {}) });
    const start = { workflowType: subagentWorkflowType, workflowId, taskQueue: this.options.taskQueue, args: [{ ...input, tenant }] as [SubagentInput], visible };
    if (idempotency === undefined) {
      const { runId } = await gateway.start(start);
      return { id: workflowId, runId, created: true };
    }
    const { runId, created } = await startIdempotently(gateway, start, tenant, idempotency, 'delegation');
    return { id: workflowId, runId, created };
  }

  /** Status of a delegation: search attributes, Temporal status, summary and a live peek. */
  async status(tenant: string, id: string): Promise<DelegationStatus> {
    const { facts, summary, description } = await this.describeOwned(tenant, id);
    const peek = await this.peek(description);
    return { ...summaryOf(facts), summary, ...peek };
  }

  /** The state of a delegation (404 unless it is the tenant's). */
  async state(tenant: string, id: string): Promise<DelegationSummary> {
    const { facts } = await this.describeOwned(tenant, id);
    return summaryOf(facts);
  }

  /**
   * The result, waiting up to `waitMs` for a running delegation. Not done in time: the state and a peek.
   */
  async result(tenant: string, id: string, waitMs: number): Promise<ResultResponse> {
    const { facts, description } = await this.describeOwned(tenant, id);
    const running = facts.statusName === 'RUNNING';
    if (!running || waitMs > 0) {
      const result = await this.awaitResult(facts, running ? waitMs : peekQueryTimeoutMs);
      if (result) return { id, done: true, result };
    }
    const latest = running && waitMs > 0 ? await this.describeOwned(tenant, id) : { facts, description };
    const peek = await this.peek(latest.description);
    return { id, done: false, state: summaryOf(latest.facts).state, ...peek };
  }

  /** Sends the cancel signal to a running delegation; an ended one is left as it is. */
  async cancel(tenant: string, id: string, reason: string | undefined): Promise<{ id: string; cancelRequested: boolean; state: DelegationSummary['state'] }> {
    const { facts } = await this.describeOwned(tenant, id);
    const state = summaryOf(facts).state;
    if (facts.statusName !== 'RUNNING') return { id, cancelRequested: false, state };
    try {
      const input: CancelInput = reason === undefined ? {} : { reason };
      await this.options.gateway.signal(id, messageNames.cancelSignal, input);
    } catch (error) {
      // It ended between describe and signal: nothing left to cancel.
      if (isGrpcStatus(error, GrpcCode.notFound)) return { id, cancelRequested: false, state: (await this.state(tenant, id)).state };
      throw error;
    }
    return { id, cancelRequested: true, state };
  }

  /**
   * Delivers a message to a continuable delegation through the `sendMessage` update, returning once the
   * workflow accepted it. 409 when the workflow rejects it (not continuable) or it has ended.
   */
  async sendMessage(tenant: string, id: string, message: string, updateId: string | undefined): Promise<{ id: string; accepted: true; updateId: string; queuedTurns?: number }> {
    const { facts } = await this.describeOwned(tenant, id);
    const ended = (detail: string) => new ApiProblem(409, ProblemKind.conflict, 'The delegation cannot take messages', { detail });
    if (facts.statusName !== 'RUNNING') throw ended(`delegation ${id} has ended (${summaryOf(facts).state}); messages go only to a running continuable delegation`);
    await this.options.dailyCap?.check(tenant);
    try {
      const inbound: SendMessageInput = await inboundMessage(this.options.blobs, message, { from: `api:${tenant}`, ...(updateId === undefined ? {} : { messageId: updateId }) });
      // One id for every attempt: a message refused while the run continued as new is sent again, never twice.
      const sentUpdateId = updateId ?? randomUUID();
      // The handler only queues the message, so an accepted update completes at once; if it has not within
      // the deadline it was accepted and is still being handled. A rejected one comes back as its failure.
      const outcome = await sendUpdateAcrossRunChange(() =>
        this.options.gateway.update(id, messageNames.sendMessageUpdate, inbound, { updateId: sentUpdateId, waitFor: 'completed', timeoutMs: this.options.peekTimeoutMs ?? peekQueryTimeoutMs }),
      );
      if (outcome.stage === 'failed') throw new UpdateRefused(outcome.message, outcome.failureType);
      if (outcome.stage === 'accepted') return { id, accepted: true, updateId: sentUpdateId };
      return { id, accepted: true, updateId: sentUpdateId, queuedTurns: (outcome.value as SendMessageResult).queuedTurns };
    } catch (error) {
      const full = queueFullProblem(error);
      if (full) throw full;
      if (error instanceof UpdateRefused) throw ended(`the delegation refused the message: ${error.message}`);
      if (isGrpcStatus(error, GrpcCode.notFound)) throw ended(`delegation ${id} has ended; messages go only to a running continuable delegation`);
      throw error;
    }
  }

  /** Lists the tenant's delegations with a visibility query on the search attributes, one page at a time. */
  async list(tenant: string, filters: ListDelegationsFilters): Promise<ListDelegationsResponse> {
    return listDelegations(this.options.gateway, tenant, filters);
  }

  /** Describes a workflow and checks it is a subagent of this tenant; anything else is 404. */
  async describeOwned(tenant: string, id: string): Promise<OwnedDelegation> {
    let description: WorkflowFacts;
    try {
      description = await this.options.gateway.describe(id);
    } catch (error) {
      if (isGrpcStatus(error, GrpcCode.notFound)) throw delegationNotFound(id);
      throw error;
    }
    if (!isOwnedSubagent(description.attributes, tenant)) throw delegationNotFound(id);
    const facts: ExecutionFacts = {
      workflowId: description.workflowId,
      runId: description.runId,
      statusName: description.statusName,
      startTime: description.startTime,
      closeTime: description.closeTime,
      attributes: description.attributes,
    };
    return { facts, summary: description.summary ?? null, description };
  }

  /**
   * Peek with a deadline: a closed workflow is answered by a worker replaying it, which may be absent.
   * While a model call streams, the text it has written so far is added as `partial`: `description` was
   * taken before the query; when it shows text, the workflow is described again after the query, so a turn
   * that ended in between does not show its partial text next to its answer.
   */
  async peek(description: WorkflowFacts): Promise<{ peek: PeekView | null; peekError?: string }> {
    const timeoutMs = this.options.peekTimeoutMs ?? peekQueryTimeoutMs;
    try {
      const answer: unknown = await this.options.gateway.query(description.workflowId, messageNames.peekQuery, [], timeoutMs);
      const parsed = peekSchema.safeParse(answer);
      if (!parsed.success) return { peek: null, peekError: `the peek answer has an unexpected shape: ${parsed.error.issues[0]?.message ?? ''}` };
      // Durations are computed here, with the wall clock: a query's own clock stands still between workflow tasks.
      const live = description.liveText ? await this.options.gateway.describe(description.workflowId).then((again) => again.liveText, () => undefined) : undefined;
      return { peek: { ...parsed.data, ...peekDurations(parsed.data, description.closeTime?.getTime(), Date.now()), ...(live ? { partial: livePartial(live) } : {}) } };
    } catch (error) {
      return { peek: null, peekError: `no peek: ${errorMessage(error)}` };
    }
  }

  /** Waits up to `waitMs` for the result; undefined when the wait ran out first. */
  private async awaitResult(facts: ExecutionFacts, waitMs: number): Promise<SubagentResultView | undefined> {
    const end = await this.options.gateway.awaitEnd(facts.workflowId, facts.runId, waitMs);
    if (end === undefined) return undefined;
    if (end.kind === 'completed') {
      const parsed = slimResultSchema.safeParse(end.value);
      if (parsed.success) return withWholeOutput(parsed.data, this.options.blobs);
      throw new Error(`delegation ${facts.workflowId} returned a result of an unexpected shape: ${parsed.error.issues[0]?.message ?? ''}`);
    }
    // The run ended without returning a result (terminated, timed out, cancelled from outside, crashed).
    const ended = await this.options.gateway.describe(facts.workflowId);
    return {
      workflowId: facts.workflowId,
      status: end.cancelled ? 'cancelled' : 'failed',
      output: '',
      partialOutput: '',
      diagnostic: `${ended.statusName.toLowerCase()}: ${end.message}`,
      turns: ended.attributes.turns ?? 0,
      toolCalls: 0,
      usage: { inputTokens: 0, outputTokens: 0 },
      durationMs: ended.closeTime && ended.startTime ? ended.closeTime.getTime() - ended.startTime.getTime() : 0,
    };
  }
}

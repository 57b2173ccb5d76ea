import { randomUUID } from 'node:crypto';
import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
} from '@temporalio/client';
import { CancelledFailure } from '@temporalio/common';
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
import { peekQueryTimeoutMs } from '../contracts/limits';
import { searchAttributes } from '../contracts/search-attributes';
import { cancelSignal, peekQuery, sendMessageUpdate } from '../contracts/subagent-messages';
import type { SourceSummary, SubagentInput } from '../contracts/subagent';
import type { SubagentResult } from '../contracts/subagent-result';
import { isOwnedSubagent, peekDurations } from './delegation-facts';
import { listDelegations, type ListDelegationsFilters } from './delegation-listing';
import { attributeValues, summaryOf, type ExecutionFacts } from './execution-facts';
import { isGrpcStatus } from '../grpc-status';
import { idempotentDelegationId, newDelegationId } from './delegation-ids';
import { sendUpdateAcrossRunChange } from '../temporal-update-retry';

export { deriveState } from './delegation-facts';
import { subagentStartOptions } from '../observability/start-options';
import { ApiProblem, delegationNotFound, ProblemKind } from './problem';
import { queueFullProblem } from './queue-full';
import type { TemporalClientProvider } from './temporal-client-provider';
import type { TemporalHttpStarter } from './temporal-http-start';
import type { BlobStore } from '../activities/blob-store';
import { inboundMessage } from '../activities/inbound-message';
import { currentLiveText, livePartial } from '../observability/live-text-reader';

/**
 * What the API does with Temporal: start a subagent workflow, describe, peek, wait for, cancel, message
 * and list delegations — always within one tenant. A delegation of another tenant is reported exactly like
 * one that does not exist (404), so ids reveal nothing across tenants.
 */

/** The subagent workflow's signature, named here so the API never imports workflow code. */
type SubagentWorkflow = (input: SubagentInput) => Promise<SubagentResult>;

/** Workflow type name of the subagent workflow. */
export const subagentWorkflowType = 'subagentWorkflow';

/** Settings of a {@link DelegationService}. */
export interface DelegationServiceOptions {
  temporal: TemporalClientProvider;
  namespace: string;
  taskQueue: string;
  /** Who starts workflows, for the static details (e.g. "HTTP API", "errand CLI"). */
  startedBy: string;
  peekTimeoutMs?: number;
  /** Where long messages are stored so only their key passes through history (the workers' blob store). */
  blobs?: BlobStore;
  /** Plain starts go through Temporal's HTTP API when `ERRAND_TEMPORAL_HTTP_URL` is set (temporal-http-start.ts). */
  httpStarter?: TemporalHttpStarter;
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
  idempotency?: { key: string; requestFingerprint: string };
}

/** Memo errand keeps on a delegation it started (JSON). */
const requestMemoSchema = z.object({ fingerprint: z.string(), nonce: z.string() });
const memoKey = 'errandRequest';

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A delegation of the asking tenant, as described. */
export interface OwnedDelegation {
  client: Client;
  handle: WorkflowHandle;
  facts: ExecutionFacts;
  summary: string | null;
  description: WorkflowExecutionDescription;
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
    const workflowId = idempotency === undefined ? newDelegationId() : idempotentDelegationId(tenant, idempotency.key);
    const visible = subagentStartOptions({ ...input, tenant }, { workflowId, tenant, startedBy: this.options.startedBy, ...(source ? { source } : {}) });
    const options = { taskQueue: this.options.taskQueue, workflowId, args: [{ ...input, tenant }] as [SubagentInput], ...visible };
    if (idempotency === undefined && this.options.httpStarter) {
      const { runId } = await this.options.httpStarter.start({ workflowType: subagentWorkflowType, workflowId, taskQueue: options.taskQueue, args: options.args, visible });
      return { id: workflowId, runId, created: true };
    }
    const client = await this.options.temporal.get();
    if (idempotency === undefined) {
      const handle = await client.workflow.start<SubagentWorkflow>(subagentWorkflowType, { ...options, workflowIdConflictPolicy: 'FAIL', workflowIdReusePolicy: 'ALLOW_DUPLICATE' });
      return { id: workflowId, runId: handle.firstExecutionRunId, created: true };
    }
    const nonce = randomUUID();
    try {
      await client.workflow.start<SubagentWorkflow>(subagentWorkflowType, {
        ...options,
        memo: { ...visible.memo, [memoKey]: { fingerprint: idempotency.requestFingerprint, nonce } },
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    // Same key: this start either created the workflow or found the one an earlier request created.
    const description = await client.workflow.getHandle(workflowId).describe();
    if (description.typedSearchAttributes.get(searchAttributes.tenant) !== tenant) {
      throw new ApiProblem(409, ProblemKind.conflict, 'Idempotency-Key conflict', { detail: 'this Idempotency-Key cannot be used; choose another' });
    }
    const memo = requestMemoSchema.safeParse(description.memo?.[memoKey]);
    if (memo.success && memo.data.fingerprint !== idempotency.requestFingerprint) {
      throw new ApiProblem(422, ProblemKind.idempotencyKeyReused, 'Idempotency-Key reused for a different request', {
        detail: `delegation ${workflowId} was started with this Idempotency-Key and a different body; use a new key for a new request`,
        errors: [{ in: 'header', field: 'Idempotency-Key', message: 'already used for a different request' }],
      });
    }
    return { id: workflowId, runId: description.runId, created: memo.success && memo.data.nonce === nonce };
  }

  /** Status of a delegation: search attributes, Temporal status, summary and a live peek. */
  async status(tenant: string, id: string): Promise<DelegationStatus> {
    const { client, handle, facts, summary, description } = await this.describeOwned(tenant, id);
    const peek = await this.peek(client, handle, description);
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
    const { client, handle, facts, description } = await this.describeOwned(tenant, id);
    const running = facts.statusName === 'RUNNING';
    if (!running || waitMs > 0) {
      const result = await this.awaitResult(client, handle, facts, running ? waitMs : peekQueryTimeoutMs);
      if (result) return { id, done: true, result };
    }
    const latest = running && waitMs > 0 ? await this.describeOwned(tenant, id) : { facts, description };
    const peek = await this.peek(client, handle, latest.description);
    return { id, done: false, state: summaryOf(latest.facts).state, ...peek };
  }

  /** Sends the cancel signal to a running delegation; an ended one is left as it is. */
  async cancel(tenant: string, id: string, reason: string | undefined): Promise<{ id: string; cancelRequested: boolean; state: DelegationSummary['state'] }> {
    const { handle, facts } = await this.describeOwned(tenant, id);
    const state = summaryOf(facts).state;
    if (facts.statusName !== 'RUNNING') return { id, cancelRequested: false, state };
    try {
      await handle.signal(cancelSignal, reason === undefined ? {} : { reason });
    } catch (error) {
      // It ended between describe and signal: nothing left to cancel.
      if (error instanceof WorkflowNotFoundError) return { id, cancelRequested: false, state: (await this.state(tenant, id)).state };
      throw error;
    }
    return { id, cancelRequested: true, state };
  }

  /**
   * Delivers a message to a continuable delegation through the `sendMessage` update, returning once the
   * workflow accepted it. 409 when the workflow rejects it (not continuable) or it has ended.
   */
  async sendMessage(tenant: string, id: string, message: string, updateId: string | undefined): Promise<{ id: string; accepted: true; updateId: string; queuedTurns?: number }> {
    const { client, handle, facts } = await this.describeOwned(tenant, id);
    const ended = (detail: string) => new ApiProblem(409, ProblemKind.conflict, 'The delegation cannot take messages', { detail });
    if (facts.statusName !== 'RUNNING') throw ended(`delegation ${id} has ended (${summaryOf(facts).state}); messages go only to a running continuable delegation`);
    try {
      const inbound = await inboundMessage(this.options.blobs, message, { from: `api:${tenant}`, ...(updateId === undefined ? {} : { messageId: updateId }) });
      // One id for every attempt: a message refused while the run continued as new is sent again, never twice.
      const sentUpdateId = updateId ?? randomUUID();
      const update = await sendUpdateAcrossRunChange(() => handle.startUpdate(sendMessageUpdate, { args: [inbound], waitForStage: WorkflowUpdateStage.ACCEPTED, updateId: sentUpdateId }));
      // A rejected update also comes back from startUpdate, with its failure as the outcome; reading the
      // outcome tells the two apart. The handler only queues the message, so an accepted update completes
      // at once; if it has not within the deadline it was accepted and is still being handled.
      try {
        const outcome = await client.withDeadline(Date.now() + (this.options.peekTimeoutMs ?? peekQueryTimeoutMs), () => update.result());
        return { id, accepted: true, updateId: update.updateId, queuedTurns: outcome.queuedTurns };
      } catch (error) {
        if (error instanceof WorkflowUpdateFailedError) throw error;
        return { id, accepted: true, updateId: update.updateId };
      }
    } catch (error) {
      const full = queueFullProblem(error);
      if (full) throw full;
      if (error instanceof WorkflowUpdateFailedError) throw ended(`the delegation refused the message: ${error.cause?.message ?? error.message}`);
      if (error instanceof WorkflowNotFoundError) throw ended(`delegation ${id} has ended; messages go only to a running continuable delegation`);
      throw error;
    }
  }

  /** Lists the tenant's delegations with a visibility query on the search attributes, one page at a time. */
  async list(tenant: string, filters: ListDelegationsFilters): Promise<ListDelegationsResponse> {
    return listDelegations(await this.options.temporal.get(), this.options.namespace, tenant, filters);
  }

  /** Describes a workflow and checks it is a subagent of this tenant; anything else is 404. */
  async describeOwned(tenant: string, id: string): Promise<OwnedDelegation> {
    const client = await this.options.temporal.get();
    const handle = client.workflow.getHandle(id);
    let description;
    try {
      description = await handle.describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError || isGrpcStatus(error, 5)) throw delegationNotFound(id);
      throw error;
    }
    const attributes = description.typedSearchAttributes;
    if (!isOwnedSubagent(attributeValues(attributes), tenant)) throw delegationNotFound(id);
    const facts: ExecutionFacts = {
      workflowId: description.workflowId,
      runId: description.runId,
      statusName: description.status.name,
      startTime: description.startTime,
      closeTime: description.closeTime,
      attributes,
    };
    return { client, handle, facts, summary: (await description.staticSummary()) ?? null, description };
  }

  /**
   * Peek with a deadline: a closed workflow is answered by a worker replaying it, which may be absent.
   * While a model call streams, the text it has written so far is added as `partial` (see {@link currentLiveText}).
   */
  async peek(client: Client, handle: WorkflowHandle, description?: WorkflowExecutionDescription): Promise<{ peek: PeekView | null; peekError?: string }> {
    const timeoutMs = this.options.peekTimeoutMs ?? peekQueryTimeoutMs;
    try {
      const answer: unknown = await client.withDeadline(Date.now() + timeoutMs, () => handle.query(peekQuery));
      const parsed = peekSchema.safeParse(answer);
      if (!parsed.success) return { peek: null, peekError: `the peek answer has an unexpected shape: ${parsed.error.issues[0]?.message ?? ''}` };
      // Durations are computed here, with the wall clock: a query's own clock stands still between workflow tasks.
      const live = description ? await currentLiveText(client, handle, description) : undefined;
      return { peek: { ...parsed.data, ...peekDurations(parsed.data, description?.closeTime?.getTime(), Date.now()), ...(live ? { partial: livePartial(live) } : {}) } };
    } catch (error) {
      return { peek: null, peekError: `no peek: ${errorMessage(error)}` };
    }
  }

  /** Waits up to `waitMs` for the result; undefined when the wait ran out first. */
  private async awaitResult(client: Client, handle: WorkflowHandle, facts: ExecutionFacts, waitMs: number): Promise<SubagentResultView | undefined> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), waitMs);
    try {
      const value: unknown = await client.withAbortSignal(controller.signal, () => handle.result());
      const parsed = subagentResultSchema.safeParse(value);
      if (parsed.success) return parsed.data;
      throw new Error(`delegation ${facts.workflowId} returned a result of an unexpected shape: ${parsed.error.issues[0]?.message ?? ''}`);
    } catch (error) {
      if (controller.signal.aborted) return undefined;
      if (error instanceof WorkflowFailedError) {
        // The run ended without returning a result (terminated, timed out, cancelled from outside, crashed).
        const end = await client.workflow.getHandle(facts.workflowId).describe();
        const cancelled = error.cause instanceof CancelledFailure;
        return {
          workflowId: facts.workflowId,
          status: cancelled ? 'cancelled' : 'failed',
          output: '',
          partialOutput: '',
          diagnostic: `${end.status.name.toLowerCase()}: ${error.cause?.message ?? error.message}`,
          turns: end.typedSearchAttributes.get(searchAttributes.turns) ?? 0,
          toolCalls: 0,
          usage: { inputTokens: 0, outputTokens: 0 },
          durationMs: end.closeTime && end.startTime ? end.closeTime.getTime() - end.startTime.getTime() : 0,
        };
      }
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }
}

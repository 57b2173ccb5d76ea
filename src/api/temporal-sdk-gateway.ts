import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
  type Client,
  type WorkflowExecutionDescription,
} from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, defaultPayloadConverter, type Payload } from '@temporalio/common';
import { GrpcCode, isGrpcStatus } from '../temporal/grpc-status';
import { pendingLiveText } from '../observability/live-text-reader';
import type { ErrandAttributeValues } from './delegation-facts';
import { attributeValues } from './execution-facts';
import type { TemporalClientProvider } from './temporal-client-provider';
import { TemporalCallError, type ListedPage, type TemporalGateway, type UpdateOutcome, type WorkflowEnd, type WorkflowFacts, type WorkflowStart } from './temporal-gateway';

/**
 * {@link TemporalGateway} over the SDK's gRPC client: `errand api` and the CLI's in-process API when no
 * `ERRAND_TEMPORAL_HTTP_URL` is set (an mTLS connection, which the HTTP client cannot present). Loaded with
 * `import()` by temporal-gateway-factory.ts, so a process that talks HTTP never loads the SDK. Its answers
 * are the HTTP gateway's, value for value (test/api/temporal-gateway.test.ts).
 */

/** The SDK's "not found" (a class, or a bare NOT_FOUND ServiceError) as a {@link TemporalCallError}; anything else unchanged. */
function notFoundAsCode(error: unknown): unknown {
  if (error instanceof WorkflowNotFoundError) return new TemporalCallError(error.message, GrpcCode.notFound);
  return error;
}

async function calling<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw notFoundAsCode(error);
  }
}

function failureOutcome(error: WorkflowUpdateFailedError): UpdateOutcome {
  const cause = error.cause;
  return { stage: 'failed', message: cause?.message ?? error.message, failureType: cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined };
}

/** A protobuf timestamp of a raw visibility answer as a Date. */
function timestampToDate(ts: { seconds?: number | Long | string | null; nanos?: number | null } | null | undefined): Date | undefined {
  if (!ts || ts.seconds === undefined || ts.seconds === null) return undefined;
  return new Date(Number(ts.seconds) * 1_000 + Math.floor((ts.nanos ?? 0) / 1_000_000));
}

/** Temporal's execution status enum (temporal.api.enums.v1.WorkflowExecutionStatus) by number. */
const executionStatusNames: Record<number, string> = { 1: 'RUNNING', 2: 'COMPLETED', 3: 'FAILED', 4: 'CANCELLED', 5: 'TERMINATED', 6: 'CONTINUED_AS_NEW', 7: 'TIMED_OUT' };

/** errand's search attributes out of a raw visibility answer (typed ones only, as the SDK's describe reads them). */
function rawAttributes(fields: Record<string, Payload> | null | undefined): ErrandAttributeValues {
  const values: Record<string, unknown> = {};
  for (const [name, payload] of Object.entries(fields ?? {})) {
    try {
      const value: unknown = defaultPayloadConverter.fromPayload(payload);
      values[name] = Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
    } catch {
      // not one of errand's encodings: left out
    }
  }
  const keyword = (name: string) => (typeof values[name] === 'string' ? values[name] : undefined);
  const turns = values.ErrandTurns;
  return {
    kind: keyword('ErrandKind'),
    source: keyword('ErrandSource'),
    parent: keyword('ErrandParent'),
    status: keyword('ErrandStatus'),
    tenant: keyword('ErrandTenant'),
    model: keyword('ErrandModel'),
    turns: typeof turns === 'number' && Number.isInteger(turns) ? turns : undefined,
  };
}

/** How early before its deadline a CANCELLED query still counts as timed out (the channel's timer and ours differ by a tick). */
const deadlineSlackMs = 50;

/** The SDK's gateway around a lazily connected client. */
export class TemporalSdkGateway implements TemporalGateway {
  constructor(
    private readonly temporal: TemporalClientProvider,
    private readonly namespace: string,
  ) {}

  private client(): Promise<Client> {
    return this.temporal.get();
  }

  async start(request: WorkflowStart): Promise<{ runId: string }> {
    const client = await this.client();
    const options = { taskQueue: request.taskQueue, workflowId: request.workflowId, args: [...request.args], ...request.visible };
    try {
      const handle = request.idempotent
        ? await client.workflow.start(request.workflowType, { ...options, memo: { ...(request.visible.memo ?? {}), ...request.idempotent.memo }, workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'REJECT_DUPLICATE' })
        : await client.workflow.start(request.workflowType, { ...options, workflowIdConflictPolicy: 'FAIL', workflowIdReusePolicy: 'ALLOW_DUPLICATE' });
      return { runId: handle.firstExecutionRunId };
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) throw new TemporalCallError(error.message, GrpcCode.alreadyExists);
      throw error;
    }
  }

  async describe(workflowId: string): Promise<WorkflowFacts> {
    const client = await this.client();
    const description: WorkflowExecutionDescription = await calling(() => client.workflow.getHandle(workflowId).describe());
    const running = description.status.name === 'RUNNING';
    return {
      workflowId: description.workflowId,
      runId: description.runId,
      statusName: description.status.name,
      startTime: description.startTime,
      closeTime: description.closeTime,
      attributes: attributeValues(description.typedSearchAttributes),
      memo: { ...(description.memo ?? {}) },
      summary: (await description.staticSummary()) ?? undefined,
      liveText: running ? await pendingLiveText(client.options.loadedDataConverter, description) : undefined,
    };
  }

  async query(workflowId: string, queryName: string, args: readonly unknown[], timeoutMs: number): Promise<unknown> {
    const client = await this.client();
    const deadline = Date.now() + timeoutMs;
    try {
      return await calling(() => client.withDeadline(deadline, () => client.workflow.getHandle(workflowId).query(queryName, ...args)));
    } catch (error) {
      // Under load the channel reports its own deadline as CANCELLED, not DEADLINE_EXCEEDED: the same
      // "nobody answered in time", so callers see one code for it.
      if (isGrpcStatus(error, GrpcCode.cancelled) && Date.now() >= deadline - deadlineSlackMs) throw new TemporalCallError(`no answer to the query ${queryName} on ${workflowId} within ${timeoutMs} ms`, GrpcCode.deadlineExceeded);
      throw error;
    }
  }

  async signal(workflowId: string, signalName: string, arg: unknown): Promise<void> {
    const client = await this.client();
    await calling(() => client.workflow.getHandle(workflowId).signal(signalName, arg));
  }

  async update(workflowId: string, updateName: string, arg: unknown, options: { updateId: string; waitFor: 'accepted' | 'completed'; timeoutMs?: number }): Promise<UpdateOutcome> {
    const client = await this.client();
    const handle = client.workflow.getHandle(workflowId);
    try {
      const update = await calling(() => handle.startUpdate(updateName, { args: [arg], waitForStage: WorkflowUpdateStage.ACCEPTED, updateId: options.updateId }));
      if (options.waitFor === 'accepted') return { stage: 'accepted' };
      const result = () => update.result();
      try {
        const value: unknown = options.timeoutMs === undefined ? await result() : await client.withDeadline(Date.now() + options.timeoutMs, result);
        return { stage: 'completed', value };
      } catch (error) {
        if (error instanceof WorkflowUpdateFailedError) throw error;
        // Accepted; the outcome did not come within the wait.
        if (options.timeoutMs !== undefined) return { stage: 'accepted' };
        throw error;
      }
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError) return failureOutcome(error);
      throw error;
    }
  }

  async list(query: string, pageSize: number, pageToken?: string): Promise<ListedPage> {
    const client = await this.client();
    const response = await client.workflowService.listWorkflowExecutions({
      namespace: this.namespace,
      query,
      pageSize,
      ...(pageToken ? { nextPageToken: Buffer.from(pageToken, 'base64') } : {}),
    });
    const token = response.nextPageToken;
    return {
      executions: response.executions.map((raw) => ({
        workflowId: raw.execution?.workflowId ?? '',
        runId: raw.execution?.runId ?? '',
        statusName: executionStatusNames[raw.status ?? 0] ?? 'UNKNOWN',
        startTime: timestampToDate(raw.startTime),
        closeTime: timestampToDate(raw.closeTime),
        attributes: rawAttributes(raw.searchAttributes?.indexedFields as Record<string, Payload> | null | undefined),
      })),
      nextPageToken: token && token.length > 0 ? Buffer.from(token).toString('base64') : undefined,
    };
  }

  async awaitEnd(workflowId: string, runId: string, waitMs: number): Promise<WorkflowEnd | undefined> {
    const client = await this.client();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), waitMs);
    try {
      const value: unknown = await client.withAbortSignal(controller.signal, () => client.workflow.getHandle(workflowId, runId).result());
      return { kind: 'completed', value };
    } catch (error) {
      if (controller.signal.aborted) return undefined;
      // The run ended without returning a result (terminated, timed out, cancelled from outside, crashed).
      if (error instanceof WorkflowFailedError) return { kind: 'failed', cancelled: error.cause instanceof CancelledFailure, message: error.cause?.message ?? error.message };
      throw notFoundAsCode(error);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    return this.temporal.close();
  }
}

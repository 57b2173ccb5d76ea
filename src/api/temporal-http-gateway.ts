import { randomUUID } from 'node:crypto';
import type { Agent } from 'node:http';
import { hostname } from 'node:os';
import { temporalHttpAttemptTimeoutMs, temporalHttpRetry } from '../contracts/limits/api';
import { GrpcCode } from '../temporal/grpc-status';
import { pendingLiveText } from '../temporal/pending-live-text';
import { plainHttpRequest, PlainHttpTimeout } from '../http/plain-http';
import { temporalHttpStatus } from '../temporal/temporal-http-url';
import type { ExecutionBasics } from './delegation-facts';
import type { ListedPage, TemporalGateway, UpdateOutcome, WorkflowEnd, WorkflowFacts, WorkflowStart } from './temporal-gateway';
import { TemporalCallError } from './temporal-gateway';
import { retryDelayMs, TemporalHttpStarter, type TemporalHttpStartTarget } from './temporal-http-start';
import { errandAttributesOf, executionStatusName, fromJsonPayload, fromJsonPayloads, headerJson, protoTimestamp, toJsonPayloads } from './temporal-json-payloads';
import { traceHeader } from '../observability/start-options';

/**
 * The API's Temporal operations over Temporal's HTTP API (the frontend's grpc-gateway; decision 0026):
 * plain HTTP/1.1 requests over keep-alive connections, canonical proto JSON with payloads in base64
 * (`application/json+no-payload-shorthand`), so neither the SDK, gRPC nor Temporal's protobuf definitions
 * are loaded. Starts go through {@link TemporalHttpStarter} (decision 0019). Starts, signals and updates
 * carry the active trace in their header, as the SDK client's traceHeaderInterceptor adds it. Every other request is
 * idempotent (reads, a signal with its request id, an update with its update id) and is retried on the
 * codes a lost connection or an overloaded frontend answer, as the SDK's gRPC client retries them.
 */

const mediaType = 'application/json+no-payload-shorthand';
/** The SDK client's default identity, so a signal or update looks the same in the history whichever way it came. */
const identity = `${process.pid}@${hostname()}`;
/** How long one long poll of the history may wait before it is asked again (the frontend answers by then anyway). */
const longPollMs = 20_000;
/** Codes retried for an idempotent request: the frontend did not take it, so it is safe to send again. */
const retriedCodes: ReadonlySet<number> = new Set([GrpcCode.unavailable, GrpcCode.resourceExhausted, GrpcCode.aborted]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function record(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

/** Basics of an execution info (describe's `workflowExecutionInfo`, a listing's entry). */
function basicsOf(info: Record<string, unknown>, fallbackId: string): ExecutionBasics {
  const execution = record(info.execution);
  return {
    workflowId: typeof execution.workflowId === 'string' ? execution.workflowId : fallbackId,
    runId: typeof execution.runId === 'string' ? execution.runId : '',
    statusName: executionStatusName(info.status),
    startTime: protoTimestamp(info.startTime),
    closeTime: protoTimestamp(info.closeTime),
  };
}

/** A value that may not decode is shown as absent (as the SDK-side readers treat foreign payloads). */
function decodeOrUndefined(payload: unknown): unknown {
  try {
    return payload === undefined ? undefined : fromJsonPayload(payload);
  } catch {
    return undefined;
  }
}

/** A Temporal Failure's message and ApplicationFailure type. */
function failureOf(failure: unknown): { message: string; failureType: string | undefined } {
  const value = record(failure);
  const type = record(value.applicationFailureInfo).type;
  return { message: typeof value.message === 'string' ? value.message : '', failureType: typeof type === 'string' && type !== '' ? type : undefined };
}

const path = (segment: string) => encodeURIComponent(segment);

/** {@link TemporalGateway} over Temporal's HTTP API. */
export class TemporalHttpGateway implements TemporalGateway {
  private readonly target: TemporalHttpStartTarget;
  private readonly starter: TemporalHttpStarter;
  private agent: Promise<Agent> | undefined;

  constructor(target: TemporalHttpStartTarget) {
    this.target = target;
    this.starter = new TemporalHttpStarter(target);
  }

  private keepAliveAgent(): Promise<Agent> {
    this.agent ??= (this.target.baseUrl.startsWith('https:') ? import('node:https') : import('node:http')).then(({ Agent: KeepAlive }) => new KeepAlive({ keepAlive: true }));
    return this.agent;
  }

  /** One request, answered JSON or a {@link TemporalCallError} with the gRPC code; retried on {@link retriedCodes}. */
  private async send(method: 'GET' | 'POST', route: string, options: { body?: unknown; timeoutMs?: number } = {}): Promise<Record<string, unknown>> {
    const url = `${this.target.baseUrl}/api/v1/namespaces/${path(this.target.namespace)}${route}`;
    const agent = await this.keepAliveAgent();
    const timeoutMs = options.timeoutMs ?? this.target.timeoutMs ?? temporalHttpAttemptTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    for (let attempt = 1; ; attempt += 1) {
      const remaining = Math.max(1, deadline - Date.now());
      // The deadline goes to the server too (grpc-gateway reads Grpc-Timeout), so it gives up when we do.
      const headers: Record<string, string> = { ...this.target.headers, accept: mediaType, 'grpc-timeout': `${remaining}m` };
      if (body !== undefined) headers['content-type'] = mediaType;
      let failure: TemporalCallError;
      try {
        // A second more than the server's deadline: its DEADLINE_EXCEEDED answer, not our cut-off, says what happened.
        const answer = await plainHttpRequest(url, { method, headers, ...(body === undefined ? {} : { body }), agent, timeoutMs: remaining + 1_000 });
        if (answer.status >= 200 && answer.status < 300) {
          const parsed: unknown = answer.text === '' ? {} : JSON.parse(answer.text);
          return record(parsed);
        }
        const status = temporalHttpStatus(answer.text);
        failure = status
          ? new TemporalCallError(status.message, status.code)
          : new TemporalCallError(`${this.target.baseUrl} (ERRAND_TEMPORAL_HTTP_URL) answered HTTP ${answer.status} with no Temporal answer: ${answer.text.slice(0, 200)}`, answer.status === 429 ? GrpcCode.resourceExhausted : answer.status >= 502 && answer.status <= 504 ? GrpcCode.unavailable : GrpcCode.unknown);
      } catch (error) {
        if (error instanceof PlainHttpTimeout) throw new TemporalCallError(`Temporal's HTTP API (${this.target.baseUrl}) did not answer within ${timeoutMs} ms`, GrpcCode.deadlineExceeded);
        const reason = error instanceof Error ? error.message : String(error);
        failure = new TemporalCallError(`Temporal's HTTP API (${this.target.baseUrl}, ERRAND_TEMPORAL_HTTP_URL) cannot be reached: ${reason}`, GrpcCode.unavailable);
      }
      const delay = retryDelayMs(attempt, failure.code);
      if (!retriedCodes.has(failure.code) || attempt >= temporalHttpRetry.maxAttempts || Date.now() + delay >= deadline) throw failure;
      await new Promise((resolveDelay) => setTimeout(resolveDelay, delay));
    }
  }

  async start(request: WorkflowStart): Promise<{ runId: string }> {
    return this.starter.start(request);
  }

  async describe(workflowId: string): Promise<WorkflowFacts> {
    const description = await this.send('GET', `/workflows/${path(workflowId)}`);
    const info = record(description.workflowExecutionInfo);
    const basics = basicsOf(info, workflowId);
    const memoFields = record(record(info.memo).fields);
    const summary = decodeOrUndefined(record(record(description.executionConfig).userMetadata).summary);
    return {
      ...basics,
      attributes: errandAttributesOf(record(info.searchAttributes).indexedFields),
      memo: Object.fromEntries(Object.entries(memoFields).map(([key, payload]) => [key, decodeOrUndefined(payload)])),
      summary: typeof summary === 'string' ? summary : undefined,
      liveText: basics.statusName === 'RUNNING' ? pendingLiveText(description, fromJsonPayloads) : undefined,
    };
  }

  async query(workflowId: string, queryName: string, args: readonly unknown[], timeoutMs: number): Promise<unknown> {
    const answer = await this.send('POST', `/workflows/${path(workflowId)}/query/${path(queryName)}`, {
      body: { execution: { workflowId }, query: { queryType: queryName, ...(args.length > 0 ? { queryArgs: toJsonPayloads(args) } : {}) } },
      timeoutMs,
    });
    if (isRecord(answer.queryRejected)) throw new TemporalCallError(`the query ${queryName} was rejected (workflow status ${executionStatusName(answer.queryRejected.status)})`, GrpcCode.failedPrecondition);
    return fromJsonPayloads(answer.queryResult)[0];
  }

  async signal(workflowId: string, signalName: string, arg: unknown): Promise<void> {
    await this.send('POST', `/workflows/${path(workflowId)}/signal/${path(signalName)}`, {
      body: { workflowExecution: { workflowId }, signalName, input: toJsonPayloads([arg]), identity, requestId: randomUUID(), header: headerJson(traceHeader()) },
    });
  }

  async update(workflowId: string, updateName: string, arg: unknown, options: { updateId: string; waitFor: 'accepted' | 'completed'; timeoutMs?: number }): Promise<UpdateOutcome> {
    const deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    const body = (stage: 'ACCEPTED' | 'COMPLETED') => ({
      workflowExecution: { workflowId },
      request: { meta: { updateId: options.updateId, identity }, input: { name: updateName, args: toJsonPayloads([arg]), header: headerJson(traceHeader()) } },
      waitPolicy: { lifecycleStage: `UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_${stage}` },
    });
    const outcomeOf = (answer: Record<string, unknown>): UpdateOutcome | undefined => {
      const outcome = record(answer.outcome);
      if (isRecord(outcome.failure)) return { stage: 'failed', ...failureOf(outcome.failure) };
      if (outcome.success !== undefined) return { stage: 'completed', value: fromJsonPayloads(outcome.success)[0] };
      return undefined;
    };
    const route = `/workflows/${path(workflowId)}/update/${path(updateName)}`;
    // Accepted first (a rejection comes back at once); then, with the same update id, the outcome.
    const accepted = await this.send('POST', route, { body: body('ACCEPTED'), ...(deadline === undefined ? {} : { timeoutMs: Math.max(1, deadline - Date.now()) }) });
    const early = outcomeOf(accepted);
    if (early || options.waitFor === 'accepted') return early ?? { stage: 'accepted' };
    for (;;) {
      const remaining = deadline === undefined ? longPollMs : deadline - Date.now();
      if (remaining <= 0) return { stage: 'accepted' };
      let answer: Record<string, unknown>;
      try {
        answer = await this.send('POST', route, { body: body('COMPLETED'), timeoutMs: Math.min(remaining, longPollMs) });
      } catch (error) {
        // The server's own wait ran out before the handler finished: ask again (or answer accepted at the deadline).
        if (error instanceof TemporalCallError && error.code === GrpcCode.deadlineExceeded) continue;
        throw error;
      }
      const outcome = outcomeOf(answer);
      if (outcome) return outcome;
    }
  }

  async list(query: string, pageSize: number, pageToken?: string): Promise<ListedPage> {
    const search = new URLSearchParams({ query, pageSize: String(pageSize), ...(pageToken ? { nextPageToken: pageToken } : {}) });
    const answer = await this.send('GET', `/workflows?${search.toString()}`);
    const executions = (Array.isArray(answer.executions) ? answer.executions : []).map((raw) => {
      const info = record(raw);
      return { ...basicsOf(info, ''), attributes: errandAttributesOf(record(info.searchAttributes).indexedFields) };
    });
    const token = typeof answer.nextPageToken === 'string' && answer.nextPageToken !== '' ? answer.nextPageToken : undefined;
    return { executions, nextPageToken: token };
  }

  async awaitEnd(workflowId: string, runId: string, waitMs: number): Promise<WorkflowEnd | undefined> {
    const deadline = Date.now() + waitMs;
    let currentRun = runId;
    let pageToken: string | undefined;
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) return undefined;
      const search = new URLSearchParams({
        'execution.runId': currentRun,
        waitNewEvent: 'true',
        historyEventFilterType: 'HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT',
        skipArchival: 'true',
        ...(pageToken ? { nextPageToken: pageToken } : {}),
      });
      let answer: Record<string, unknown>;
      try {
        answer = await this.send('GET', `/workflows/${path(workflowId)}/history?${search.toString()}`, { timeoutMs: Math.min(remaining, longPollMs) });
      } catch (error) {
        if (error instanceof TemporalCallError && error.code === GrpcCode.deadlineExceeded) continue;
        throw error;
      }
      const events = Array.isArray(record(answer.history).events) ? (record(answer.history).events as unknown[]) : [];
      const event = events[0];
      if (!isRecord(event)) {
        pageToken = typeof answer.nextPageToken === 'string' && answer.nextPageToken !== '' ? answer.nextPageToken : undefined;
        continue;
      }
      // As the SDK's `result()`: a run that continued (as new, or a retry) is followed to the next one.
      const next = [event.workflowExecutionCompletedEventAttributes, event.workflowExecutionFailedEventAttributes, event.workflowExecutionTimedOutEventAttributes, event.workflowExecutionContinuedAsNewEventAttributes]
        .map((attributes) => record(attributes).newExecutionRunId)
        .find((id): id is string => typeof id === 'string' && id !== '');
      if (next) {
        currentRun = next;
        pageToken = undefined;
        continue;
      }
      if (isRecord(event.workflowExecutionCompletedEventAttributes)) return { kind: 'completed', value: fromJsonPayloads(event.workflowExecutionCompletedEventAttributes.result)[0] };
      if (isRecord(event.workflowExecutionFailedEventAttributes)) return { kind: 'failed', cancelled: false, message: failureOf(event.workflowExecutionFailedEventAttributes.failure).message };
      if (isRecord(event.workflowExecutionCanceledEventAttributes)) return { kind: 'failed', cancelled: true, message: 'Workflow canceled' };
      if (isRecord(event.workflowExecutionTerminatedEventAttributes)) {
        const reason = event.workflowExecutionTerminatedEventAttributes.reason;
        return { kind: 'failed', cancelled: false, message: typeof reason === 'string' && reason !== '' ? reason : 'Workflow execution terminated' };
      }
      if (isRecord(event.workflowExecutionTimedOutEventAttributes)) return { kind: 'failed', cancelled: false, message: 'Workflow execution timed out' };
      throw new TemporalCallError(`the close event of ${workflowId} has a type errand does not know: ${String(event.eventType)}`, GrpcCode.unknown);
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

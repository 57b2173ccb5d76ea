import { randomUUID } from 'node:crypto';
import type { Agent } from 'node:http';
import { hostname } from 'node:os';
import { plainHttpRequest, PlainHttpTimeout } from '../http/plain-http';
import { traceHeader } from '../observability/start-options';
import { TemporalCallError, type WorkflowStart } from './temporal-gateway';
import { headerJson, searchAttributesJson, toJsonPayload } from './temporal-json-payloads';
import { temporalHttpAttemptTimeoutMs, temporalHttpRetry, temporalHttpStartDeadlineMs } from '../contracts/limits/api';
import { GrpcCode } from '../temporal/grpc-status';
import { temporalHttpStatus } from '../temporal/temporal-http-url';

/**
 * Starts a workflow through Temporal's HTTP API (the frontend's JSON gateway) instead of the gRPC client:
 * one plain HTTP/1.1 request over a keep-alive connection. The API's plain starts (no Idempotency-Key) use
 * it when `ERRAND_TEMPORAL_HTTP_URL` (or `temporal.httpUrl`) is set: Node's HTTP/2 gRPC client costs about
 * a millisecond of the API process's time per start (bench figure api-start-latency; decision 0019).
 *
 * The request is the one the SDK's `client.workflow.start` sends, field for field: the same payloads (as the
 * SDK's default payload converter writes them, the API client's data converter: no codec; written by
 * temporal-json-payloads.ts, so this file loads no SDK), the same typed search-attribute encoding, a fresh request id and the SDK's default identity. It is sent as canonical
 * proto JSON (`application/json+no-payload-shorthand`), so every payload's bytes go through unchanged.
 * Failures are retried as the SDK's gRPC client retries them (the codes of its `isRetryableError`, its
 * backoff; limits.ts `temporalHttpRetry`), within one deadline for all attempts. Every attempt sends the
 * same request id, which Temporal deduplicates: a start that did land (a lost connection, an attempt that
 * timed out) is answered with its run, never started twice.
 */

/** Where and as whom the starts go. */
export interface TemporalHttpStartTarget {
  /** Temporal's HTTP API, without a trailing slash. */
  baseUrl: string;
  namespace: string;
  /** Sent with every request (API key as `authorization`, `TEMPORAL_GRPC_META_*` as `Grpc-Metadata-*`). */
  headers: Record<string, string>;
  /** How long one attempt may take (ms); default {@link temporalHttpAttemptTimeoutMs}. */
  timeoutMs?: number;
  /** How long all attempts together may take (ms); default {@link temporalHttpStartDeadlineMs}. */
  deadlineMs?: number;
}

/**
 * Temporal answered a start through its HTTP API with an error (google.rpc.Status), or gave none; `code` is
 * the gRPC status code (6 ALREADY_EXISTS: the workflow id is taken).
 */
export class TemporalHttpStartError extends TemporalCallError {
  constructor(message: string, code: number) {
    super(message, code);
    this.name = 'TemporalHttpStartError';
  }
}

/**
 * The codes the SDK's gRPC client retries (`isRetryableError` of @temporalio/client's grpc-retry; its INTERNAL
 * cases are HTTP/2 stream resets, which reach this client as a lost connection, retried as UNAVAILABLE).
 */
const retryableCodes: ReadonlySet<number> = new Set([GrpcCode.unknown, GrpcCode.resourceExhausted, GrpcCode.unavailable, GrpcCode.aborted, GrpcCode.dataLoss, GrpcCode.outOfRange]);

/** The wait before attempt `attempt + 1` (attempt counts from 1), as the SDK's `defaultGrpcRetryOptions` computes it. */
export function retryDelayMs(attempt: number, code: number, random: () => number = Math.random): number {
  const { factor, initialIntervalMs, resourceExhaustedInitialIntervalMs, maxIntervalMs, maxJitter } = temporalHttpRetry;
  const initial = code === GrpcCode.resourceExhausted ? resourceExhaustedInitialIntervalMs : initialIntervalMs;
  return Math.min(maxIntervalMs, factor ** attempt * initial) * (1 - maxJitter + random() * maxJitter * 2);
}

const mediaType = 'application/json+no-payload-shorthand';
/** The SDK client's default identity, so a start looks the same in the history whichever way it went. */
const identity = `${process.pid}@${hostname()}`;

/** A protobuf Duration in JSON ("3s", "0.25s"). */
function durationJson(ms: number): string {
  return `${(ms / 1000).toFixed(3).replace(/\.?0+$/, '')}s`;
}

/** The StartWorkflowExecutionRequest the SDK would send for this start, as canonical proto JSON. */
export function startRequestJson(target: Pick<TemporalHttpStartTarget, 'namespace'>, request: WorkflowStart, requestId: string): string {
  const { visible, idempotent } = request;
  return JSON.stringify({
    namespace: target.namespace,
    workflowId: request.workflowId,
    workflowType: { name: request.workflowType },
    taskQueue: { name: request.taskQueue, kind: 'TASK_QUEUE_KIND_NORMAL' },
    input: { payloads: request.args.map(toJsonPayload) },
    workflowTaskTimeout: durationJson(visible.workflowTaskTimeout),
    identity,
    requestId,
    workflowIdReusePolicy: idempotent ? 'WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE' : 'WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE',
    workflowIdConflictPolicy: idempotent ? 'WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING' : 'WORKFLOW_ID_CONFLICT_POLICY_FAIL',
    // The versioning memo of the start options (decision 0030) and an idempotent start's own memo.
    ...(visible.memo || idempotent ? { memo: { fields: Object.fromEntries(Object.entries({ ...(visible.memo ?? {}), ...(idempotent?.memo ?? {}) }).map(([key, value]) => [key, toJsonPayload(value)])) } } : {}),
    searchAttributes: { indexedFields: searchAttributesJson(visible.typedSearchAttributes) },
    // The active trace (the API request's span), as the SDK client's traceHeaderInterceptor sends it.
    header: headerJson(traceHeader()),
    userMetadata: { summary: toJsonPayload(visible.staticSummary), details: toJsonPayload(visible.staticDetails) },
  });
}

/** The status code and message of an error answer, told by the HTTP status when it is not a Temporal one. */
function errorOf(status: number, text: string): { code: number; message: string } {
  const temporal = temporalHttpStatus(text);
  if (temporal) return temporal;
  // A proxy's own answer: its HTTP status says what happened (429 is a rate limit, as Temporal's is).
  const code = status === 429 ? GrpcCode.resourceExhausted : status === 503 || status === 502 ? GrpcCode.unavailable : status === 504 ? GrpcCode.deadlineExceeded : GrpcCode.unknown;
  return { code, message: `HTTP ${status}: ${text.slice(0, 200)}` };
}

/** The run id of a successful start's answer. */
function runIdOf(text: string): string {
  let runId: unknown;
  try {
    runId = (JSON.parse(text) as { runId?: unknown }).runId;
  } catch {
    runId = undefined;
  }
  if (typeof runId !== 'string' || runId === '') throw new TemporalHttpStartError(`Temporal's HTTP API answered a start without a run id: ${text.slice(0, 200)}`, GrpcCode.unknown);
  return runId;
}

/** Starts workflows through one Temporal HTTP API, over keep-alive connections of its own. */
export class TemporalHttpStarter {
  private readonly target: TemporalHttpStartTarget;
  private agent: Promise<Agent> | undefined;

  constructor(target: TemporalHttpStartTarget) {
    this.target = target;
  }

  private keepAliveAgent(): Promise<Agent> {
    this.agent ??= (this.target.baseUrl.startsWith('https:') ? import('node:https') : import('node:http')).then(({ Agent: KeepAlive }) => new KeepAlive({ keepAlive: true }));
    return this.agent;
  }

  /**
   * Starts the workflow; answers its run id (with USE_EXISTING, the running one's). Throws
   * {@link TemporalHttpStartError} with code 6 (ALREADY_EXISTS) when the id is taken, or with the last attempt's code once a failure is not retryable, the attempts
   * are used up, or the deadline leaves no time for another.
   */
  async start(request: WorkflowStart): Promise<{ runId: string }> {
    const requestId = randomUUID();
    const body = startRequestJson(this.target, request, requestId);
    const url = `${this.target.baseUrl}/api/v1/namespaces/${encodeURIComponent(this.target.namespace)}/workflows/${encodeURIComponent(request.workflowId)}`;
    const agent = await this.keepAliveAgent();
    const attemptTimeoutMs = this.target.timeoutMs ?? temporalHttpAttemptTimeoutMs;
    const deadline = Date.now() + (this.target.deadlineMs ?? temporalHttpStartDeadlineMs);
    for (let attempt = 1; ; attempt += 1) {
      const timeoutMs = Math.max(1, Math.min(attemptTimeoutMs, deadline - Date.now()));
      // The attempt's deadline goes to the server too (grpc-gateway reads Grpc-Timeout), so it gives up when we do.
      const headers = { ...this.target.headers, 'content-type': mediaType, accept: mediaType, 'grpc-timeout': `${timeoutMs}m` };
      let failure: TemporalHttpStartError;
      try {
        const answer = await plainHttpRequest(url, { method: 'POST', headers, body, agent, timeoutMs });
        if (answer.status >= 200 && answer.status < 300) return { runId: runIdOf(answer.text) };
        const { code, message } = errorOf(answer.status, answer.text);
        failure = new TemporalHttpStartError(`Temporal's HTTP API (${this.target.baseUrl}) refused the start: ${message}`, code);
      } catch (error) {
        if (error instanceof TemporalHttpStartError) throw error;
        // No answer in time: the start may have landed. It is retried like a lost connection, with the same
        // request id, so Temporal answers with the run it started instead of starting another.
        if (error instanceof PlainHttpTimeout) failure = new TemporalHttpStartError(`Temporal's HTTP API (${this.target.baseUrl}) did not answer a start within ${timeoutMs} ms`, GrpcCode.deadlineExceeded);
        else {
          const reason = error instanceof Error ? error.message : String(error);
          failure = new TemporalHttpStartError(`Temporal's HTTP API (${this.target.baseUrl}, ERRAND_TEMPORAL_HTTP_URL) cannot be reached: ${reason}`, GrpcCode.unavailable);
        }
      }
      const retryable = retryableCodes.has(failure.code) || failure.code === GrpcCode.deadlineExceeded;
      const delay = retryDelayMs(attempt, failure.code);
      // Another attempt only when it can still be made, and given time to answer, before the deadline.
      if (!retryable || attempt >= temporalHttpRetry.maxAttempts || Date.now() + delay >= deadline) throw failure;
      await new Promise((resolveDelay) => setTimeout(resolveDelay, delay));
    }
  }
}

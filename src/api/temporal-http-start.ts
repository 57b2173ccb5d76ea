import { randomUUID } from 'node:crypto';
import type { Agent } from 'node:http';
import { hostname } from 'node:os';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { encodeUnifiedSearchAttributes } from '@temporalio/common/lib/converter/payload-search-attributes';
import { plainHttpRequest, PlainHttpTimeout } from '../cli/plain-http';
import type { TopLevelStartOptions } from '../observability/start-options';
import { temporalHttpStatus } from '../temporal-http-url';

/**
 * Starts a workflow through Temporal's HTTP API (the frontend's JSON gateway) instead of the gRPC client:
 * one plain HTTP/1.1 request over a keep-alive connection. The API's plain starts (no Idempotency-Key) use
 * it when `ERRAND_TEMPORAL_HTTP_URL` (or `temporal.httpUrl`) is set: Node's HTTP/2 gRPC client costs about
 * a millisecond of the API process's time per start (bench figure api-start-latency; decision 0019).
 *
 * The request is the one the SDK's `client.workflow.start` sends, field for field: the same payloads (the
 * SDK's default payload converter, which is the API client's data converter: no codec), the same typed
 * search-attribute encoding, a fresh request id and the SDK's default identity. It is sent as canonical
 * proto JSON (`application/json+no-payload-shorthand`), so every payload's bytes go through unchanged.
 * A lost connection or an UNAVAILABLE answer is retried with the same request id, which Temporal
 * deduplicates: a start that did land is answered with its run, never started twice.
 */

/** Where and as whom the starts go. */
export interface TemporalHttpStartTarget {
  /** Temporal's HTTP API, without a trailing slash. */
  baseUrl: string;
  namespace: string;
  /** Sent with every request (API key as `authorization`, `TEMPORAL_GRPC_META_*`). */
  headers: Record<string, string>;
  /** How long one attempt may take (ms). */
  timeoutMs?: number;
}

/** One plain start. */
export interface TemporalHttpStartRequest {
  workflowType: string;
  workflowId: string;
  taskQueue: string;
  args: readonly unknown[];
  /** Summary, details, search attributes and workflow task timeout (src/observability/start-options.ts). */
  visible: TopLevelStartOptions;
}

/** Temporal answered a start through its HTTP API with an error (google.rpc.Status); `code` is the gRPC status code. */
export class TemporalHttpStartError extends Error {
  readonly code: number;
  constructor(message: string, code: number) {
    super(message);
    this.name = 'TemporalHttpStartError';
    this.code = code;
  }
}

/** gRPC status codes used here. */
const grpcCode = { unknown: 2, deadlineExceeded: 4, alreadyExists: 6, unavailable: 14 } as const;
const defaultTimeoutMs = 10_000;
/** Waits before the second, third and fourth attempt after a lost connection or an UNAVAILABLE answer. */
const retryDelaysMs = [100, 300, 900];
const mediaType = 'application/json+no-payload-shorthand';
/** The SDK client's default identity, so a start looks the same in the history whichever way it went. */
const identity = `${process.pid}@${hostname()}`;

/** A payload as canonical proto JSON: bytes in base64. */
function payloadJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload.metadata ?? {})) if (value) metadata[key] = Buffer.from(value).toString('base64');
  return { metadata, data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64') };
}

function toPayloadJson(value: unknown): ReturnType<typeof payloadJson> {
  return payloadJson(defaultPayloadConverter.toPayload(value));
}

/** A protobuf Duration in JSON ("3s", "0.25s"). */
function durationJson(ms: number): string {
  return `${(ms / 1000).toFixed(3).replace(/\.?0+$/, '')}s`;
}

/** The StartWorkflowExecutionRequest the SDK would send for this start, as canonical proto JSON. */
export function startRequestJson(target: Pick<TemporalHttpStartTarget, 'namespace'>, request: TemporalHttpStartRequest, requestId: string): string {
  const { visible } = request;
  const indexedFields = encodeUnifiedSearchAttributes(undefined, visible.typedSearchAttributes);
  return JSON.stringify({
    namespace: target.namespace,
    workflowId: request.workflowId,
    workflowType: { name: request.workflowType },
    taskQueue: { name: request.taskQueue, kind: 'TASK_QUEUE_KIND_NORMAL' },
    input: { payloads: request.args.map(toPayloadJson) },
    workflowTaskTimeout: durationJson(visible.workflowTaskTimeout),
    identity,
    requestId,
    workflowIdReusePolicy: 'WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE',
    workflowIdConflictPolicy: 'WORKFLOW_ID_CONFLICT_POLICY_FAIL',
    searchAttributes: { indexedFields: Object.fromEntries(Object.entries(indexedFields).map(([name, payload]) => [name, payloadJson(payload)])) },
    header: {},
    userMetadata: { summary: toPayloadJson(visible.staticSummary), details: toPayloadJson(visible.staticDetails) },
  });
}

/** The status code and message of an error answer, told by the HTTP status when it is not a Temporal one. */
function errorOf(status: number, text: string): { code: number; message: string } {
  const temporal = temporalHttpStatus(text);
  if (temporal) return temporal;
  const code = status === 503 || status === 502 ? grpcCode.unavailable : status === 504 ? grpcCode.deadlineExceeded : grpcCode.unknown;
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
  if (typeof runId !== 'string' || runId === '') throw new TemporalHttpStartError(`Temporal's HTTP API answered a start without a run id: ${text.slice(0, 200)}`, grpcCode.unknown);
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

  /** Starts the workflow; answers its run id. Throws {@link WorkflowExecutionAlreadyStartedError} or {@link TemporalHttpStartError}. */
  async start(request: TemporalHttpStartRequest): Promise<{ runId: string }> {
    const requestId = randomUUID();
    const body = startRequestJson(this.target, request, requestId);
    const url = `${this.target.baseUrl}/api/v1/namespaces/${encodeURIComponent(this.target.namespace)}/workflows/${encodeURIComponent(request.workflowId)}`;
    const headers = { ...this.target.headers, 'content-type': mediaType, accept: mediaType };
    const agent = await this.keepAliveAgent();
    const timeoutMs = this.target.timeoutMs ?? defaultTimeoutMs;
    for (let attempt = 0; ; attempt += 1) {
      let failure: TemporalHttpStartError;
      try {
        const answer = await plainHttpRequest(url, { method: 'POST', headers, body, agent, timeoutMs });
        if (answer.status >= 200 && answer.status < 300) return { runId: runIdOf(answer.text) };
        const { code, message } = errorOf(answer.status, answer.text);
        if (code === grpcCode.alreadyExists) throw new WorkflowExecutionAlreadyStartedError('Workflow execution already started', request.workflowId, request.workflowType);
        failure = new TemporalHttpStartError(`Temporal's HTTP API (${this.target.baseUrl}) refused the start: ${message}`, code);
      } catch (error) {
        if (error instanceof TemporalHttpStartError || error instanceof WorkflowExecutionAlreadyStartedError) throw error;
        // No answer within the time limit: the start may have landed; the caller learns it could not be told.
        if (error instanceof PlainHttpTimeout) throw new TemporalHttpStartError(`Temporal's HTTP API (${this.target.baseUrl}) did not answer a start within ${timeoutMs} ms`, grpcCode.deadlineExceeded);
        const reason = error instanceof Error ? error.message : String(error);
        failure = new TemporalHttpStartError(`Temporal's HTTP API (${this.target.baseUrl}, ERRAND_TEMPORAL_HTTP_URL) cannot be reached: ${reason}`, grpcCode.unavailable);
      }
      const delay = retryDelaysMs[attempt];
      if (failure.code !== grpcCode.unavailable || delay === undefined) throw failure;
      await new Promise((resolveDelay) => setTimeout(resolveDelay, delay));
    }
  }
}

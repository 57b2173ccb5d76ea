import type { LiveText } from '../contracts/live-text';
import type { TopLevelStartOptions } from '../observability/start-options';
import type { ErrandAttributeValues, ExecutionBasics } from './delegation-facts';

/**
 * Everything the API asks of Temporal, as one small interface with two implementations (decision 0026):
 * Temporal's HTTP API (temporal-http-gateway.ts: plain HTTP/1.1 and JSON, no SDK; used when
 * `ERRAND_TEMPORAL_HTTP_URL` is set, and what the Lambda bundle carries) and the SDK's gRPC client
 * (temporal-sdk-gateway.ts, loaded with `import()` only when there is no HTTP API). Values cross it as
 * plain JSON values, the way the SDK's default converter reads and writes them, so a workflow cannot tell
 * which way a request came. Errors carry the gRPC status code ({@link TemporalCallError}), whichever way
 * they came, so callers decide by code (src/temporal/grpc-status.ts).
 */

/** A Temporal refusal or failure with its gRPC status code (5 NOT_FOUND, 6 ALREADY_EXISTS, 4 DEADLINE_EXCEEDED, ...). */
export class TemporalCallError extends Error {
  readonly code: number;
  constructor(message: string, code: number) {
    super(message);
    this.name = 'TemporalCallError';
    this.code = code;
  }
}

/** What the API reads of one workflow execution (a describe). */
export interface WorkflowFacts extends ExecutionBasics {
  attributes: ErrandAttributeValues;
  /** The memo, decoded (errand keeps its Idempotency-Key fingerprint there). */
  memo: Record<string, unknown>;
  /** The static summary the start set, if any. */
  summary: string | undefined;
  /** The text the pending model call has written so far (its heartbeat details), while one is writing. */
  liveText: LiveText | undefined;
}

/** One start. */
export interface WorkflowStart {
  workflowType: string;
  workflowId: string;
  taskQueue: string;
  args: readonly unknown[];
  /** Summary, details, search attributes and workflow task timeout (src/observability/start-options.ts). */
  visible: TopLevelStartOptions;
  /**
   * Absent: a plain start (conflict FAIL, reuse ALLOW_DUPLICATE). Present: an Idempotency-Key start
   * (conflict USE_EXISTING while it runs, REJECT_DUPLICATE once closed) with this memo.
   */
  idempotent?: { memo: Record<string, unknown> };
}

/** What an update came to. */
export type UpdateOutcome =
  | { stage: 'completed'; value: unknown }
  /** The workflow refused it (validator) or its handler failed; `failureType` is an ApplicationFailure's type. */
  | { stage: 'failed'; message: string; failureType: string | undefined }
  /** Accepted; no outcome within the wait. */
  | { stage: 'accepted' };

/** How a run chain ended (continue-as-new is followed). */
export type WorkflowEnd =
  | { kind: 'completed'; value: unknown }
  | { kind: 'failed'; cancelled: boolean; message: string };

/** One execution of a visibility listing. */
export interface ListedExecution extends ExecutionBasics {
  attributes: ErrandAttributeValues;
}

/** One page of a visibility listing; the page token is Temporal's, in base64. */
export interface ListedPage {
  executions: ListedExecution[];
  nextPageToken: string | undefined;
}

/** The API's Temporal operations. */
export interface TemporalGateway {
  /** Starts a workflow; throws {@link TemporalCallError} 6 (ALREADY_EXISTS) when the id is taken and the policies say so. */
  start(request: WorkflowStart): Promise<{ runId: string }>;
  /** Describes the latest run of `workflowId`; 5 (NOT_FOUND) when there is none. */
  describe(workflowId: string): Promise<WorkflowFacts>;
  /** Runs a query, giving up with 4 (DEADLINE_EXCEEDED) after `timeoutMs`. */
  query(workflowId: string, queryName: string, args: readonly unknown[], timeoutMs: number): Promise<unknown>;
  /** Sends a signal to the running run. */
  signal(workflowId: string, signalName: string, arg: unknown): Promise<void>;
  /**
   * Sends an update and waits for `waitFor`: `accepted` answers once the workflow took it (its outcome too
   * when it was already there); `completed` waits for the outcome (up to `timeoutMs` when given, then
   * answers `accepted`). The same `updateId` makes a retry the same update.
   */
  update(workflowId: string, updateName: string, arg: unknown, options: { updateId: string; waitFor: 'accepted' | 'completed'; timeoutMs?: number }): Promise<UpdateOutcome>;
  /** One page of a visibility query. */
  list(query: string, pageSize: number, pageToken?: string): Promise<ListedPage>;
  /** Waits up to `waitMs` for the run chain of `workflowId` from `runId` on to end; undefined when it has not by then. */
  awaitEnd(workflowId: string, runId: string, waitMs: number): Promise<WorkflowEnd | undefined>;
  /** Closes connections (the SDK's gRPC channel); the HTTP one has nothing to close. */
  close(): Promise<void>;
}

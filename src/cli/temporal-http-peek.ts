import { isOwnedSubagent, peekDurations, summarizeExecution, type ErrandAttributeValues, type ExecutionBasics } from '../api/delegation-facts';
import { delegationNotFound, problemDocument } from '../api/problem';
import { delegationPathSchema } from '../contracts/api';
import { peekSchema, type DelegationStatus, type PeekView } from '../contracts/delegation-api';
import { peekQueryTimeoutMs } from '../contracts/limits/api';
import { livePartial, type LiveText } from '../contracts/live-text';
import { pendingLiveText } from '../temporal/pending-live-text';
import { peekQueryName } from '../contracts/wire-names';
import type { ApiAnswer, ApiTransport } from './api-transport';
import { plainHttpRequest, PlainHttpTimeout, type PlainHttpAnswer } from '../http/plain-http';
import { temporalHttpStatus } from '../temporal/temporal-http-url';
import { errandAttributesFrom, executionStatusName, protoTimestamp } from '../api/temporal-json-payloads';

/**
 * `errand peek` over Temporal's HTTP API (its frontend's JSON gateway) instead of the Temporal client: a
 * describe and the peek query as two plain HTTP requests, so the CLI loads neither Temporal's protobuf
 * definitions nor gRPC (most of a second of start-up). It answers `GET /v1/delegations/{id}` exactly as the
 * API does in process — same tenant check, same 404, the facts run through the same pure code
 * (src/api/delegation-facts.ts) — and hands every other request to the in-process transport. Used when
 * `ERRAND_TEMPORAL_HTTP_URL` (or `temporal.httpUrl`) is set; decision 0013.
 */

/** Where and as whom the light peek reads. */
export interface TemporalHttpPeekOptions {
  /** Temporal's HTTP API, without a trailing slash. */
  baseUrl: string;
  namespace: string;
  /** The tenant the CLI acts as: a delegation of another tenant is not found, as in the API. */
  tenant: string;
  /** Sent with every request (API key, `TEMPORAL_GRPC_META_*`). */
  headers?: Record<string, string>;
  peekTimeoutMs?: number;
}

/** A Temporal error answer (google.rpc.Status as JSON). */
class TemporalHttpError extends Error {
  readonly code: number | undefined;
  constructor(message: string, code: number | undefined) {
    super(message);
    this.name = 'TemporalHttpError';
    this.code = code;
  }
}

/** gRPC status code NOT_FOUND. */
const notFoundCode = 5;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One payload's value. The gateway shows a `json/plain` payload as its JSON value ("shorthand"); others,
 * and search attributes, keep the raw form `{metadata: {encoding: <base64>}, data: <base64>}`.
 */
export function payloadValue(payload: unknown): unknown {
  if (!isRecord(payload) || !isRecord(payload.metadata) || typeof payload.metadata.encoding !== 'string') return payload;
  const encoding = Buffer.from(payload.metadata.encoding, 'base64').toString('utf8');
  const data = typeof payload.data === 'string' ? Buffer.from(payload.data, 'base64').toString('utf8') : '';
  if (encoding === 'binary/null') return null;
  if (encoding === 'json/plain') return JSON.parse(data) as unknown;
  throw new Error(`a payload with encoding "${encoding}", which errand does not write`);
}

/** The values of a Payloads message: an array in shorthand, `{payloads: [...]}` raw. */
function payloadValues(payloads: unknown): unknown[] {
  const list = Array.isArray(payloads) ? payloads : isRecord(payloads) && Array.isArray(payloads.payloads) ? payloads.payloads : [];
  return list.map(payloadValue);
}

function attributeValues(fields: unknown): ErrandAttributeValues {
  return errandAttributesFrom((name) => {
    if (!isRecord(fields) || fields[name] === undefined) return undefined;
    try {
      return payloadValue(fields[name]);
    } catch {
      return undefined;
    }
  });
}

/** Reads one delegation's status through Temporal's HTTP API. */
export class TemporalHttpPeek {
  private readonly options: TemporalHttpPeekOptions;

  constructor(options: TemporalHttpPeekOptions) {
    this.options = options;
  }

  private async send(path: string, init: { method: 'GET' | 'POST'; body?: unknown; timeoutMs?: number }): Promise<Record<string, unknown>> {
    const url = `${this.options.baseUrl}/api/v1/namespaces/${encodeURIComponent(this.options.namespace)}${path}`;
    const headers: Record<string, string> = { ...this.options.headers, accept: 'application/json' };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    // The deadline goes to the server too (grpc-gateway reads Grpc-Timeout), so it gives up when we do.
    if (init.timeoutMs !== undefined) headers['grpc-timeout'] = `${init.timeoutMs}m`;
    let response: PlainHttpAnswer;
    try {
      response = await plainHttpRequest(url, {
        method: init.method,
        headers,
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
        ...(init.timeoutMs === undefined ? {} : { timeoutMs: init.timeoutMs + 1_000 }),
      });
    } catch (error) {
      if (error instanceof PlainHttpTimeout) throw new TemporalHttpError(`no answer within ${init.timeoutMs} ms`, undefined);
      const cause = error instanceof Error ? error.message : String(error);
      throw new Error(`cannot reach Temporal's HTTP API at ${this.options.baseUrl} (ERRAND_TEMPORAL_HTTP_URL): ${cause}`);
    }
    const text = response.text;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.status >= 200 && response.status < 300 && isRecord(body)) return body;
    const status = temporalHttpStatus(text);
    if (status) throw new TemporalHttpError(status.message, status.code);
    throw new Error(`${this.options.baseUrl} (ERRAND_TEMPORAL_HTTP_URL) answered ${response.status} with no Temporal answer: is it the HTTP port of Temporal's frontend? ${text.slice(0, 200)}`);
  }

  private describe(id: string): Promise<Record<string, unknown>> {
    return this.send(`/workflows/${encodeURIComponent(id)}`, { method: 'GET' });
  }

  /** The peek query with its deadline: a closed workflow is answered by a worker replaying it, which may be absent. */
  private async peek(id: string, description: Record<string, unknown>, closedAt: number | undefined): Promise<{ peek: PeekView | null; peekError?: string }> {
    const timeoutMs = this.options.peekTimeoutMs ?? peekQueryTimeoutMs;
    try {
      const answer = await this.send(`/workflows/${encodeURIComponent(id)}/query/${peekQueryName}`, { method: 'POST', body: { query: { queryType: peekQueryName } }, timeoutMs });
      if (answer.queryRejected !== undefined && answer.queryRejected !== null) return { peek: null, peekError: 'no peek: the query was rejected' };
      const parsed = peekSchema.safeParse(payloadValues(answer.queryResult)[0]);
      if (!parsed.success) return { peek: null, peekError: `the peek answer has an unexpected shape: ${parsed.error.issues[0]?.message ?? ''}` };
      const live = await this.currentLiveText(id, description);
      return { peek: { ...parsed.data, ...peekDurations(parsed.data, closedAt, Date.now()), ...(live ? { partial: livePartial(live) } : {}) } };
    } catch (error) {
      if (!(error instanceof TemporalHttpError)) throw error;
      return { peek: null, peekError: `no peek: ${error.message}` };
    }
  }

  /** As the API's peek (DelegationService.peek): described again only when the first describe showed text, so a finished turn's partial text is not shown beside its answer. */
  private async currentLiveText(id: string, description: Record<string, unknown>): Promise<LiveText | undefined> {
    try {
      if (!pendingLiveText(description, payloadValues)) return undefined;
      return pendingLiveText(await this.describe(id), payloadValues);
    } catch {
      return undefined;
    }
  }

  /** `GET /v1/delegations/{id}` as the API answers it: 200 with the status, or 404 for a delegation this tenant cannot see. */
  async status(id: string, path: string): Promise<ApiAnswer> {
    let description: Record<string, unknown>;
    try {
      description = await this.describe(id);
    } catch (error) {
      if (error instanceof TemporalHttpError && error.code === notFoundCode) return { status: 404, body: problemDocument(delegationNotFound(id), path) };
      throw error;
    }
    const info = isRecord(description.workflowExecutionInfo) ? description.workflowExecutionInfo : {};
    const values = attributeValues(isRecord(info.searchAttributes) ? info.searchAttributes.indexedFields : undefined);
    if (!isOwnedSubagent(values, this.options.tenant)) return { status: 404, body: problemDocument(delegationNotFound(id), path) };
    const execution = isRecord(info.execution) ? info.execution : {};
    const basics: ExecutionBasics = {
      workflowId: typeof execution.workflowId === 'string' ? execution.workflowId : id,
      runId: typeof execution.runId === 'string' ? execution.runId : '',
      statusName: executionStatusName(info.status),
      startTime: protoTimestamp(info.startTime),
      closeTime: protoTimestamp(info.closeTime),
    };
    const config = isRecord(description.executionConfig) ? description.executionConfig : {};
    const metadata = isRecord(config.userMetadata) ? config.userMetadata : {};
    let summary: unknown;
    try {
      summary = metadata.summary === undefined ? undefined : payloadValue(metadata.summary);
    } catch {
      summary = undefined;
    }
    // A closed workflow has no model call writing (the API reads live text only while it runs).
    const peek = await this.peek(id, basics.statusName === 'RUNNING' ? description : {}, basics.closeTime?.getTime());
    const status: DelegationStatus = { ...summarizeExecution(basics, values), summary: typeof summary === 'string' ? summary : null, ...peek };
    return { status: 200, body: status };
  }
}

/** The path of `GET /v1/delegations/{id}` (what `errand peek` asks), with the id. */
const statusPath = /^\/v1\/delegations\/([^/?#]+)$/;

/** A transport that answers `GET /v1/delegations/{id}` through Temporal's HTTP API and sends everything else to `fallback`. */
export function temporalHttpPeekTransport(options: TemporalHttpPeekOptions, fallback: ApiTransport): ApiTransport {
  const peek = new TemporalHttpPeek(options);
  return {
    get describe() {
      return `${fallback.describe}; peek through Temporal's HTTP API at ${options.baseUrl}`;
    },
    async request(method, path, requestOptions) {
      const match = method === 'GET' ? statusPath.exec(path) : null;
      const id = match?.[1] === undefined ? undefined : decodeURIComponent(match[1]);
      // An id the API would refuse goes to the in-process API, which answers its 400.
      if (id !== undefined && delegationPathSchema.safeParse({ id }).success) return peek.status(id, path);
      return fallback.request(method, path, requestOptions);
    },
  };
}

import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter, TypedSearchAttributes, type Payload, type SearchAttributePair } from '@temporalio/common';
import { z } from 'zod';
import type { DelegationSummary, ListDelegationsResponse } from '../contracts/api';
import { defaultListPageSize } from '../contracts/limits';
import { searchAttributes } from '../contracts/search-attributes';
import { summaryOf } from './execution-facts';
import { isGrpcStatus } from '../grpc-status';
import { ApiProblem, ProblemKind } from './problem';

/** Filters of a delegation listing (the query parameters of `GET /v1/delegations`). */
export interface ListDelegationsFilters {
  status?: DelegationSummary['state'];
  source?: string;
  parent?: string;
  pageSize?: number;
  pageToken?: string;
}

/** Lists a tenant's delegations with a visibility query on the search attributes, one page at a time. */
export async function listDelegations(client: Client, namespace: string, tenant: string, filters: ListDelegationsFilters): Promise<ListDelegationsResponse> {
  // Values are interpolated only after their schemas restricted them to characters that need no escaping.
  const clauses = [`${searchAttributes.kind.name} = 'subagent'`, `${searchAttributes.tenant.name} = '${tenant}'`];
  if (filters.status) clauses.push(stateClause(filters.status));
  if (filters.source) clauses.push(`${searchAttributes.source.name} = '${filters.source}'`);
  if (filters.parent) clauses.push(`${searchAttributes.parent.name} = '${filters.parent}'`);
  const query = clauses.join(' AND ');
  let response;
  try {
    response = await client.workflowService.listWorkflowExecutions({
      namespace,
      query,
      pageSize: filters.pageSize ?? defaultListPageSize,
      ...(filters.pageToken ? { nextPageToken: decodePageToken(filters.pageToken, query) } : {}),
    });
  } catch (error) {
    // INVALID_ARGUMENT here can only come from a page token the server does not accept.
    if (filters.pageToken && isGrpcStatus(error, 3)) throw badPageToken();
    throw error;
  }
  const items = response.executions.map((raw) =>
    summaryOf({
      workflowId: raw.execution?.workflowId ?? '',
      runId: raw.execution?.runId ?? '',
      statusName: executionStatusNames[raw.status ?? 0] ?? 'UNKNOWN',
      startTime: timestampToDate(raw.startTime),
      closeTime: timestampToDate(raw.closeTime),
      attributes: decodeErrandAttributes(raw.searchAttributes?.indexedFields as Record<string, Payload> | null | undefined),
    }),
  );
  const token = response.nextPageToken;
  return { items, nextPageToken: token && token.length > 0 ? encodePageToken(token, query) : null };
}

/** Temporal's execution status enum (temporal.api.enums.v1.WorkflowExecutionStatus) by number. */
const executionStatusNames: Record<number, string> = {
  1: 'RUNNING',
  2: 'COMPLETED',
  3: 'FAILED',
  4: 'CANCELLED',
  5: 'TERMINATED',
  6: 'CONTINUED_AS_NEW',
  7: 'TIMED_OUT',
};

/** Visibility query clauses of a state filter (Temporal's ExecutionStatus covers runs that did not return). */
function stateClause(state: DelegationSummary['state']): string {
  switch (state) {
    case 'running':
    case 'waiting':
      return `${searchAttributes.status.name} = '${state}' AND ExecutionStatus = 'Running'`;
    case 'failed':
      return `(${searchAttributes.status.name} = 'failed' OR ExecutionStatus IN ('Failed', 'Terminated', 'TimedOut'))`;
    case 'cancelled':
      return `(${searchAttributes.status.name} = 'cancelled' OR ExecutionStatus = 'Canceled')`;
    default:
      return `${searchAttributes.status.name} = '${state}' AND ExecutionStatus = 'Completed'`;
  }
}

/** The 400 of a page token that is not one of this listing's. */
export function badPageToken(): ApiProblem {
  return new ApiProblem(400, ProblemKind.invalidRequest, 'The request is not valid', {
    detail: 'query pageToken: not a page token of this listing',
    errors: [{ in: 'query', field: 'pageToken', message: 'not a page token of this listing; pass the nextPageToken of the previous page unchanged, with the same filters' }],
  });
}

const pageTokenSchema = z.object({ v: z.literal(1), scope: z.string(), server: z.string() });

/** Hash of a visibility query: a page token is valid only for the query (tenant and filters) that issued it. */
function queryScope(query: string): string {
  return createHash('sha256').update(query, 'utf8').digest('hex').slice(0, 16);
}

/**
 * Our page token wraps Temporal's with the scope of its query, so a token from another listing, another
 * tenant, or no listing at all is a 400 here instead of an opaque server error.
 */
function encodePageToken(serverToken: Uint8Array, query: string): string {
  return Buffer.from(JSON.stringify({ v: 1, scope: queryScope(query), server: Buffer.from(serverToken).toString('base64') }), 'utf8').toString('base64url');
}

/** Temporal's page token out of ours; a token of another listing or none at all is a 400. */
function decodePageToken(token: string, query: string): Buffer {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badPageToken();
  }
  const parsed = pageTokenSchema.safeParse(json);
  if (!parsed.success || parsed.data.scope !== queryScope(query)) throw badPageToken();
  return Buffer.from(parsed.data.server, 'base64');
}

/** A protobuf timestamp of a raw visibility answer as a Date (the client's public API takes no raw answers). */
function timestampToDate(ts: { seconds?: number | Long | string | null; nanos?: number | null } | null | undefined): Date | undefined {
  if (!ts || ts.seconds === undefined || ts.seconds === null) return undefined;
  return new Date(Number(ts.seconds) * 1_000 + Math.floor((ts.nanos ?? 0) / 1_000_000));
}

/** errand's search attributes out of a raw visibility answer (only the keys errand defines). */
function decodeErrandAttributes(fields: Record<string, Payload> | null | undefined): TypedSearchAttributes {
  const pairs: SearchAttributePair[] = [];
  for (const key of Object.values(searchAttributes)) {
    const payload = fields?.[key.name];
    if (!payload) continue;
    const value: unknown = defaultPayloadConverter.fromPayload(payload);
    if (key.type === 'INT' && typeof value === 'number') pairs.push({ key, value } as SearchAttributePair);
    else if (key.type === 'KEYWORD' && typeof value === 'string') pairs.push({ key, value } as SearchAttributePair);
  }
  return new TypedSearchAttributes(pairs);
}

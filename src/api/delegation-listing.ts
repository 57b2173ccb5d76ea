import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { DelegationSummary, ListDelegationsResponse } from '../contracts/delegation-api';
import { defaultListPageSize } from '../contracts/limits/api';
import { searchAttributes } from '../contracts/search-attributes';
import { summaryOf } from './execution-facts';
import { isGrpcStatus } from '../temporal/grpc-status';
import { ApiProblem, ProblemKind } from './problem';
import type { ListedPage, TemporalGateway } from './temporal-gateway';

/** Filters of a delegation listing (the query parameters of `GET /v1/delegations`). */
export interface ListDelegationsFilters {
  status?: DelegationSummary['state'];
  source?: string;
  parent?: string;
  pageSize?: number;
  pageToken?: string;
}

/** Lists a tenant's delegations with a visibility query on the search attributes, one page at a time. */
export async function listDelegations(gateway: TemporalGateway, tenant: string, filters: ListDelegationsFilters): Promise<ListDelegationsResponse> {
  // Values are interpolated only after their schemas restricted them to characters that need no escaping.
  const clauses = [`${searchAttributes.kind.name} = 'subagent'`, `${searchAttributes.tenant.name} = '${tenant}'`];
  if (filters.status) clauses.push(stateClause(filters.status));
  if (filters.source) clauses.push(`${searchAttributes.source.name} = '${filters.source}'`);
  if (filters.parent) clauses.push(`${searchAttributes.parent.name} = '${filters.parent}'`);
  const query = clauses.join(' AND ');
  let page: ListedPage;
  try {
    page = await gateway.list(query, filters.pageSize ?? defaultListPageSize, filters.pageToken ? decodePageToken(filters.pageToken, query) : undefined);
  } catch (error) {
    // INVALID_ARGUMENT here can only come from a page token the server does not accept.
    if (filters.pageToken && isGrpcStatus(error, 3)) throw badPageToken();
    throw error;
  }
  const items = page.executions.map((execution) => summaryOf(execution));
  return { items, nextPageToken: page.nextPageToken === undefined ? null : encodePageToken(page.nextPageToken, query) };
}

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
function encodePageToken(serverToken: string, query: string): string {
  return Buffer.from(JSON.stringify({ v: 1, scope: queryScope(query), server: serverToken }), 'utf8').toString('base64url');
}

/** Temporal's page token (base64) out of ours; a token of another listing or none at all is a 400. */
function decodePageToken(token: string, query: string): string {
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badPageToken();
  }
  const parsed = pageTokenSchema.safeParse(json);
  if (!parsed.success || parsed.data.scope !== queryScope(query)) throw badPageToken();
  return parsed.data.server;
}

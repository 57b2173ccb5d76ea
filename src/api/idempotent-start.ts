import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { GrpcCode, isGrpcStatus } from '../grpc-status';
import { ApiProblem, ProblemKind } from './problem';
import type { TemporalGateway, WorkflowStart } from './temporal-gateway';

/**
 * A start with an Idempotency-Key (delegations and sessions alike): the workflow id is derived from the tenant
 * and the key, and Temporal's id policies — not a table of ours — make a retry land on the same workflow
 * (USE_EXISTING while it runs, REJECT_DUPLICATE once it closed). The request's fingerprint sits in the
 * workflow's memo so the key reused for a different body is refused, naming the header.
 */

/** The key and the fingerprint of the request that carries it. */
export interface Idempotency {
  key: string;
  requestFingerprint: string;
}

/** Memo errand keeps on a workflow it started with a key (JSON). */
const requestMemoSchema = z.object({ fingerprint: z.string(), nonce: z.string() });
const memoKey = 'errandRequest';

/**
 * Starts `start` (whose id derives from the key), or finds the workflow an earlier request with the key
 * started. `created` tells which; `what` names the kind in the refusals ("delegation", "session").
 */
export async function startIdempotently(gateway: TemporalGateway, start: WorkflowStart, tenant: string, idempotency: Idempotency, what: string): Promise<{ runId: string; created: boolean }> {
  const nonce = randomUUID();
  try {
    await gateway.start({ ...start, idempotent: { memo: { [memoKey]: { fingerprint: idempotency.requestFingerprint, nonce } } } });
  } catch (error) {
    if (!isGrpcStatus(error, GrpcCode.alreadyExists)) throw error;
  }
  // Same key: this start either created the workflow or found the one an earlier request created.
  const description = await gateway.describe(start.workflowId);
  if (description.attributes.tenant !== tenant) {
    throw new ApiProblem(409, ProblemKind.conflict, 'Idempotency-Key conflict', { detail: 'this Idempotency-Key cannot be used; choose another' });
  }
  const memo = requestMemoSchema.safeParse(description.memo[memoKey]);
  if (memo.success && memo.data.fingerprint !== idempotency.requestFingerprint) {
    throw new ApiProblem(422, ProblemKind.idempotencyKeyReused, 'Idempotency-Key reused for a different request', {
      detail: `${what} ${start.workflowId} was started with this Idempotency-Key and a different body; use a new key for a new request`,
      errors: [{ in: 'header', field: 'Idempotency-Key', message: 'already used for a different request' }],
    });
  }
  return { runId: description.runId, created: memo.success && memo.data.nonce === nonce };
}

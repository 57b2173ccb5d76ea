import { createHash, randomBytes } from 'node:crypto';
import { errandWorkflowId } from '../contracts/workflow-ids';

/**
 * Workflow ids of API-started delegations (DESIGN.md convention 10, workflow-ids.ts): `errand-<short id>`. With an
 * Idempotency-Key the short id is derived from the tenant and the key, so a retried request names the
 * same workflow and Temporal's id policies (not a table of ours) make it return the same delegation.
 */

/** Random bytes drawn 64 ids at a time: one call into the system's generator per 64 starts, not per start. */
const idBytes = 8;
let pool = Buffer.alloc(0);
let poolOffset = 0;

/** A fresh delegation id: 8 random bytes in hex. */
export function newDelegationId(): string {
  if (poolOffset + idBytes > pool.length) {
    pool = randomBytes(idBytes * 64);
    poolOffset = 0;
  }
  const id = pool.toString('hex', poolOffset, poolOffset + idBytes);
  poolOffset += idBytes;
  return errandWorkflowId(id);
}

/** The delegation id an Idempotency-Key maps to, per tenant (two tenants' equal keys never collide). */
export function idempotentDelegationId(tenant: string, idempotencyKey: string): string {
  return errandWorkflowId(createHash('sha256').update(`${tenant}\n${idempotencyKey}`, 'utf8').digest('hex').slice(0, 16));
}

/** The session id an Idempotency-Key maps to, per tenant; never a delegation's id for the same key. */
export function idempotentSessionId(tenant: string, idempotencyKey: string): string {
  return errandWorkflowId(createHash('sha256').update(`session\n${tenant}\n${idempotencyKey}`, 'utf8').digest('hex').slice(0, 16));
}

/** Update id of a send_message with an Idempotency-Key: Temporal deduplicates updates by id. */
export function idempotentUpdateId(tenant: string, idempotencyKey: string): string {
  return `message-${createHash('sha256').update(`${tenant}\n${idempotencyKey}`, 'utf8').digest('hex').slice(0, 24)}`;
}

/** A stable hash of a JSON value (object keys sorted), to tell a retry from a different request. */
export function requestFingerprint(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

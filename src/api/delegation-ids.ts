import { createHash, randomBytes } from 'node:crypto';

/**
 * Workflow ids of API-started delegations (DESIGN.md convention 10): `errand-<short id>`. With an
 * Idempotency-Key the short id is derived from the tenant and the key, so a retried request names the
 * same workflow and Temporal's id policies (not a table of ours) make it return the same delegation.
 */

/** A fresh delegation id. */
export function newDelegationId(): string {
  return `errand-${randomBytes(8).toString('hex')}`;
}

/** The delegation id an Idempotency-Key maps to, per tenant (two tenants' equal keys never collide). */
export function idempotentDelegationId(tenant: string, idempotencyKey: string): string {
  return `errand-${createHash('sha256').update(`${tenant}\n${idempotencyKey}`, 'utf8').digest('hex').slice(0, 16)}`;
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

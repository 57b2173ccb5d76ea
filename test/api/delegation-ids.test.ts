import { describe, expect, test } from 'vitest';
import { idempotentDelegationId, newDelegationId } from '../../src/api/delegation-ids';

describe('delegation ids', () => {
  test('fresh ids are errand- and 16 hex digits, all different, also across refills of the random pool', () => {
    const ids = Array.from({ length: 300 }, () => newDelegationId());
    for (const id of ids) expect(id).toMatch(/^errand-[0-9a-f]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('an Idempotency-Key names the same id for its tenant and a different one for another tenant', () => {
    expect(idempotentDelegationId('acme', 'key-1')).toBe(idempotentDelegationId('acme', 'key-1'));
    expect(idempotentDelegationId('acme', 'key-1')).not.toBe(idempotentDelegationId('globex', 'key-1'));
    expect(idempotentDelegationId('acme', 'key-1')).toMatch(/^errand-[0-9a-f]{16}$/);
  });
});

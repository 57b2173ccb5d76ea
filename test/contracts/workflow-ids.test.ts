import { describe, expect, test } from 'vitest';
import { tenantSchema } from '../../src/api/auth-config';
import { childWorkflowId, errandWorkflowId, lastIdPart, tenantSpendWorkflowId, workflowIdSeparator } from '../../src/contracts/workflow-ids';

describe('workflow ids (one rule: parts joined by ~, never a /)', () => {
  test('delegations, sessions, children and days of spend', () => {
    const session = errandWorkflowId('3f9c2a7b1d4e5f60');
    expect(session).toBe('errand-3f9c2a7b1d4e5f60');
    expect(childWorkflowId(childWorkflowId(session, 'task-1'), 'task-2')).toBe('errand-3f9c2a7b1d4e5f60~task-1~task-2');
    expect(tenantSpendWorkflowId('acme.eu_1', '2026-12-06')).toBe('errand-spend~acme.eu_1~2026-12-06');
  });

  test('no id holds a /, and each survives a URL path as it is', () => {
    const ids = [childWorkflowId(errandWorkflowId('ab'), 'task-3'), tenantSpendWorkflowId('a-b.c_d', '2026-01-31')];
    for (const id of ids) {
      expect(id).not.toContain('/');
      expect(encodeURIComponent(id)).toBe(id);
    }
  });

  test('the separator is in no tenant name, so a day of spend splits back into its parts', () => {
    expect(tenantSchema.safeParse(`acme${workflowIdSeparator}x`).success).toBe(false);
    expect(tenantSpendWorkflowId('acme-1', '2026-12-06').split(workflowIdSeparator)).toEqual(['errand-spend', 'acme-1', '2026-12-06']);
  });

  test("the last part of an id is a task's id, whichever separator made it", () => {
    expect(lastIdPart('errand-ab~task-1~task-2')).toBe('task-2');
    expect(lastIdPart('errand-ab/task-4')).toBe('task-4');
    expect(lastIdPart('errand-ab')).toBe('errand-ab');
  });
});

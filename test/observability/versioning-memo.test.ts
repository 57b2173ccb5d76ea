import { describe, expect, test } from 'vitest';
import { startRequestJson } from '../../src/api/temporal-http-start';
import type { SubagentInput } from '../../src/contracts/subagent';
import { movesUpMemoValue, versioningMemo, versioningMemoKey } from '../../src/contracts/versioning';
import { subagentStartOptions } from '../../src/observability/start-options';

/**
 * A continuable is started with the memo that makes it move up to the current worker build (decision 0030),
 * by every start path; a one-shot subagent is started without one (it stays pinned).
 */

const input: SubagentInput = {
  label: 'memo test',
  prompt: 'hello',
  workingDir: 'work',
  system: {},
  route: { provider: 'scripted', model: 'scripted-model' },
  toolsets: ['developer'],
  maxTurns: 3,
  depth: 1,
  maxDepth: 1,
  activity: { modelCallTimeoutMs: 60_000, modelHeartbeatTimeoutMs: 5_000, toolCallTimeoutMs: 30_000, modelMaximumAttempts: 3 },
};

function memoOfHttpStart(start: SubagentInput): unknown {
  const visible = subagentStartOptions(start, { workflowId: 'errand-memo' });
  const body = JSON.parse(startRequestJson({ namespace: 'default' }, { workflowType: 'subagentWorkflow', workflowId: 'errand-memo', taskQueue: 'errand', args: [start], visible }, 'request-1')) as { memo?: { fields: Record<string, { data: string }> } };
  const field = body.memo?.fields[versioningMemoKey];
  return field ? JSON.parse(Buffer.from(field.data, 'base64').toString('utf8')) : undefined;
}

describe('the versioning memo', () => {
  test('a continuable carries it; a one-shot subagent does not', () => {
    expect(versioningMemo({ continuable: true })).toEqual({ [versioningMemoKey]: movesUpMemoValue });
    expect(versioningMemo({})).toEqual({});
    expect(subagentStartOptions({ ...input, continuable: true }, { workflowId: 'errand-memo' }).memo).toEqual({ [versioningMemoKey]: movesUpMemoValue });
    expect(subagentStartOptions(input, { workflowId: 'errand-memo' }).memo).toBeUndefined();
  });

  test("the HTTP API start sends it as the SDK's start does", () => {
    expect(memoOfHttpStart({ ...input, continuable: true })).toBe(movesUpMemoValue);
    expect(memoOfHttpStart(input)).toBeUndefined();
  });
});

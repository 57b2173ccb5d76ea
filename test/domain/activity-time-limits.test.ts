import { describe, expect, test } from 'vitest';
import type { AgentHookGroup } from '../../src/contracts/agent-hooks';
import { checkActivityMarginMs } from '../../src/contracts/limits/sources';
import { runCommandMaxTimeoutMs } from '../../src/contracts/limits/tools';
import { hookActivityTimeoutMs, hooksSeconds, toolActivityTimeoutMs, toolTimeLimitMs } from '../../src/domain/activity-time-limits';

const groups: AgentHookGroup[] = [
  { matcher: 'Bash', hooks: [{ command: 'a', timeoutSeconds: 400 }, { command: 'b', timeoutSeconds: 60 }] },
  { hooks: [{ type: 'http', url: 'https://hooks.example/x', timeoutSeconds: 30 }] },
];

describe('activity time limits', () => {
  test("a hook call's limit is every hook of its event (they run one after another) and the margin", () => {
    expect(hooksSeconds(groups)).toBe(490);
    expect(hooksSeconds(undefined)).toBe(0);
    expect(hookActivityTimeoutMs(groups)).toBe(490_000 + checkActivityMarginMs);
  });

  test("run_command's timeout_ms is its own limit, clamped as the tool clamps it; other tools have none", () => {
    expect(toolTimeLimitMs('developer__run_command', { command: 'make', timeout_ms: 450_000 })).toBe(450_000);
    expect(toolTimeLimitMs('developer__run_command', { command: 'make', timeout_ms: 10_000_000 })).toBe(runCommandMaxTimeoutMs);
    expect(toolTimeLimitMs('developer__run_command', { command: 'make' })).toBeUndefined();
    expect(toolTimeLimitMs('developer__read_file', { timeout_ms: 450_000 })).toBeUndefined();
  });

  test("a tool call's limit: the configured one, or the tool's own and the margin when longer, and its hooks' on top", () => {
    expect(toolActivityTimeoutMs(300_000, {}, undefined)).toBe(300_000);
    expect(toolActivityTimeoutMs(300_000, { timeLimitMs: 10_000 }, undefined)).toBe(300_000);
    expect(toolActivityTimeoutMs(300_000, { timeLimitMs: 600_000 }, undefined)).toBe(600_000 + checkActivityMarginMs);
    expect(toolActivityTimeoutMs(300_000, {}, { preToolUse: groups, postToolUse: [{ hooks: [{ command: 'c', timeoutSeconds: 10 }] }] })).toBe(300_000 + 500_000);
  });
});

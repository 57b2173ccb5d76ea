import type { AgentHookGroup } from '../contracts/agent-hooks';
import { checkActivityMarginMs } from '../contracts/limits/sources';
import { runCommandMaxTimeoutMs, toolNameSeparator } from '../contracts/limits/tools';

/*
 * Time limits of the activities that run an agent file's hooks and tools (decision 0032): an activity must
 * outlast what it runs, or it times out, is retried and runs its hooks and its tool again. A hook's limit is
 * its own (up to `agentHookMaxTimeoutSeconds`); `run_command` takes `timeout_ms` (up to
 * `runCommandMaxTimeoutMs`). Matchers are RE2 expressions, which the workflow cannot run, so every hook of
 * the event counts (the most that can match). Pure: the workflow sets each call's limit from these.
 */

/** The qualified name of the built-in `run_command` (the developer toolset's). */
const runCommandTool = `developer${toolNameSeparator}run_command`;

/** Seconds the hooks of these groups may take together (they run one after another). */
export function hooksSeconds(groups: readonly AgentHookGroup[] | undefined): number {
  return (groups ?? []).reduce((sum, group) => sum + group.hooks.reduce((total, hook) => total + hook.timeoutSeconds, 0), 0);
}

/** The start-to-close limit of one call of the hook activity: its hooks' limits and the margin a check gets. */
export function hookActivityTimeoutMs(groups: readonly AgentHookGroup[] | undefined): number {
  return hooksSeconds(groups) * 1_000 + checkActivityMarginMs;
}

/** `run_command`'s own time limit for these arguments (clamped as the tool clamps it), or undefined for other tools (found where the arguments are, and sent to the workflow with the call). */
export function toolTimeLimitMs(name: string, args: unknown): number | undefined {
  if (name !== runCommandTool) return undefined;
  const asked = typeof args === 'object' && args !== null && 'timeout_ms' in args ? (args as { timeout_ms?: unknown }).timeout_ms : undefined;
  return typeof asked === 'number' && Number.isFinite(asked) && asked > 0 ? Math.min(asked, runCommandMaxTimeoutMs) : undefined;
}

/**
 * The start-to-close limit of one tool call: the configured tool-call limit, or the tool's own limit and a
 * margin when that is longer, and the time its PreToolUse and PostToolUse hooks may take on top.
 */
export function toolActivityTimeoutMs(baseMs: number, call: { timeLimitMs?: number | undefined }, hooks: { preToolUse?: AgentHookGroup[]; postToolUse?: AgentHookGroup[] } | undefined): number {
  const own = call.timeLimitMs === undefined ? undefined : Math.min(call.timeLimitMs, runCommandMaxTimeoutMs);
  const tool = own === undefined ? baseMs : Math.max(baseMs, own + checkActivityMarginMs);
  return tool + (hooksSeconds(hooks?.preToolUse) + hooksSeconds(hooks?.postToolUse)) * 1_000;
}

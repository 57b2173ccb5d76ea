import { RE2JS } from 're2js';
import type { AgentHookGroup, AgentHooksWire } from '../contracts/agent-hooks';
import type { ToolPolicyNarrowingWire } from '../contracts/agent-wire';
import type { JsonObject, JsonValue } from '../contracts/json';
import { agentHookFeedbackMaxChars, toolNameSeparator } from '../contracts/limits';
import type { CommandOptions } from '../tools/command-environment';
import type { PathRules } from '../tools/confine-path';
import { runShellCommand } from '../tools/developer/run-command';
import { developerToolsetName } from '../tools/developer-toolset-name';
import { checkToolCall, type ToolPolicyConfig } from '../tools/tool-policy';
import { outputPreview } from './check-activities';

/**
 * Runs an agent file's command hooks (Claude Code `hooks`, decision 0032) the way Claude Code does: the
 * event's JSON on stdin, exit code 2 = block with stderr as the feedback, exit code 0 = go on, with a JSON
 * answer on stdout read when there is one (`decision: "block"`, `hookSpecificOutput.permissionDecision`,
 * `additionalContext`), any other exit code = a non-blocking error. A hook runs as `run_command` runs: the
 * environment allow-list, the sandbox where one is configured, the confined working directory, and only
 * where the operator's policy lets `run_command` run without asking (a hook is a shell command; nobody is
 * there to approve it).
 */

/** What the hook runner needs of the worker. */
export interface HookRunnerDependencies {
  /** How `run_command` runs on this worker (environment allow-list, sandbox, containment). */
  commands: CommandOptions;
  paths: PathRules;
  toolPolicy?: ToolPolicyConfig;
}

/** Where and for whom hooks run. */
export interface HookRunContext {
  hooks: AgentHooksWire;
  workflowId: string;
  workingDir: string;
  toolPolicy?: ToolPolicyNarrowingWire[];
  abortSignal: AbortSignal;
}

/** What the hooks of one event came to. JSON. */
export interface HookRunOutcome {
  /** A hook blocked: the tool call does not run (PreToolUse), or the subagent goes on working (Stop). */
  blocked: boolean;
  /** What the hooks said to the model (the blocking reason, PostToolUse feedback), one text per hook. */
  feedback: string[];
  /** `additionalContext` (and, for SubagentStart, plain stdout) to add to the model's context. */
  context: string[];
  /** What went wrong without blocking (exit codes other than 0 and 2, time limits, a refused hook), for the log. */
  notes: string[];
}

/** The Claude Code names of errand's developer tools, as hooks' matchers and scripts know them. */
const claudeNames: Readonly<Record<string, readonly string[]>> = {
  [`${developerToolsetName}${toolNameSeparator}run_command`]: ['Bash'],
  [`${developerToolsetName}${toolNameSeparator}read_file`]: ['Read'],
  [`${developerToolsetName}${toolNameSeparator}write_file`]: ['Write', 'Edit', 'MultiEdit'],
  [`${developerToolsetName}${toolNameSeparator}search_text`]: ['Grep'],
  [`${developerToolsetName}${toolNameSeparator}list_directory`]: ['Glob', 'LS'],
};

/**
 * The names a tool is known by to a hook: its Claude Code name(s) (`Bash` for run_command), Claude Code's
 * name of an MCP tool (`mcp__<server>__<tool>`), and errand's own qualified name. The first is the
 * `tool_name` a hook reads.
 */
export function hookToolNames(qualifiedName: string): string[] {
  const claude = claudeNames[qualifiedName];
  if (claude) return [...claude, qualifiedName];
  return [`mcp__${qualifiedName}`, qualifiedName];
}

/** Whether a group's matcher matches one of the names (RE2: linear time, whatever the pattern). */
export function matcherMatches(matcher: string | undefined, names: readonly string[]): boolean {
  if (matcher === undefined) return true;
  let pattern: RE2JS;
  try {
    pattern = RE2JS.compile(`^(?:${matcher})$`);
  } catch {
    // A pattern RE2 cannot compile (a lookahead): the hook runs for every tool rather than for none.
    return true;
  }
  return names.some((name) => pattern.matches(name));
}

/** The groups of `groups` whose matcher matches (all, for events without a tool). */
export function matchingHooks(groups: readonly AgentHookGroup[] | undefined, toolNames: readonly string[] | undefined): AgentHookGroup['hooks'] {
  return (groups ?? []).filter((group) => toolNames === undefined || matcherMatches(group.matcher, toolNames)).flatMap((group) => group.hooks);
}

/** The fields Claude Code gives every hook, as errand has them. */
export function commonHookInput(context: Pick<HookRunContext, 'hooks' | 'workflowId' | 'workingDir'>, event: string): JsonObject {
  return {
    session_id: context.workflowId,
    cwd: context.workingDir,
    permission_mode: context.hooks.permissionMode ?? 'default',
    hook_event_name: event,
    agent_id: context.workflowId,
    agent_type: context.hooks.agentName,
  };
}

/** The policy's word on running a shell command for a hook: undefined when it may run. */
function policyRefusal(deps: HookRunnerDependencies, context: HookRunContext): string | undefined {
  const verdict = checkToolCall(deps.toolPolicy, context.toolPolicy ?? [], `${developerToolsetName}${toolNameSeparator}run_command`, false);
  return verdict.run ? undefined : verdict.message;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** A hook's feedback as the model gets it: capped, start and end kept. */
function capped(feedback: string): string {
  return outputPreview(feedback, agentHookFeedbackMaxChars);
}

/**
 * Runs the hooks one after another (Claude Code runs a group's hooks side by side; one after another
 * keeps their effects in order), each with the event's JSON on stdin. A blocking hook stops the ones
 * after it: the decision is made.
 */
export async function runHooks(
  hooks: AgentHookGroup['hooks'],
  event: string,
  input: JsonObject,
  context: HookRunContext,
  deps: HookRunnerDependencies,
): Promise<HookRunOutcome> {
  const outcome: HookRunOutcome = { blocked: false, feedback: [], context: [], notes: [] };
  if (hooks.length === 0) return outcome;
  const refusal = policyRefusal(deps, context);
  if (refusal !== undefined) {
    const why = `the ${event} hooks of ${context.hooks.file} could not run: ${refusal} (hooks are shell commands and run only where run_command runs without asking)`;
    // A PreToolUse hook may be there to stop the call: without it, the call does not run.
    if (event === 'PreToolUse') return { blocked: true, feedback: [`${why}; the call is blocked`], context: [], notes: [why] };
    return { ...outcome, notes: [why] };
  }
  const stdin = JSON.stringify({ ...commonHookInput(context, event), ...input });
  for (const hook of hooks) {
    const ran = await runShellCommand(hook.command, { workingDir: context.workingDir, timeoutMs: hook.timeoutSeconds * 1_000, abortSignal: context.abortSignal, input: stdin }, deps.commands, deps.paths);
    const name = `${event} hook "${preview(hook.command)}"`;
    if (ran.refused !== undefined) {
      outcome.notes.push(`${name} could not run: ${ran.refused}`);
      continue;
    }
    if (ran.stoppedBy !== undefined) {
      outcome.notes.push(ran.stoppedBy === 'timeout' ? `${name} timed out after ${hook.timeoutSeconds} s and was killed` : `${name} was cancelled`);
      continue;
    }
    if (ran.exitCode === 2) {
      outcome.blocked = true;
      outcome.feedback.push(capped(ran.stderr.trim() || `the ${event} hook gave no reason`));
      break;
    }
    if (ran.exitCode !== 0) {
      outcome.notes.push(`${name} ${ran.exitCode === null ? `was killed by signal ${ran.signal ?? 'unknown'}` : `exited with code ${ran.exitCode}`} (not blocking)${ran.stderr.trim() ? `: ${preview(ran.stderr.trim())}` : ''}`);
      continue;
    }
    if (readAnswer(ran.stdout, event, outcome)) break;
  }
  return outcome;
}

/** Reads a hook's stdout after exit code 0; returns true when it blocked. */
function readAnswer(stdout: string, event: string, outcome: HookRunOutcome): boolean {
  const trimmed = stdout.trim();
  let answer: Record<string, unknown> | undefined;
  if (trimmed.startsWith('{')) {
    try {
      answer = record(JSON.parse(trimmed) as JsonValue);
    } catch {
      answer = undefined;
    }
  }
  if (!answer) {
    // Plain stdout is context where Claude Code adds it to the context (the start of a session or subagent).
    if (event === 'SubagentStart' && trimmed !== '') outcome.context.push(capped(trimmed));
    return false;
  }
  const specific = record(answer.hookSpecificOutput);
  const additional = text(specific?.additionalContext);
  if (additional !== undefined) outcome.context.push(capped(additional));
  const stopReason = text(answer.stopReason);
  if (answer.continue === false && event !== 'Stop' && event !== 'SubagentStop') {
    outcome.blocked = true;
    outcome.feedback.push(capped(stopReason ?? `the ${event} hook said not to continue`));
    return true;
  }
  const decision = text(specific?.permissionDecision);
  if (event === 'PreToolUse' && (decision === 'deny' || decision === 'ask')) {
    const reason = text(specific?.permissionDecisionReason);
    outcome.blocked = true;
    outcome.feedback.push(capped(decision === 'deny'
      ? reason ?? 'the PreToolUse hook denied the call'
      : `the PreToolUse hook asked for a person's approval, which a hook cannot ask for in errand${reason ? `: ${reason}` : ''}`));
    return true;
  }
  if (answer.decision === 'block') {
    outcome.blocked = true;
    outcome.feedback.push(capped(text(answer.reason) ?? `the ${event} hook blocked without a reason`));
    return true;
  }
  return false;
}

function preview(value: string): string {
  const line = value.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 77)}…` : line;
}

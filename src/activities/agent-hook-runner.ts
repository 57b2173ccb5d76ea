import { fillHeaderVariables, headerVariables, type AgentHookGroup, type AgentHooksWire, type AgentHttpHook } from '../contracts/agent-hooks';
import type { ToolPolicyNarrowingWire } from '../contracts/agent-wire';
import type { JsonObject, JsonValue } from '../contracts/json';
import { agentHookFeedbackMaxChars, agentHookHttpAnswerMaxBytes } from '../contracts/limits/memory';
import { toolNameSeparator } from '../contracts/limits/tools';
import { commandEnvironment, type CommandOptions } from '../tools/command-environment';
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
 * Where a run of hooks stands, so a retried activity resumes instead of running finished hooks again: the
 * outcome after the first `count` hooks, and how to store it after each one.
 */
export interface HookProgress {
  /** The hooks that already ran (in an earlier attempt) and the outcome after them. */
  done?: { count: number; outcome: HookRunOutcome } | undefined;
  /** Stores the outcome after `count` hooks ran. */
  save(count: number, outcome: HookRunOutcome): Promise<void>;
}

/**
 * Runs the hooks one after another (Claude Code runs a group's hooks side by side; one after another
 * keeps their effects in order), each with the event's JSON on stdin. A blocking hook stops the ones
 * after it: the decision is made. With `progress`, the outcome is stored after each hook and a retry
 * starts after the last one stored.
 */
export async function runHooks(
  hooks: AgentHookGroup['hooks'],
  event: string,
  input: JsonObject,
  context: HookRunContext,
  deps: HookRunnerDependencies,
  progress?: HookProgress,
): Promise<HookRunOutcome> {
  const resumed = progress?.done;
  const outcome: HookRunOutcome = resumed ? structuredClone(resumed.outcome) : { blocked: false, feedback: [], context: [], notes: [] };
  if (hooks.length === 0) return outcome;
  const stdin = JSON.stringify({ ...commonHookInput(context, event), ...input });
  for (const [index, hook] of hooks.entries()) {
    if (index < (resumed?.count ?? 0)) continue;
    if ((await runHook(hook, event, stdin, context, deps, outcome)) === 'decided') return outcome;
    await progress?.save(index + 1, outcome);
  }
  return outcome;
}

/** Runs one hook into `outcome`; `decided` when no hook after it runs (a block, or a decision in its answer). */
async function runHook(hook: AgentHookGroup['hooks'][number], event: string, stdin: string, context: HookRunContext, deps: HookRunnerDependencies, outcome: HookRunOutcome): Promise<'decided' | 'next'> {
  if (hook.type === 'http') {
    const refused = httpHookRefusal(hook, deps);
    if (refused !== undefined) {
      const why = `the ${event} http hook of ${context.hooks.file} to ${hook.url} could not run: ${refused}`;
      outcome.notes.push(why);
      // A PreToolUse hook may be there to stop the call: without it, the call does not run.
      if (event !== 'PreToolUse') return 'next';
      outcome.blocked = true;
      outcome.feedback.push(`${why}; the call is blocked`);
      return 'decided';
    }
    return (await postHook(hook, event, stdin, context, deps, outcome)) ? 'decided' : 'next';
  }
  const refusal = policyRefusal(deps, context);
  if (refusal !== undefined) {
    const why = `the ${event} hooks of ${context.hooks.file} could not run: ${refusal} (hooks are shell commands and run only where run_command runs without asking)`;
    outcome.notes.push(why);
    if (event !== 'PreToolUse') return 'next';
    outcome.blocked = true;
    outcome.feedback.push(`${why}; the call is blocked`);
    return 'decided';
  }
  const ran = await runShellCommand(hook.command, { workingDir: context.workingDir, timeoutMs: hook.timeoutSeconds * 1_000, abortSignal: context.abortSignal, input: stdin }, deps.commands, deps.paths);
  const name = `${event} hook "${preview(hook.command)}"`;
  if (ran.refused !== undefined) {
    outcome.notes.push(`${name} could not run: ${ran.refused}`);
    return 'next';
  }
  if (ran.stoppedBy !== undefined) {
    outcome.notes.push(ran.stoppedBy === 'timeout' ? `${name} timed out after ${hook.timeoutSeconds} s and was killed` : `${name} was cancelled`);
    return 'next';
  }
  if (ran.exitCode === 2) {
    outcome.blocked = true;
    outcome.feedback.push(capped(ran.stderr.trim() || `the ${event} hook gave no reason`));
    return 'decided';
  }
  if (ran.exitCode !== 0) {
    outcome.notes.push(`${name} ${ran.exitCode === null ? `was killed by signal ${ran.signal ?? 'unknown'}` : `exited with code ${ran.exitCode}`} (not blocking)${ran.stderr.trim() ? `: ${preview(ran.stderr.trim())}` : ''}`);
    return 'next';
  }
  return readAnswer(ran.stdout, event, outcome) ? 'decided' : 'next';
}

/**
 * An encoded `/`, `\` or `.` in a path: the URL parser keeps `%2F` and `%5C` as written (and a lone `%2E`
 * inside a segment), so `/hooks/..%2Fadmin` starts with `/hooks/` here while a server that decodes
 * before it routes serves `/admin`. An encoded `%` (`%25`) is the same thing for a server or proxy that
 * decodes twice (`..%252F`). A hook has no need of them; refusing them is simpler and safer than guessing
 * how the receiving server decodes.
 */
const encodedSeparator = /%(?:2f|5c|2e|25)/i;

/**
 * Whether an http hook's URL is one the operator allows (`ERRAND_HOOK_URLS`): same origin as a listed
 * prefix, a path that starts with the prefix's path at a `/`, and no encoded separator in that path
 * (see {@link encodedSeparator}). Undefined when allowed, else why not.
 */
export function httpHookRefusal(hook: Pick<AgentHttpHook, 'url'>, deps: Pick<HookRunnerDependencies, 'commands'>): string | undefined {
  const allowed = deps.commands.hookUrls ?? [];
  if (allowed.length === 0) return 'this worker allows no http hooks (the operator lists the URLs they may reach in ERRAND_HOOK_URLS)';
  let url: URL;
  try {
    url = new URL(hook.url);
  } catch {
    return 'its URL is not valid';
  }
  if (encodedSeparator.test(url.pathname)) return 'its URL path holds an encoded "/", "\\", "." or "%" (%2F, %5C, %2E, %25), which could lead a server that decodes it outside the allowed prefix';
  const match = allowed.some((prefixText) => {
    const prefix = new URL(prefixText);
    if (prefix.origin !== url.origin) return false;
    const base = prefix.pathname.endsWith('/') ? prefix.pathname : `${prefix.pathname}/`;
    return url.pathname === prefix.pathname || url.pathname.startsWith(base);
  });
  return match ? undefined : 'its URL is not under one the operator allows in ERRAND_HOOK_URLS';
}

/**
 * POSTs the event's JSON to an http hook and reads its answer as Claude Code does: a 2xx with an empty body
 * goes on; a 2xx with a JSON object is read like a command hook's stdout; any other body, another status,
 * a redirect (never followed), a time limit or a failed connection is a non-blocking error. Header values
 * get variables only from `allowedEnvVars` names that the command environment allow-list also passes: an
 * agent file cannot send the worker's credentials anywhere. Returns true when the hook blocked.
 */
async function postHook(hook: AgentHttpHook, event: string, body: string, context: HookRunContext, deps: HookRunnerDependencies, outcome: HookRunOutcome): Promise<boolean> {
  const name = `${event} http hook ${hook.url}`;
  const passed = commandEnvironment(deps.commands);
  const values: Record<string, string> = {};
  for (const variable of hook.allowedEnvVars ?? []) {
    const value = passed[variable];
    if (value !== undefined) values[variable] = value;
  }
  const headers: Record<string, string> = {};
  for (const [header, value] of Object.entries(hook.headers ?? {})) {
    for (const variable of headerVariables(value)) {
      if (values[variable] === undefined && (hook.allowedEnvVars ?? []).includes(variable)) outcome.notes.push(`${name}: header ${header} uses $${variable}, which the worker does not pass to commands (ERRAND_COMMAND_ENV): it was sent empty`);
    }
    headers[header] = fillHeaderVariables(value, values);
  }
  const timeout = AbortSignal.timeout(hook.timeoutSeconds * 1_000);
  let response: Response;
  try {
    response = await fetch(hook.url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
      redirect: 'manual',
      signal: AbortSignal.any([timeout, context.abortSignal]),
    });
  } catch (error) {
    outcome.notes.push(timeout.aborted ? `${name} timed out after ${hook.timeoutSeconds} s` : context.abortSignal.aborted ? `${name} was cancelled` : `${name} could not be reached (not blocking): ${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
  const text = await readCapped(response);
  if (response.status < 200 || response.status > 299) {
    outcome.notes.push(`${name} answered ${response.status}${response.status >= 300 && response.status < 400 ? ' (a redirect, not followed)' : ''} (not blocking)`);
    return false;
  }
  if (text === undefined) {
    outcome.notes.push(`${name} answered more than ${agentHookHttpAnswerMaxBytes} bytes (not blocking)`);
    return false;
  }
  const trimmed = text.trim();
  if (trimmed === '') return false;
  if (!trimmed.startsWith('{')) {
    outcome.notes.push(`${name} answered a body that is not a JSON object (not blocking)`);
    return false;
  }
  return readAnswer(trimmed, event, outcome);
}

/** The body of a response, or undefined when it is longer than an http hook's answer may be. */
async function readCapped(response: Response): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > agentHookHttpAnswerMaxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
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

import { z } from 'zod';
import { agentHookDefaultTimeoutSeconds, agentHookHttpHeadersMax, agentHookMatcherMaxChars, agentHookMaxTimeoutSeconds } from './limits/memory';

/**
 * Claude Code agent-file `hooks` as errand runs them (SEMANTICS §6, decision 0032): the events of the
 * subagent's own life, each with matcher groups of `command` and `http` hooks. Parsed here (pure) from the frontmatter
 * value; JSON only, so it travels in the subagent's workflow input.
 */

/** The events errand runs for a subagent, by their Claude Code names (`Stop` in an agent file means `SubagentStop`, as in Claude Code). */
export const agentHookEvents = ['SubagentStart', 'PreToolUse', 'PostToolUse', 'Stop', 'SubagentStop'] as const;
/** One event name. */
export type AgentHookEvent = (typeof agentHookEvents)[number];

/** Events of Claude Code that never happen to a delegated subagent in errand (or that errand has no place for). */
const otherClaudeEvents = ['UserPromptSubmit', 'Notification', 'SessionStart', 'SessionEnd', 'PreCompact', 'PermissionRequest', 'PostToolUseFailure'];

/** One `command` hook: a shell command, run like `run_command`, with its time limit. */
export interface AgentCommandHook {
  type?: 'command';
  command: string;
  timeoutSeconds: number;
}

/**
 * One `http` hook: the event's JSON POSTed by the worker to `url`, which only a URL the operator allows
 * (`ERRAND_HOOK_URLS`) may be; `headers` values may name variables (`$NAME`, `${NAME}`) filled only for
 * the names in `allowedEnvVars` that the command environment allow-list passes too.
 */
export interface AgentHttpHook {
  type: 'http';
  url: string;
  headers?: Record<string, string>;
  allowedEnvVars?: string[];
  timeoutSeconds: number;
}

/** A hook errand runs. */
export type AgentHook = AgentCommandHook | AgentHttpHook;

/** A matcher group: the hooks run for a tool call whose name the matcher matches (all, without one). */
export interface AgentHookGroup {
  /** A regular expression over the tool name, anchored at both ends (Claude Code's `Edit|Write`); absent, empty or `*` = every tool. */
  matcher?: string;
  hooks: AgentHook[];
}

/** An agent's hooks by the point of its life they run at. */
export interface AgentHooks {
  /** `SubagentStart`: before the first turn; its output joins the system prompt. */
  start?: AgentHookGroup[];
  /** `PreToolUse`: before each matching tool call; exit code 2 (or a deny) blocks the call. */
  preToolUse?: AgentHookGroup[];
  /** `PostToolUse`: after each matching tool call; exit code 2 (or a block) gives the model its feedback. */
  postToolUse?: AgentHookGroup[];
  /** `Stop` / `SubagentStop`: when the subagent answers; exit code 2 (or a block) sends it back to work. */
  stop?: AgentHookGroup[];
}

/** What an agent file's hooks travel as (the agent's name and permission mode go with them, for the hooks' input). */
export interface AgentHooksWire extends AgentHooks {
  /** The agent's name: `agent_type` in the hooks' input. */
  agentName: string;
  /** The agent file, for messages (`<store>: <path>`). */
  file: string;
  /** `permission_mode` in the hooks' input. */
  permissionMode?: string;
  /**
   * The orchestration tools (`delegate`, `load`, ...) whose calls the `PreToolUse` / `PostToolUse` matchers
   * match, found (with RE2) where the agent file was read: the workflow runs those calls itself and looks
   * the name up here, so it starts a hook activity only for a call that has hooks (decision 0032).
   */
  orchestrationTools?: { preToolUse?: string[]; postToolUse?: string[] };
  /**
   * The MCP servers the delegation declared (an agent file's `mcpServers`, a recipe's extensions), by the
   * toolset name errand runs them under (`recipe-<name>-<hash>`) → the name they were declared with: a
   * hook's matcher knows a server's tools as Claude Code names them, `mcp__<declared name>__<tool>`.
   */
  serverNames?: Record<string, string>;
}

const commandHookSchema = z.object({ type: z.literal('command').optional(), command: z.string(), timeoutSeconds: z.number() });
const httpHookSchema = z.object({ type: z.literal('http'), url: z.string(), headers: z.record(z.string(), z.string()).optional(), allowedEnvVars: z.array(z.string()).optional(), timeoutSeconds: z.number() });
const groupSchema = z.object({ matcher: z.string().optional(), hooks: z.array(z.union([httpHookSchema, commandHookSchema])) });
/** Zod schema of {@link AgentHooks}, for snapshots crossing a durable boundary. */
export const agentHooksSchema = z.object({
  start: z.array(groupSchema).optional(),
  preToolUse: z.array(groupSchema).optional(),
  postToolUse: z.array(groupSchema).optional(),
  stop: z.array(groupSchema).optional(),
});

/** Where each Claude Code event goes. */
const eventKeys: Record<AgentHookEvent, keyof AgentHooks> = {
  SubagentStart: 'start',
  PreToolUse: 'preToolUse',
  PostToolUse: 'postToolUse',
  Stop: 'stop',
  SubagentStop: 'stop',
};

/** The events whose matcher is about tool names. */
const toolEvents = new Set<AgentHookEvent>(['PreToolUse', 'PostToolUse']);

/** Outcome of reading `hooks`. */
export interface AgentHooksParse {
  hooks?: AgentHooks;
  errors: string[];
  warnings: string[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads an agent file's `hooks` (`{ <Event>: [{ matcher?, hooks: [{ type: command, command, timeout? }] }] }`).
 * Errors name the field and what would be valid. A hook errand cannot run is reported: a warning for events
 * that do not happen to a subagent, and an error for a `PreToolUse` hook of another type than `command`
 * (it may be there to block calls, and the agent must not run without it).
 */
export function parseAgentHooks(value: unknown, file: string): AgentHooksParse {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (value === null || value === undefined) return { errors, warnings };
  if (!isRecord(value)) return { errors: [`${file}: hooks: expected a map of event names (${agentHookEvents.join(', ')}) to lists of matcher groups`], warnings };
  const hooks: AgentHooks = {};
  for (const [event, groups] of Object.entries(value)) {
    const where = `${file}: hooks.${event}`;
    if (!(agentHookEvents as readonly string[]).includes(event)) {
      warnings.push(otherClaudeEvents.includes(event)
        ? `${where}: not run by errand: the event does not happen to a delegated subagent (errand runs ${agentHookEvents.join(', ')})`
        : `${where}: unknown hook event, ignored (errand runs ${agentHookEvents.join(', ')})`);
      continue;
    }
    const known = event as AgentHookEvent;
    if (!Array.isArray(groups)) {
      errors.push(`${where}: expected a list of matcher groups ({ matcher, hooks: [{ type: command, command }] })`);
      continue;
    }
    const parsedGroups: AgentHookGroup[] = [];
    groups.forEach((group: unknown, groupIndex) => {
      const at = `${where}[${groupIndex}]`;
      if (!isRecord(group)) {
        errors.push(`${at}: expected a map with hooks (and a matcher for tool events)`);
        return;
      }
      for (const key of Object.keys(group)) if (key !== 'matcher' && key !== 'hooks') warnings.push(`${at}.${key}: unknown field, ignored`);
      let matcher: string | undefined;
      if (group.matcher !== undefined && group.matcher !== null) {
        if (typeof group.matcher !== 'string') {
          errors.push(`${at}.matcher: expected a string (a tool name or a regular expression such as Edit|Write)`);
          return;
        }
        const trimmed = group.matcher.trim();
        if (trimmed.length > agentHookMatcherMaxChars) {
          errors.push(`${at}.matcher: at most ${agentHookMatcherMaxChars} characters`);
          return;
        }
        if (trimmed !== '' && trimmed !== '*') {
          try {
            new RegExp(trimmed);
          } catch (error) {
            errors.push(`${at}.matcher: not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`);
            return;
          }
          if (toolEvents.has(known)) matcher = trimmed;
          else warnings.push(`${at}.matcher: ${known} has no tool to match; the matcher is ignored`);
        }
      }
      if (!Array.isArray(group.hooks)) {
        errors.push(`${at}.hooks: expected a list of hooks ({ type: command, command } or { type: http, url })`);
        return;
      }
      const commands: AgentHook[] = [];
      group.hooks.forEach((hook: unknown, hookIndex) => {
        const hookAt = `${at}.hooks[${hookIndex}]`;
        if (!isRecord(hook)) {
          errors.push(`${hookAt}: expected a map ({ type: command, command } or { type: http, url })`);
          return;
        }
        const type = hook.type ?? 'command';
        if (type !== 'command' && type !== 'http') {
          const text = `${hookAt}.type: "${String(type)}" hooks are not run by errand (only command and http hooks are)`;
          if (known === 'PreToolUse') errors.push(`${text}; a PreToolUse hook may be there to block calls, so the agent does not run without it`);
          else warnings.push(`${text}; this hook is skipped`);
          return;
        }
        let timeoutSeconds = agentHookDefaultTimeoutSeconds;
        if (hook.timeout !== undefined && hook.timeout !== null) {
          const timeout = typeof hook.timeout === 'string' && /^\s*\d+\s*$/.test(hook.timeout) ? Number(hook.timeout) : hook.timeout;
          if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1) {
            errors.push(`${hookAt}.timeout: expected a whole number of seconds from 1 to ${agentHookMaxTimeoutSeconds}`);
            return;
          }
          // An agent file lowers the limit, never raises it.
          if (timeout > agentHookMaxTimeoutSeconds) warnings.push(`${hookAt}.timeout: ${timeout} s is more than errand allows for a hook; it runs with ${agentHookMaxTimeoutSeconds} s`);
          timeoutSeconds = Math.min(timeout, agentHookMaxTimeoutSeconds);
        }
        if (type === 'http') {
          const http = parseHttpHook(hook, hookAt, timeoutSeconds, errors, warnings);
          if (http) commands.push(http);
          return;
        }
        if (typeof hook.command !== 'string' || hook.command.trim() === '') {
          errors.push(`${hookAt}.command: expected a non-empty shell command`);
          return;
        }
        for (const key of Object.keys(hook)) if (!['type', 'command', 'timeout'].includes(key)) warnings.push(`${hookAt}.${key}: unknown field, ignored`);
        commands.push({ command: hook.command, timeoutSeconds });
      });
      if (commands.length > 0) parsedGroups.push({ ...(matcher !== undefined ? { matcher } : {}), hooks: commands });
    });
    if (parsedGroups.length > 0) {
      const key = eventKeys[known];
      hooks[key] = [...(hooks[key] ?? []), ...parsedGroups];
    }
  }
  return { ...(Object.keys(hooks).length > 0 ? { hooks } : {}), errors, warnings };
}

const envReference = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** The variable names a header value refers to (`$NAME`, `${NAME}`). */
export function headerVariables(value: string): string[] {
  return [...value.matchAll(envReference)].map((match) => match[1] ?? match[2] ?? '');
}

/** A header value with its variables filled from `values` (a name without a value becomes empty, as in Claude Code). */
export function fillHeaderVariables(value: string, values: Readonly<Record<string, string>>): string {
  return value.replace(envReference, (_whole, braced: string | undefined, bare: string | undefined) => values[braced ?? bare ?? ''] ?? '');
}

/** Reads an `http` hook; errors and warnings name the field. */
function parseHttpHook(hook: Record<string, unknown>, at: string, timeoutSeconds: number, errors: string[], warnings: string[]): AgentHttpHook | undefined {
  for (const key of Object.keys(hook)) if (!['type', 'url', 'headers', 'allowedEnvVars', 'timeout'].includes(key)) warnings.push(`${at}.${key}: unknown field, ignored`);
  if (typeof hook.url !== 'string' || hook.url.trim() === '') {
    errors.push(`${at}.url: expected the http(s) URL the hook POSTs the event to`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(hook.url.trim());
  } catch {
    errors.push(`${at}.url: "${hook.url}" is not a URL; expected an http(s) URL such as https://hooks.example.com/pre-tool-use`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    errors.push(`${at}.url: "${hook.url}" is not an http(s) URL`);
    return undefined;
  }
  if (url.username !== '' || url.password !== '') {
    errors.push(`${at}.url: a URL with a user name or password is not accepted; send a credential in a header from allowedEnvVars`);
    return undefined;
  }
  const result: AgentHttpHook = { type: 'http', url: url.href, timeoutSeconds };
  if (hook.allowedEnvVars !== undefined && hook.allowedEnvVars !== null) {
    if (!Array.isArray(hook.allowedEnvVars) || hook.allowedEnvVars.some((name) => typeof name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))) {
      errors.push(`${at}.allowedEnvVars: expected a list of environment variable names (e.g. [HOOK_TOKEN]), without "$"`);
      return undefined;
    }
    result.allowedEnvVars = hook.allowedEnvVars as string[];
  }
  if (hook.headers !== undefined && hook.headers !== null) {
    if (!isRecord(hook.headers) || Object.values(hook.headers).some((value) => typeof value !== 'string')) {
      errors.push(`${at}.headers: expected a map of header names to string values`);
      return undefined;
    }
    const headers = hook.headers as Record<string, string>;
    if (Object.keys(headers).length > agentHookHttpHeadersMax) {
      errors.push(`${at}.headers: at most ${agentHookHttpHeadersMax} headers`);
      return undefined;
    }
    const badName = Object.keys(headers).find((name) => !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name));
    if (badName !== undefined) {
      errors.push(`${at}.headers: "${badName}" is not a header name`);
      return undefined;
    }
    for (const [name, value] of Object.entries(headers)) {
      for (const variable of headerVariables(value)) {
        if (!(result.allowedEnvVars ?? []).includes(variable)) warnings.push(`${at}.headers.${name}: uses $${variable}, which allowedEnvVars does not list: it is sent empty`);
      }
    }
    result.headers = headers;
  }
  return result;
}

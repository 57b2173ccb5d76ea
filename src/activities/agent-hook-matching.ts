import { RE2JS } from 're2js';
import type { AgentHookGroup, AgentHooks, AgentHooksWire } from '../contracts/agent-hooks';
import { toolNameSeparator } from '../contracts/limits/tools';
import { isOrchestrationTool, OrchestrationTool } from '../domain/orchestration-tools';
import { developerToolsetName } from '../tools/developer-toolset-name';

/**
 * Which of an agent file's hooks run for a tool call (decision 0032): the names a tool is known by to a
 * hook, and matchers read with RE2. Apart from the hook runner, so the delegation planner (which the API
 * loads too) finds the orchestration tools with hooks without loading what runs commands.
 */

/** The Claude Code names of errand's developer tools, as hooks' matchers and scripts know them. */
const claudeNames: Readonly<Record<string, readonly string[]>> = {
  [`${developerToolsetName}${toolNameSeparator}run_command`]: ['Bash'],
  [`${developerToolsetName}${toolNameSeparator}read_file`]: ['Read'],
  [`${developerToolsetName}${toolNameSeparator}write_file`]: ['Write', 'Edit', 'MultiEdit'],
  [`${developerToolsetName}${toolNameSeparator}search_text`]: ['Grep'],
  [`${developerToolsetName}${toolNameSeparator}list_directory`]: ['Glob', 'LS'],
};

/**
 * The Claude Code names of errand's orchestration tools: `delegate` is Claude Code's subagent tool,
 * `Agent` (formerly `Task`, a name Claude Code still accepts in matchers), and
 * `send_message` is its `SendMessage`. `load`, `approve` and `list_subagent_models` have no counterpart
 * and are known by errand's name only.
 */
const orchestrationClaudeNames: Readonly<Record<string, readonly string[]>> = {
  [OrchestrationTool.delegate]: ['Agent', 'Task'],
  [OrchestrationTool.sendMessage]: ['SendMessage'],
};

/**
 * The names a tool is known by to a hook: its Claude Code name(s) (`Bash` for run_command, `Agent` and
 * `Task` for delegate), Claude Code's name of an MCP tool (`mcp__<server>__<tool>`), and errand's own
 * (qualified) name. The first is the `tool_name` a hook reads. A tool of a server the delegation declared
 * (`serverNames`: errand's toolset name → the declared name) is known by the declared name first, as
 * Claude Code names it (`mcp__github__create_issue`), and by errand's toolset name too: a guard hook
 * written for the agent's own server must never miss its tools.
 */
export function hookToolNames(qualifiedName: string, serverNames?: Readonly<Record<string, string>>): string[] {
  const claude = claudeNames[qualifiedName];
  if (claude) return [...claude, qualifiedName];
  if (isOrchestrationTool(qualifiedName)) return [...(orchestrationClaudeNames[qualifiedName] ?? []), qualifiedName];
  const separator = qualifiedName.indexOf(toolNameSeparator);
  const declared = separator > 0 ? serverNames?.[qualifiedName.slice(0, separator)] : undefined;
  if (declared !== undefined) return [`mcp__${declared}${toolNameSeparator}${qualifiedName.slice(separator + toolNameSeparator.length)}`, `mcp__${qualifiedName}`, qualifiedName];
  return [`mcp__${qualifiedName}`, qualifiedName];
}

/**
 * The orchestration tools whose calls an agent's `PreToolUse` and `PostToolUse` matchers match: the
 * workflow runs those tools itself and cannot run RE2, so this is found where the agent file is read
 * and travels with the hooks ({@link AgentHooksWire.orchestrationTools}). Undefined when none match.
 */
export function orchestrationToolsMatched(hooks: Pick<AgentHooks, 'preToolUse' | 'postToolUse'>): AgentHooksWire['orchestrationTools'] {
  const tools = Object.values(OrchestrationTool);
  const matched = (groups: readonly AgentHookGroup[] | undefined) => tools.filter((name) => matchingHooks(groups, hookToolNames(name)).length > 0);
  const preToolUse = matched(hooks.preToolUse);
  const postToolUse = matched(hooks.postToolUse);
  if (preToolUse.length === 0 && postToolUse.length === 0) return undefined;
  return { ...(preToolUse.length > 0 ? { preToolUse } : {}), ...(postToolUse.length > 0 ? { postToolUse } : {}) };
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

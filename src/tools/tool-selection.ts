import type { RecipeExtension } from '../contracts/recipe-schema';
import { recipeServerFromExtension, type RecipeServer } from './mcp-config';
import { toolPolicyNarrowingSchema, type ToolPolicyNarrowing } from './tool-policy';
import { matchesPattern } from './tool-name';
import type { ToolFilter } from './toolset-registry';

/**
 * Which tools a delegation gets (SEMANTICS §2), as one pure function:
 *
 *   tools = the parent's toolsets
 *         ∩ the `extensions` argument (omitted = inherit, [] = none)
 *         ∩ the recipe's declared extensions (when it declares a list), recipe-declared MCP servers
 *           joining when the operator allows them
 *         ∩ the agent's `tools` allow-list − its `disallowedTools`, the agent's inline `mcpServers`
 *           joining like a recipe's servers
 *         (and within what the parent's own tool filter allowed).
 *
 * Every name that matches nothing is reported in `warnings`, for the calling model. No I/O; the only
 * imports from src/tools are pure (config conversion, pattern matching, policy schema).
 */

/** Claude Code tool names an agent file may list, mapped to errand's built-in tools. */
export const claudeToolNames: Readonly<Record<string, readonly string[]>> = {
  read: ['developer__read_file'],
  write: ['developer__write_file'],
  edit: ['developer__write_file'],
  multiedit: ['developer__write_file'],
  bash: ['developer__run_command'],
  grep: ['developer__search_text'],
  glob: ['developer__list_directory'],
  ls: ['developer__list_directory'],
};

/** goose platform extensions whose job errand does itself (no toolset needed, nothing to report). */
const providedPlatformExtensions = new Set(['summon']);

/** What the selection starts from. */
export interface ToolSelectionInput {
  /** The delegating workflow's tools. */
  parent: {
    toolsets: readonly string[];
    toolFilter?: ToolFilter;
    /** Recipe-declared servers among the parent's toolsets (their configs travel with the input). */
    recipeServers?: readonly RecipeServer[];
    /** Policy narrowings the parent runs under; the child inherits them. */
    toolPolicy?: readonly ToolPolicyNarrowing[];
  };
  /** The `delegate` call's `extensions` (undefined = inherit). */
  requested?: readonly string[];
  /** The delegated recipe's `extensions` (undefined or null = it declares none, so it does not narrow). */
  recipeExtensions?: readonly RecipeExtension[] | null;
  /** The delegated recipe's `tool_policy` key as written (validated here). */
  recipeToolPolicy?: unknown;
  /** A narrowing the `delegate` call asks for (validated by the caller's request schema). */
  requestToolPolicy?: ToolPolicyNarrowing;
  /**
   * The delegated agent's lists, as written in its file, and its `mcpServers`: names of servers
   * configured elsewhere, and inline definitions (as goose extensions) that join like a recipe's servers.
   */
  agent?: { tools?: readonly string[]; disallowedTools?: readonly string[]; mcpServerNames?: readonly string[]; mcpServers?: readonly RecipeExtension[] };
  /** Operator settings. */
  operator: {
    /** Whether recipe-declared stdio / streamable_http servers may run. */
    allowRecipeServers: boolean;
    /** Worker environment variables a recipe's `env_keys` may pass on. */
    recipeEnvKeys?: readonly string[];
  };
}

/** The delegation's tools. */
export interface ToolSelection {
  /** Toolset names, in the parent's order, then recipe servers: what the system prompt lists. */
  toolsets: string[];
  /** Allow / deny within those toolsets; absent when nothing narrows. */
  toolFilter?: ToolFilter;
  /** Recipe-declared servers among `toolsets`: the activities register them (`ensureRecipeServers`). */
  recipeServers: RecipeServer[];
  /** Policy narrowings the child runs under: the parent's, the recipe's, the request's. */
  toolPolicy: ToolPolicyNarrowing[];
  /** Names that matched nothing and other things the calling model should know. */
  warnings: string[];
}

/** Selects a delegation's tools; see the module comment for the rule. */
export function selectTools(input: ToolSelectionInput): ToolSelection {
  const warnings: string[] = [];
  const parentServers = new Map((input.parent.recipeServers ?? []).map((server) => [server.config.name, server]));
  const declaredNameOf = (name: string): string | undefined => parentServers.get(name)?.declaredName;

  // 1. The recipe's declared extensions: builtin / platform names pick parent toolsets, MCP servers join.
  const recipeChoice = recipeChoiceOf(input, declaredNameOf, warnings);
  // 1b. The agent's `mcpServers`: inline servers join (as a recipe's would, only where the operator allows
  // them); names must be servers this delegation can already reach.
  const agentServers = agentServersOf(input, declaredNameOf, warnings);

  // 2. The `extensions` argument: a subset of the parent's toolsets and the declared servers, by name.
  let toolsets = recipeChoice ? input.parent.toolsets.filter((name) => recipeChoice.toolsets.includes(name)) : [...input.parent.toolsets];
  const declaredServers = [...(recipeChoice?.servers ?? []), ...agentServers];
  let servers = declaredServers;
  if (input.requested !== undefined) {
    const requested = input.requested;
    const known = (name: string): boolean =>
      input.parent.toolsets.some((toolset) => toolset === name || declaredNameOf(toolset) === name) ||
      declaredServers.some((server) => server.config.name === name || server.declaredName === name);
    const unknown = requested.filter((name) => !known(name));
    if (unknown.length > 0) {
      const available = [...input.parent.toolsets, ...declaredServers.map((server) => server.declaredName)];
      warnings.push(`extensions ${unknown.map((name) => `"${name}"`).join(', ')} are not available (available: ${available.join(', ') || 'none'}); the subagent runs without them`);
    }
    const wanted = (name: string, declared: string | undefined): boolean => requested.includes(name) || (declared !== undefined && requested.includes(declared));
    toolsets = toolsets.filter((name) => wanted(name, declaredNameOf(name)));
    servers = servers.filter((server) => wanted(server.config.name, server.declaredName));
  }
  const selectedServers: RecipeServer[] = [
    ...toolsets.flatMap((name) => parentServers.get(name) ?? []),
    ...servers.filter((server) => !toolsets.includes(server.config.name)),
  ];
  toolsets = [...toolsets, ...servers.map((server) => server.config.name).filter((name) => !toolsets.includes(name))];

  // 3. Allow lists: the parent's filter ∩ the recipe's available_tools ∩ the agent's tools.
  let allow = input.parent.toolFilter?.allow ? [...input.parent.toolFilter.allow] : undefined;
  if (recipeChoice && recipeChoice.available.size > 0) {
    const recipeAllow = toolsets.flatMap((name) => recipeChoice.available.get(name)?.map((tool) => `${name}__${tool}`) ?? [name]);
    allow = intersectAllowLists(allow, recipeAllow);
  }
  const serverNames = new Map<string, string>([
    ...selectedServers.map((server): [string, string] => [server.declaredName, server.config.name]),
    ...toolsets.map((name): [string, string] => [name, name]),
  ]);
  if (input.agent?.tools) {
    const agentAllow = agentToolPatterns(input.agent.tools, toolsets, serverNames, warnings, 'tools');
    allow = intersectAllowLists(allow, agentAllow);
  }
  const deny = [
    ...(input.parent.toolFilter?.deny ?? []),
    ...(input.agent?.disallowedTools ? agentToolPatterns(input.agent.disallowedTools, toolsets, serverNames, warnings, 'disallowedTools') : []),
  ];

  // A toolset no allow entry can reach is dropped, so the system prompt lists only what the subagent has.
  if (allow !== undefined) {
    const reachable = allow;
    toolsets = toolsets.filter((name) => reachable.some((entry) => reaches(entry, name)));
  }
  // A toolset denied as a whole is dropped too.
  toolsets = toolsets.filter((name) => !deny.includes(name));

  // 4. Policy narrowings: inherited, then the recipe's, then the request's.
  const toolPolicy: ToolPolicyNarrowing[] = [...(input.parent.toolPolicy ?? [])];
  if (input.recipeToolPolicy !== undefined && input.recipeToolPolicy !== null) {
    const parsed = toolPolicyNarrowingSchema.safeParse(input.recipeToolPolicy);
    if (parsed.success) toolPolicy.push(parsed.data);
    else warnings.push(`the recipe's tool_policy is invalid and was ignored: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(top level)'}: ${issue.message}`).join('; ')}`);
  }
  if (input.requestToolPolicy !== undefined) toolPolicy.push(input.requestToolPolicy);

  const toolFilter: ToolFilter | undefined =
    allow !== undefined || deny.length > 0 ? { ...(allow !== undefined ? { allow: unique(allow) } : {}), ...(deny.length > 0 ? { deny: unique(deny) } : {}) } : undefined;
  return {
    toolsets,
    ...(toolFilter ? { toolFilter } : {}),
    recipeServers: selectedServers.filter((server) => toolsets.includes(server.config.name)),
    toolPolicy,
    warnings,
  };
}

/** The parent toolsets and servers a recipe's declared extensions pick, with their `available_tools`. */
interface RecipeChoice {
  toolsets: string[];
  servers: RecipeServer[];
  available: Map<string, readonly string[]>;
}

/** What the recipe's `extensions` pick (undefined when it declares none, so it does not narrow). */
function recipeChoiceOf(input: ToolSelectionInput, declaredNameOf: (name: string) => string | undefined, warnings: string[]): RecipeChoice | undefined {
  if (input.recipeExtensions === undefined || input.recipeExtensions === null) return undefined;
  const recipeChoice: RecipeChoice = { toolsets: [], servers: [], available: new Map() };
  const unavailable: string[] = [];
  for (const extension of input.recipeExtensions) {
    const available = extension.available_tools && extension.available_tools.length > 0 ? extension.available_tools : undefined;
    if (extension.type === 'builtin' || extension.type === 'platform') {
      if (providedPlatformExtensions.has(extension.name)) continue;
      const match = input.parent.toolsets.find((name) => name === extension.name || declaredNameOf(name) === extension.name);
      if (match === undefined) {
        unavailable.push(extension.name);
        continue;
      }
      recipeChoice.toolsets.push(match);
      if (available) recipeChoice.available.set(match, available);
    } else if (extension.type === 'stdio' || extension.type === 'streamable_http') {
      const sameName = input.parent.toolsets.find((name) => name === extension.name);
      if (!input.operator.allowRecipeServers) {
        if (sameName !== undefined) {
          warnings.push(`the recipe's server "${extension.name}" is not started (the operator does not allow recipe-declared servers); the configured toolset of that name is used instead`);
          recipeChoice.toolsets.push(sameName);
          if (available) recipeChoice.available.set(sameName, available);
        } else {
          warnings.push(`the recipe's server "${extension.name}" is not started: the operator does not allow recipe-declared MCP servers`);
        }
        continue;
      }
      const converted = recipeServerFromExtension(extension, input.operator.recipeEnvKeys ? { allowedEnvKeys: input.operator.recipeEnvKeys } : {});
      if (!converted.ok) {
        warnings.push(`the recipe's ${converted.message}; the subagent runs without it`);
        continue;
      }
      warnings.push(...converted.warnings);
      recipeChoice.servers.push(converted.server);
      if (available) recipeChoice.available.set(converted.server.config.name, available);
    } else {
      warnings.push(`the recipe's extension "${extension.name}" has type ${extension.type}, which errand does not run; the subagent runs without it`);
    }
  }
  if (unavailable.length > 0) {
    warnings.push(`the recipe's extensions ${unavailable.map((name) => `"${name}"`).join(', ')} are not available here; the subagent runs without them`);
  }
  return recipeChoice;
}

/** The servers an agent's inline `mcpServers` add; a name that reaches no server here is reported. */
function agentServersOf(input: ToolSelectionInput, declaredNameOf: (name: string) => string | undefined, warnings: string[]): RecipeServer[] {
  const agentServers: RecipeServer[] = [];
  for (const extension of input.agent?.mcpServers ?? []) {
    if (!input.operator.allowRecipeServers) {
      warnings.push(`the agent's MCP server "${extension.name}" is not started: the operator does not allow MCP servers declared by recipes or agents (ERRAND_ALLOW_RECIPE_MCP_SERVERS)`);
      continue;
    }
    const converted = recipeServerFromExtension(extension, input.operator.recipeEnvKeys ? { allowedEnvKeys: input.operator.recipeEnvKeys } : {});
    if (!converted.ok) {
      warnings.push(`the agent's ${converted.message}; the subagent runs without it`);
      continue;
    }
    warnings.push(...converted.warnings.map((warning) => `the agent's ${warning}`));
    agentServers.push(converted.server);
  }
  for (const name of input.agent?.mcpServerNames ?? []) {
    if (!input.parent.toolsets.some((toolset) => toolset === name || declaredNameOf(toolset) === name)) {
      warnings.push(`the agent's mcpServers entry "${name}" names no MCP server available here (available: ${input.parent.toolsets.join(', ') || 'none'}); the subagent runs without it`);
    }
  }
  return agentServers;
}

/**
 * An agent's `tools` / `disallowedTools` entries as filter entries: Claude Code names (`Read`, `Bash`)
 * through {@link claudeToolNames}, Claude's MCP names (`mcp__github__create_issue`, `mcp__github`,
 * `mcp__github__*`) to ours, qualified names, toolset names and patterns as they are. Entries that can match nothing here are
 * reported and dropped.
 */
export function agentToolPatterns(
  entries: readonly string[],
  toolsets: readonly string[],
  serverNames: ReadonlyMap<string, string>,
  warnings: string[],
  field: 'tools' | 'disallowedTools',
): string[] {
  const patterns: string[] = [];
  const report = (entry: string, why: string) => warnings.push(`the agent's ${field} entry "${entry}" ${why}; it was ignored`);
  for (const entry of entries) {
    const claude = claudeToolNames[entry.toLowerCase()];
    if (claude) {
      if (claude.some((name) => toolsets.includes(name.slice(0, name.indexOf('__'))))) patterns.push(...claude);
      else report(entry, 'maps to developer tools, which this delegation does not have');
      continue;
    }
    const mcp = /^mcp__([^_]+(?:_[^_]+)*)(?:__(.+))?$/.exec(entry);
    if (mcp) {
      const server = serverNames.get(mcp[1] ?? '');
      if (server === undefined) report(entry, 'names an MCP server this delegation does not have');
      // `mcp__<server>__*` is the whole server, as `mcp__<server>` is: a deny of it drops the toolset.
      else patterns.push(mcp[2] && mcp[2] !== '*' ? `${server}__${mcp[2]}` : server);
      continue;
    }
    if (entry.includes('*')) {
      patterns.push(entry);
      continue;
    }
    const separator = entry.indexOf('__');
    const toolsetName = separator > 0 ? entry.slice(0, separator) : entry;
    if (!/^[a-z0-9_-]+$/.test(toolsetName)) {
      report(entry, 'matches no tool here');
      continue;
    }
    const resolved = serverNames.get(toolsetName);
    if (resolved === undefined || !toolsets.includes(resolved)) {
      report(entry, separator > 0 ? `names toolset "${toolsetName}", which this delegation does not have` : 'matches no toolset or tool here');
      continue;
    }
    patterns.push(separator > 0 ? `${resolved}${entry.slice(separator)}` : resolved);
  }
  return patterns;
}

/**
 * Why an agent cannot start when its `tools` / `disallowedTools` leave it no tool at all (SEMANTICS §6),
 * or undefined when they leave some, or when the delegation had nothing to give in the first place. An
 * explicitly empty `tools` list (`tools: []`) asks for no tools and is not refused. `withoutLists` is the
 * selection made without the agent's two lists: what was available.
 */
export function agentToolsRefusal(
  agent: { tools?: readonly string[]; disallowedTools?: readonly string[] } | undefined,
  selection: Pick<ToolSelection, 'toolsets'>,
  withoutLists: Pick<ToolSelection, 'toolsets' | 'recipeServers'>,
  file: string,
): string | undefined {
  if (agent === undefined || selection.toolsets.length > 0 || withoutLists.toolsets.length === 0) return undefined;
  if (agent.tools !== undefined && agent.tools.length === 0) return undefined;
  const fields = [
    ...(agent.tools !== undefined ? [`tools (${agent.tools.join(', ')})`] : []),
    ...(agent.disallowedTools !== undefined && agent.disallowedTools.length > 0 ? [`disallowedTools (${agent.disallowedTools.join(', ')})`] : []),
  ];
  const declared = new Map(withoutLists.recipeServers.map((server) => [server.config.name, server.declaredName]));
  const available = withoutLists.toolsets.map((name) =>
    name === 'developer' ? 'Read, Write, Edit, MultiEdit, Bash, Grep, Glob, LS (the developer tools)' : `mcp__${declared.get(name) ?? name}`,
  );
  return `${file}: ${fields.join(' and ')} leave this agent no tool, so it cannot start; available here: ${available.join('; ')}. Name tools from those in tools, remove entries from disallowedTools, or write tools: [] for an agent meant to run without tools.`;
}

/** Whether filter entry `outer` allows everything `inner` allows (conservative for overlapping patterns). */
export function covers(outer: string, inner: string): boolean {
  if (outer === inner) return true;
  const innerText = inner.includes('__') || inner.includes('*') ? inner : `${inner}__*`;
  if (!outer.includes('*') && !outer.includes('__')) return innerText.startsWith(`${outer}__`);
  return outer.includes('*') && matchesPattern(outer, innerText);
}

/**
 * The intersection of two allow lists (undefined = no list = everything). Entries of each list that the
 * other covers are kept; two patterns that only overlap partly give nothing, which narrows, never widens.
 */
export function intersectAllowLists(a: readonly string[] | undefined, b: readonly string[] | undefined): string[] | undefined {
  if (a === undefined) return b === undefined ? undefined : [...b];
  if (b === undefined) return [...a];
  return unique([...b.filter((inner) => a.some((outer) => covers(outer, inner))), ...a.filter((inner) => b.some((outer) => covers(outer, inner)))]);
}

/** Whether filter entry `entry` can match some tool of toolset `toolsetName`. */
function reaches(entry: string, toolsetName: string): boolean {
  const prefix = `${toolsetName}__`;
  if (!entry.includes('*')) return entry === toolsetName || entry.startsWith(prefix);
  const literal = entry.slice(0, entry.indexOf('*'));
  return literal.startsWith(prefix) || prefix.startsWith(literal);
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

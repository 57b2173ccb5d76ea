import { z } from 'zod';
import { agentSkillsMax } from './limits/memory';
import { maxTurnsCeiling } from './limits/workflow';
import { readAgentMcpServers } from './agent-mcp-servers';
import { agentHooksSchema, parseAgentHooks, type AgentHooks } from './agent-hooks';
import { formatSchemaIssues } from './schema-issues';
import { isRecord, recipeExtensionSchema, type RecipeExtension } from './recipe-schema';

/** Claude Code's permission modes that errand accepts in an agent file (what each means: tools/permission-mode.ts). */
export const permissionModes = ['default', 'manual', 'auto', 'plan', 'acceptEdits', 'dontAsk', 'bypassPermissions'] as const;
/** One permission mode. */
export type PermissionMode = (typeof permissionModes)[number];

/** Claude Code's effort levels (an agent file's `effort`), least reasoning first. */
export const agentEffortLevels = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
/** One effort level. */
export type AgentEffort = (typeof agentEffortLevels)[number];

/**
 * Agent files: Markdown with YAML frontmatter (goose and Claude Code format). This module is pure: the
 * caller parses the frontmatter YAML (src/sources) and hands over the resulting object.
 */

/** Claude Code's memory scopes (an agent file's `memory`): what each means in errand is in docs/recipes.md (decision 0031). */
export const agentMemoryScopes = ['user', 'project', 'local'] as const;
/** One memory scope. */
export type AgentMemoryScope = (typeof agentMemoryScopes)[number];

/** Claude Code's model aliases; they are mapped through configuration, never passed on literally. */
export const claudeModelAliases = ['sonnet', 'opus', 'haiku'] as const;

/** Configured mapping of model aliases (`sonnet`) to real model names. */
export type ModelAliasTable = Readonly<Record<string, string>>;

/** A parsed agent definition (JSON-only). */
export interface AgentDefinition {
  /** The source name (frontmatter `name`). */
  name: string;
  description?: string;
  /** Model after alias mapping; absent when the file names none, says `inherit`, or names an unmapped alias. */
  model?: string;
  /** True when the file says `model: inherit` (use the parent's model). */
  inheritModel: boolean;
  /** Tool allow-list (`tools`), when given. */
  tools?: string[];
  /** Tool deny-list (`disallowedTools`), when given. */
  disallowedTools?: string[];
  /** Turn budget (`maxTurns`): ranks with a recipe's `settings.max_turns`. */
  maxTurns?: number;
  /** Claude Code permission mode (`permissionMode`), mapped to a tool-policy layer when planned. */
  permissionMode?: PermissionMode;
  /** Reasoning effort (`effort`): ranks where a recipe's `settings.reasoning_effort` does. */
  effort?: AgentEffort;
  /** `mcpServers` entries that name a server the operator configured (a toolset name). */
  mcpServerNames?: string[];
  /** `mcpServers` entries defined inline, converted to goose extensions (started only where the operator allows). */
  mcpServers?: RecipeExtension[];
  /** `background: true`: always delegated in the background. */
  background?: boolean;
  /** `isolation: worktree`: the subagent works in its own git worktree. */
  isolation?: 'worktree';
  /** `memory`: the agent keeps a memory folder of this scope in errand's data store (decision 0031). */
  memory?: AgentMemoryScope;
  /** `skills`: skill names whose `SKILL.md` is put into the agent's system prompt at start. */
  skills?: string[];
  /** `hooks`: command hooks for the subagent's own events (contracts/agent-hooks.ts). */
  hooks?: AgentHooks;
  /** The Markdown body: the agent's instructions. */
  instructions: string;
}

/** Zod schema of {@link AgentDefinition}, for snapshots crossing a durable boundary. */
export const agentDefinitionSchema = z.object({
  name: z.string(),
  description: z.string().optional(),
  model: z.string().optional(),
  inheritModel: z.boolean(),
  tools: z.array(z.string()).optional(),
  disallowedTools: z.array(z.string()).optional(),
  maxTurns: z.number().int().min(1).max(maxTurnsCeiling).optional(),
  permissionMode: z.enum(permissionModes).optional(),
  effort: z.enum(agentEffortLevels).optional(),
  mcpServerNames: z.array(z.string()).optional(),
  mcpServers: z.array(recipeExtensionSchema).optional(),
  background: z.boolean().optional(),
  isolation: z.literal('worktree').optional(),
  memory: z.enum(agentMemoryScopes).optional(),
  skills: z.array(z.string()).optional(),
  hooks: agentHooksSchema.optional(),
  instructions: z.string(),
});

const toolList = z.union([
  z.string().transform((text) => text.split(',').map((item) => item.trim()).filter((item) => item !== '')),
  z.array(z.string()),
], { error: 'expected a comma-separated string or a list of tool names' });

const maxTurnsMessage = `expected a whole number from 1 to ${maxTurnsCeiling}`;
const maxTurnsNumber = z.number({ error: maxTurnsMessage }).int({ error: maxTurnsMessage }).min(1, { error: maxTurnsMessage }).max(maxTurnsCeiling, { error: maxTurnsMessage });
const maxTurnsField = z.union([
  maxTurnsNumber,
  // Read key by key (not strict YAML), a number arrives as text.
  z.string().regex(/^\s*\d+\s*$/).transform((text) => Number(text)).pipe(maxTurnsNumber),
], { error: maxTurnsMessage });

const permissionModeField = z.string({ error: `expected one of ${permissionModes.join(', ')}` }).transform((text, context) => {
  const mode = permissionModes.find((candidate) => candidate === text.trim());
  if (mode !== undefined) return mode;
  context.addIssue({
    code: 'custom',
    message: `expected one of ${permissionModes.join(', ')}`,
  });
  return z.NEVER;
});

const effortMessage = `expected one of ${agentEffortLevels.join(', ')}`;
const effortField = z.string({ error: effortMessage }).transform((text, context) => {
  const effort = agentEffortLevels.find((candidate) => candidate === text.trim());
  if (effort !== undefined) return effort;
  context.addIssue({ code: 'custom', message: effortMessage });
  return z.NEVER;
});

const memoryMessage = `expected one of ${agentMemoryScopes.join(', ')}`;
const memoryField = z.string({ error: memoryMessage }).transform((text, context) => {
  const scope = agentMemoryScopes.find((candidate) => candidate === text.trim());
  if (scope !== undefined) return scope;
  context.addIssue({ code: 'custom', message: memoryMessage });
  return z.NEVER;
});

/** A skill name as Claude Code names skill folders: letters, digits, `-` and `_` (no path). */
const skillNamePattern = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const skillNameMessage = 'expected skill names (the folder name under .claude/skills/): letters, digits, "-" and "_", at most 64 characters';
const skillsField = z.union([
  z.string().transform((text) => text.split(',').map((item) => item.trim()).filter((item) => item !== '')),
  z.array(z.string({ error: skillNameMessage })),
], { error: 'expected a comma-separated string or a list of skill names' }).pipe(
  z.array(z.string().regex(skillNamePattern, { error: skillNameMessage })).max(agentSkillsMax, { error: `expected at most ${agentSkillsMax} skills` }),
);

const booleanField = z.union([
  z.boolean(),
  z.enum(['true', 'false']).transform((text) => text === 'true'),
], { error: 'expected true or false' });

const frontmatterSchema = z.looseObject({
  name: z.string({ error: 'expected a string (the agent name is required)' }).trim().min(1, { error: 'expected a non-empty name' }),
  description: z.string({ error: 'expected a string' }).nullable().optional(),
  model: z.string({ error: 'expected a model name, an alias (sonnet, opus, haiku) or inherit' }).nullable().optional(),
  tools: toolList.nullable().optional(),
  disallowedTools: toolList.nullable().optional(),
  maxTurns: maxTurnsField.nullable().optional(),
  permissionMode: permissionModeField.nullable().optional(),
  effort: effortField.nullable().optional(),
  mcpServers: z.unknown().optional(),
  background: booleanField.nullable().optional(),
  isolation: z.string({ error: 'expected worktree' }).trim().pipe(z.literal('worktree', { error: 'expected worktree (the only isolation there is)' })).nullable().optional(),
  memory: memoryField.nullable().optional(),
  skills: skillsField.nullable().optional(),
  hooks: z.unknown().optional(),
});

/** Frontmatter fields errand honours. */
const honouredKeys = ['name', 'description', 'model', 'tools', 'disallowedTools', 'maxTurns', 'permissionMode', 'effort', 'mcpServers', 'background', 'isolation', 'memory', 'skills', 'hooks'] as const;

/** Fields Claude Code uses only for its own display: ignored without a word, as Claude Code's subagents ignore them. */
const cosmeticKeys = ['color'] as const;

/** Claude Code fields errand does not support, with what that means for a run (reported, never dropped silently). */
export const unsupportedAgentFields: Readonly<Record<string, string>> = {
};

/**
 * Fields Claude Code itself uses only when the agent is not a subagent, so a delegated agent runs
 * without them in Claude Code too: said once (the author may expect otherwise), not "not supported".
 */
export const mainSessionAgentFields: Readonly<Record<string, string>> = {
  initialPrompt: 'Claude Code sends it only when the agent runs as the main session; a delegated agent starts, in Claude Code as in errand, from the task it is given',
};

/** Every frontmatter field name errand knows (honoured, cosmetic, main-session only or reported as unsupported). */
export const agentFrontmatterKeys: ReadonlySet<string> = new Set([
  ...honouredKeys,
  ...cosmeticKeys,
  ...Object.keys(mainSessionAgentFields),
  ...Object.keys(unsupportedAgentFields),
]);

/** Frontmatter text and body of a Markdown file, split at the `---` fences. */
export interface FrontmatterSplit {
  frontmatter: string;
  body: string;
}

/**
 * Splits `---\n<yaml>\n---\n<body>`. Returns undefined when the file does not start with a fence or the
 * closing fence is missing.
 */
export function splitFrontmatter(text: string): FrontmatterSplit | undefined {
  const normalized = text.replace(/^\uFEFF/, '').replace(/\r\n/g, '\n');
  if (!normalized.startsWith('---\n')) return undefined;
  const end = normalized.indexOf('\n---', 3);
  if (end === -1) return undefined;
  const afterFence = normalized.indexOf('\n', end + 4);
  const closingLine = normalized.slice(end + 1, afterFence === -1 ? undefined : afterFence);
  if (closingLine.trim() !== '---') return undefined;
  return {
    frontmatter: normalized.slice(4, end + 1),
    body: afterFence === -1 ? '' : normalized.slice(afterFence + 1),
  };
}

/** Outcome of reading an agent file. */
export interface AgentParseResult {
  agent?: AgentDefinition;
  errors: string[];
  warnings: string[];
}

/**
 * Validates parsed frontmatter plus body as an agent. Unknown frontmatter keys are warned and ignored;
 * Claude Code fields errand does not support (none at present) are reported as such.
 * `model: inherit` sets `inheritModel`; a Claude alias is mapped through `aliases`; an alias with no
 * mapping is dropped with a warning (goose passes it on literally and the model call fails — issue 8496).
 */
export function parseAgentDocument(frontmatter: unknown, body: string, file: string, aliases: ModelAliasTable): AgentParseResult {
  if (!isRecord(frontmatter)) {
    return { errors: [`${file}: frontmatter: expected a YAML map with at least a name`], warnings: [] };
  }
  const warnings: string[] = [];
  for (const key of Object.keys(frontmatter)) {
    const unsupported = unsupportedAgentFields[key];
    const mainSessionOnly = mainSessionAgentFields[key];
    if (unsupported !== undefined) warnings.push(`${file}: ${key}: not supported by errand: ${unsupported}`);
    else if (mainSessionOnly !== undefined) warnings.push(`${file}: ${key}: ${mainSessionOnly}`);
    else if (!agentFrontmatterKeys.has(key)) warnings.push(`${file}: ${key}: unknown frontmatter field, ignored`);
  }
  const parsed = frontmatterSchema.safeParse(frontmatter);
  if (!parsed.success) return { errors: formatSchemaIssues(file, parsed.error.issues, frontmatter), warnings };
  const data = parsed.data;
  const servers = data.mcpServers === undefined || data.mcpServers === null ? { names: [], servers: [], errors: [], warnings: [] } : readAgentMcpServers(data.mcpServers, file);
  if (servers.errors.length > 0) return { errors: servers.errors, warnings };
  warnings.push(...servers.warnings);
  const hooks = parseAgentHooks(data.hooks, file);
  warnings.push(...hooks.warnings);
  if (hooks.errors.length > 0) return { errors: hooks.errors, warnings };
  const instructions = body.trim();
  if (instructions === '') warnings.push(`${file}: body: the agent has no instructions (empty Markdown body)`);
  const agent: AgentDefinition = { name: data.name, inheritModel: false, instructions };
  if (data.description) agent.description = data.description;
  const model = data.model?.trim();
  if (model === 'inherit') {
    agent.inheritModel = true;
  } else if (model) {
    const mapped = aliases[model];
    if (mapped !== undefined) agent.model = mapped;
    else if ((claudeModelAliases as readonly string[]).includes(model)) {
      warnings.push(`${file}: model: alias "${model}" has no mapping in the model alias configuration; the model is chosen as if none were given`);
    } else agent.model = model;
  }
  if (data.tools) agent.tools = data.tools;
  if (data.disallowedTools) agent.disallowedTools = data.disallowedTools;
  if (typeof data.maxTurns === 'number') agent.maxTurns = data.maxTurns;
  if (data.permissionMode) agent.permissionMode = data.permissionMode;
  if (data.effort) agent.effort = data.effort;
  if (servers.names.length > 0) agent.mcpServerNames = servers.names;
  if (servers.servers.length > 0) agent.mcpServers = servers.servers;
  if (data.background === true) agent.background = true;
  if (data.isolation) agent.isolation = data.isolation;
  if (data.memory) agent.memory = data.memory;
  if (data.skills && data.skills.length > 0) agent.skills = [...new Set(data.skills)];
  if (hooks.hooks) agent.hooks = hooks.hooks;
  return { agent, errors: [], warnings };
}

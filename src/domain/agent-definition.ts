import { z } from 'zod';
import { formatSchemaIssues } from './schema-issues';
import { isRecord } from './recipe-schema';

/**
 * Agent files: Markdown with YAML frontmatter (goose and Claude Code format). This module is pure: the
 * caller parses the frontmatter YAML (src/sources) and hands over the resulting object.
 */

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
  instructions: z.string(),
});

const toolList = z.union([
  z.string().transform((text) => text.split(',').map((item) => item.trim()).filter((item) => item !== '')),
  z.array(z.string()),
], { error: 'expected a comma-separated string or a list of tool names' });

const frontmatterSchema = z.looseObject({
  name: z.string({ error: 'expected a string (the agent name is required)' }).trim().min(1, { error: 'expected a non-empty name' }),
  description: z.string({ error: 'expected a string' }).nullable().optional(),
  model: z.string({ error: 'expected a model name, an alias (sonnet, opus, haiku) or inherit' }).nullable().optional(),
  tools: toolList.nullable().optional(),
  disallowedTools: toolList.nullable().optional(),
});
const knownFrontmatterKeys = new Set(['name', 'description', 'model', 'tools', 'disallowedTools']);

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
 * Validates parsed frontmatter plus body as an agent. Unknown frontmatter keys are warned and ignored.
 * `model: inherit` sets `inheritModel`; a Claude alias is mapped through `aliases`; an alias with no
 * mapping is dropped with a warning (goose passes it on literally and the model call fails — issue 8496).
 */
export function parseAgentDocument(frontmatter: unknown, body: string, file: string, aliases: ModelAliasTable): AgentParseResult {
  if (!isRecord(frontmatter)) {
    return { errors: [`${file}: frontmatter: expected a YAML map with at least a name`], warnings: [] };
  }
  const warnings = Object.keys(frontmatter)
    .filter((key) => !knownFrontmatterKeys.has(key))
    .map((key) => `${file}: ${key}: unknown frontmatter field, ignored`);
  const parsed = frontmatterSchema.safeParse(frontmatter);
  if (!parsed.success) return { errors: formatSchemaIssues(file, parsed.error.issues, frontmatter), warnings };
  const data = parsed.data;
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
  return { agent, errors: [], warnings };
}

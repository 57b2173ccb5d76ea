import { z } from 'zod';
import { formatSchemaIssues } from './schema-issues';
import { isRecord, recipeExtensionSchema, type RecipeExtension } from './recipe-schema';

/**
 * An agent file's `mcpServers` (Claude Code format) read into errand terms. Pure.
 *
 * Claude Code accepts a list whose entries are either the name of an MCP server configured elsewhere
 * (`- github`) or an inline definition keyed by the server's name (`- jira: {command: …}`); a map of
 * name → definition (the `.mcp.json` shape) is read the same way. Names become references to the
 * operator's toolsets; inline definitions become goose extensions (`stdio`, `streamable_http`), so they
 * run exactly like a recipe's declared servers: only where the operator allows recipe MCP servers.
 *
 * Environment values: `KEY: ${KEY}` passes the worker's variable of that name (subject to the operator's
 * allow-list, as a recipe's `env_keys`); literal values are passed as written; other `${…}` expansions
 * cannot be expressed safely and are reported and left out.
 */

/** What an agent's `mcpServers` says. */
export interface AgentMcpServers {
  /** Names of servers configured elsewhere (the operator's toolsets). */
  names: string[];
  /** Inline definitions as goose extensions. */
  servers: RecipeExtension[];
  errors: string[];
  warnings: string[];
}

const stringMap = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String), { error: 'expected a map of names to strings' });

const stdioDefinition = z.looseObject({
  type: z.literal('stdio').optional(),
  command: z.string({ error: 'expected the command to run (a string)' }).min(1, { error: 'expected a non-empty command' }),
  args: z.array(z.union([z.string(), z.number()]).transform(String), { error: 'expected a list of arguments' }).optional(),
  env: stringMap.optional(),
});

const remoteDefinition = z.looseObject({
  type: z.enum(['http', 'streamable-http', 'streamable_http', 'sse', 'ws'], { error: 'expected stdio, http or sse' }),
  url: z.string({ error: 'expected the server URL (a string)' }).min(1),
  headers: stringMap.optional(),
});

const knownDefinitionKeys = new Set(['type', 'command', 'args', 'env', 'url', 'headers']);

/** `${NAME}` or `$NAME` alone: the worker's variable of that name. */
const wholeVariable = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/;

/** Reads `mcpServers` as written in `file`. */
export function readAgentMcpServers(value: unknown, file: string): AgentMcpServers {
  const result: AgentMcpServers = { names: [], servers: [], errors: [], warnings: [] };
  const entries: { path: string; name: string; definition: unknown }[] = [];
  if (Array.isArray(value)) {
    value.forEach((item: unknown, index) => {
      if (typeof item === 'string' && item.trim() !== '') result.names.push(item.trim());
      else if (isRecord(item) && Object.keys(item).length > 0) {
        for (const [name, definition] of Object.entries(item)) entries.push({ path: `mcpServers[${index}].${name}`, name, definition });
      } else {
        result.errors.push(`${file}: mcpServers[${index}]: expected the name of a configured MCP server or {name: definition}`);
      }
    });
  } else if (isRecord(value)) {
    for (const [name, definition] of Object.entries(value)) entries.push({ path: `mcpServers.${name}`, name, definition });
  } else if (typeof value === 'string' && value.trim() !== '') {
    result.names.push(...value.split(',').map((name) => name.trim()).filter((name) => name !== ''));
  } else {
    result.errors.push(`${file}: mcpServers: expected a list of server names or {name: definition} entries`);
  }
  for (const entry of entries) {
    const converted = convert(entry.name, entry.definition, `${file}: ${entry.path}`);
    result.errors.push(...converted.errors);
    result.warnings.push(...converted.warnings);
    if (converted.server) result.servers.push(converted.server);
  }
  return result;
}

function convert(name: string, definition: unknown, where: string): { server?: RecipeExtension; errors: string[]; warnings: string[] } {
  const warnings: string[] = [];
  if (!isRecord(definition)) return { errors: [`${where}: expected a server definition (command and args, or type and url)`], warnings };
  const unknown = Object.keys(definition).filter((key) => !knownDefinitionKeys.has(key));
  if (unknown.length > 0) warnings.push(`${where}: ${unknown.join(', ')}: unknown server field(s), ignored`);
  const remote = definition.type !== undefined && definition.type !== 'stdio';
  if (remote) {
    const parsed = remoteDefinition.safeParse(definition);
    if (!parsed.success) return { errors: formatSchemaIssues(where, parsed.error.issues, definition), warnings };
    if (parsed.data.type === 'sse' || parsed.data.type === 'ws') {
      warnings.push(`${where}: type ${parsed.data.type} is not supported (errand speaks MCP over stdio and streamable HTTP); the server is not started`);
      return { errors: [], warnings };
    }
    const headers: Record<string, string> = {};
    for (const [key, text] of Object.entries(parsed.data.headers ?? {})) {
      if (text.includes('$')) warnings.push(`${where}: headers.${key}: environment expansion is not supported in headers; the header is left out`);
      else headers[key] = text;
    }
    return finish({ type: 'streamable_http', name, uri: parsed.data.url, ...(Object.keys(headers).length > 0 ? { headers } : {}) }, where, warnings);
  }
  const parsed = stdioDefinition.safeParse(definition);
  if (!parsed.success) return { errors: formatSchemaIssues(where, parsed.error.issues, definition), warnings };
  const envs: Record<string, string> = {};
  const envKeys: string[] = [];
  for (const [key, text] of Object.entries(parsed.data.env ?? {})) {
    const variable = wholeVariable.exec(text)?.[1];
    if (variable === key) envKeys.push(key);
    else if (text.includes('$')) warnings.push(`${where}: env.${key}: only KEY: \${KEY} (the worker's variable of the same name) can be passed; "${text}" is left out`);
    else envs[key] = text;
  }
  return finish({
    type: 'stdio',
    name,
    cmd: parsed.data.command,
    args: parsed.data.args ?? [],
    ...(Object.keys(envs).length > 0 ? { envs } : {}),
    ...(envKeys.length > 0 ? { env_keys: envKeys } : {}),
  }, where, warnings);
}

/** Checks the converted extension against the recipe extension schema (one shape for both). */
function finish(extension: unknown, where: string, warnings: string[]): { server?: RecipeExtension; errors: string[]; warnings: string[] } {
  const parsed = recipeExtensionSchema.safeParse(extension);
  if (!parsed.success) return { errors: formatSchemaIssues(where, parsed.error.issues, extension), warnings };
  return { server: parsed.data, errors: [], warnings };
}

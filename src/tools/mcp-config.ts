import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { RecipeServerOrigin } from '../contracts/agent-wire';
import type { RecipeExtension } from '../contracts/recipe-schema';
import { isValidToolsetName } from './tool-name';

/**
 * Configuration of MCP servers used as toolsets: the operator's servers (configuration file or
 * `ERRAND_MCP_SERVERS`) and servers a recipe declares in its `extensions` (goose format), converted here.
 *
 * Every config is plain JSON: recipe-declared servers travel in the workflow input (so any worker can
 * start them, and the Temporal UI shows exactly what ran). Secrets do not: `envFrom` names environment
 * variables of the worker, read when the process is spawned, never their values.
 */

// ---- defaults (candidates for contracts/limits.ts, tools section) -----------------------------------
/** How long an MCP connection may stay unused before it is closed (and a stdio server stopped). */
export const defaultMcpIdleMs = 5 * 60_000;
/** Time limit of starting an MCP server and its initialize handshake. */
export const defaultMcpStartTimeoutMs = 30_000;
/** Default time limit of one MCP request (tools/list, tools/call), reset by progress notifications. */
export const defaultMcpCallTimeoutMs = 5 * 60_000;
/** Bound on tools/list pages read from one server (each page is one request). */
export const maxMcpToolListPages = 50;
/** Characters of a stdio server's stderr kept for error messages (the tail). */
export const mcpStderrTailChars = 2_000;
/** Prefix of the toolset names of recipe-declared servers; operator server names may not start with it. */
export const recipeServerPrefix = 'recipe-';
/** Most characters of a recipe extension's own name kept in its toolset name. */
const recipeNameChars = 16;
/** Hex characters of the config hash in a recipe server's toolset name. */
const recipeHashChars = 8;

/** A toolset name (see tool-name.ts): lower-case letters, digits, `-` and single `_`. */
const toolsetNameSchema = z
  .string()
  .refine(isValidToolsetName, { error: 'expected a toolset name: lower-case letters, digits, "-" and single "_" (never "__")' });

const envNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected an environment variable name' });

const commonFields = {
  /** The toolset name the model sees as the prefix of every tool (`<name>__<tool>`). */
  name: toolsetNameSchema,
  /** What the server offers, for listings and the system prompt. */
  description: z.string().optional(),
  /** Time limit of one request to this server (ms); progress notifications reset it. */
  timeoutMs: z.number().int().min(1_000).max(86_400_000).optional(),
};

/** An MCP server run as a child process of the worker, spoken to over stdin/stdout. */
export const stdioMcpServerConfigSchema = z.strictObject({
  type: z.literal('stdio'),
  ...commonFields,
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Literal environment variables (on top of a safe default environment: PATH, HOME, ...). */
  env: z.record(envNameSchema, z.string()).optional(),
  /** Names of the worker's environment variables passed through (values are read at spawn time). */
  envFrom: z.array(envNameSchema).optional(),
  /** Working directory of the process (default: the worker's). */
  cwd: z.string().min(1).optional(),
});

/** An MCP server reached over streamable HTTP. */
export const streamableHttpMcpServerConfigSchema = z.strictObject({
  type: z.literal('streamable_http'),
  ...commonFields,
  url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }),
  headers: z.record(z.string().min(1), z.string()).optional(),
});

/** One MCP server as the operator configures it (`mcpServers[]` in the configuration file). */
export const mcpServerConfigSchema = z.discriminatedUnion('type', [stdioMcpServerConfigSchema, streamableHttpMcpServerConfigSchema], {
  error: 'expected an MCP server whose type is stdio or streamable_http',
});
/** A parsed MCP server config. */
export type McpServerConfig = z.output<typeof mcpServerConfigSchema>;
/** A stdio MCP server config. */
export type StdioMcpServerConfig = z.output<typeof stdioMcpServerConfigSchema>;
/** A streamable HTTP MCP server config. */
export type StreamableHttpMcpServerConfig = z.output<typeof streamableHttpMcpServerConfigSchema>;

/**
 * The operator's list of MCP servers: names unique, not `developer` (the built-in toolset), and not in
 * the `recipe-` namespace that recipe-declared servers use, so no two toolsets can share a name.
 */
export const mcpServerListSchema = z.array(mcpServerConfigSchema).superRefine((servers, context) => {
  const seen = new Set<string>();
  servers.forEach((server, index) => {
    if (server.name === 'developer') {
      context.addIssue({ code: 'custom', path: [index, 'name'], message: '"developer" is the built-in toolset; choose another name' });
    }
    if (server.name.startsWith(recipeServerPrefix)) {
      context.addIssue({ code: 'custom', path: [index, 'name'], message: `names starting with "${recipeServerPrefix}" are reserved for recipe-declared servers` });
    }
    if (seen.has(server.name)) context.addIssue({ code: 'custom', path: [index, 'name'], message: `the MCP server name "${server.name}" is used twice` });
    seen.add(server.name);
  });
});

/**
 * Operator settings of MCP toolsets besides the server list (`mcp` in the configuration file).
 * Suggested environment variables: `ERRAND_MCP_IDLE_MS`, `ERRAND_ALLOW_RECIPE_MCP_SERVERS=true`.
 */
export const mcpSettingsSchema = z.strictObject({
  /** Close a connection (stop a stdio server) after this long unused. */
  idleMs: z.number().int().min(1_000).max(86_400_000).optional(),
  /** Default time limit of one MCP request (a server's `timeoutMs` wins). */
  callTimeoutMs: z.number().int().min(1_000).max(86_400_000).optional(),
  /** Whether servers a recipe declares (stdio, streamable_http) may be started. Off by default: they run code. */
  allowRecipeServers: z.boolean().optional(),
  /** Worker environment variables a recipe's `env_keys` may pass to its servers; others are dropped. */
  recipeEnvKeys: z.array(envNameSchema).optional(),
  /**
   * Folders inside the working root (tenant-writable) whose recipes may start servers
   * (`ERRAND_TRUSTED_RECIPE_DIRS`); a recipe from any other folder there never starts one.
   */
  trustedRecipeDirs: z.array(z.string().refine((path) => path.startsWith('/'), { error: 'expected an absolute folder' })).optional(),
});
/** Parsed MCP settings. */
export type McpSettings = z.output<typeof mcpSettingsSchema>;

/** A recipe-declared server, converted and named: what travels in the workflow input. */
export interface RecipeServer {
  /** The name the recipe gave the extension (what `extensions: [...]` and agent tool lists may say). */
  declaredName: string;
  /** The config, whose `name` is the registered toolset name (`recipe-<name>-<hash>`). */
  config: McpServerConfig;
  /** The definition that declared it (set by the planner; see RecipeServerOrigin). */
  origin?: RecipeServerOrigin;
}

/** Result of converting one recipe extension. */
export type RecipeExtensionConversion =
  | { ok: true; server: RecipeServer; warnings: string[] }
  | { ok: false; message: string };

/** Options of {@link recipeServerFromExtension}. */
export interface RecipeConversionOptions {
  /** Worker environment variables a recipe's `env_keys` may name; others are dropped with a warning. */
  allowedEnvKeys?: readonly string[];
}

/**
 * Converts a goose `stdio` or `streamable_http` recipe extension into an MCP server config named
 * `recipe-<name>-<hash>`: the prefix keeps recipe servers apart from the operator's, and the hash of the
 * config keeps two recipes that both call their server `github` (differently) apart. Other extension
 * types are not MCP servers and are refused with a message.
 */
export function recipeServerFromExtension(extension: RecipeExtension, options: RecipeConversionOptions = {}): RecipeExtensionConversion {
  const warnings: string[] = [];
  const label = `extension "${extension.name}"`;
  const timeoutMs = typeof extension.timeout === 'number' && extension.timeout > 0 ? Math.min(Math.max(extension.timeout * 1_000, 1_000), 86_400_000) : undefined;
  let config: Omit<StdioMcpServerConfig, 'name'> | Omit<StreamableHttpMcpServerConfig, 'name'>;
  if (extension.type === 'stdio') {
    const allowed = new Set(options.allowedEnvKeys ?? []);
    const envKeys = extension.env_keys ?? [];
    const refused = envKeys.filter((key) => !allowed.has(key));
    if (refused.length > 0) {
      warnings.push(`${label}: env_keys ${refused.join(', ')} are not passed (the operator allows recipes only ${[...allowed].join(', ') || 'none'})`);
    }
    const passed = envKeys.filter((key) => allowed.has(key));
    config = {
      type: 'stdio',
      command: extension.cmd,
      args: extension.args,
      ...(extension.envs && Object.keys(extension.envs).length > 0 ? { env: extension.envs } : {}),
      ...(passed.length > 0 ? { envFrom: passed } : {}),
      ...(extension.cwd ? { cwd: extension.cwd } : {}),
      ...(extension.description ? { description: extension.description } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    };
  } else if (extension.type === 'streamable_http') {
    if ((extension.env_keys ?? []).length > 0 || Object.keys(extension.envs ?? {}).length > 0) {
      warnings.push(`${label}: envs and env_keys have no effect on a streamable_http server and were ignored`);
    }
    config = {
      type: 'streamable_http',
      url: extension.uri,
      ...(extension.headers && Object.keys(extension.headers).length > 0 ? { headers: extension.headers } : {}),
      ...(extension.description ? { description: extension.description } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    };
  } else {
    return { ok: false, message: `${label} has type ${extension.type}, which is not an MCP server` };
  }
  const name = recipeServerName(extension.name, config);
  const parsed = mcpServerConfigSchema.safeParse({ ...config, name });
  if (!parsed.success) {
    return { ok: false, message: `${label} is not a valid MCP server: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(top level)'}: ${issue.message}`).join('; ')}` };
  }
  return { ok: true, server: { declaredName: extension.name, config: parsed.data }, warnings };
}

/**
 * The toolset name of a recipe-declared server: `recipe-<slug of its name>-<8 hex of the config hash>`.
 * Deterministic, so every worker (and a replay) derives the same tool names from the same input.
 */
export function recipeServerName(declaredName: string, config: object): string {
  const slug = declaredName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, recipeNameChars)
    .replace(/-+$/g, '');
  const hash = configHash({ ...config, name: undefined }).slice(0, recipeHashChars);
  return `${recipeServerPrefix}${slug.length > 0 ? `${slug}-` : ''}${hash}`;
}

/** SHA-256 (hex) of a value's canonical JSON (object keys sorted, undefined dropped): the pool key of a config. */
export function configHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** JSON with object keys sorted, so equal configs give equal text whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Whether a toolset name belongs to a recipe-declared server. */
export function isRecipeServerName(name: string): boolean {
  return name.startsWith(recipeServerPrefix);
}

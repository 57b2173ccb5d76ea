import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { RecipeServerOrigin } from '../contracts/agent-wire';
import type { RecipeExtension } from '../contracts/recipe-schema';
import { recipeVerifiedCacheEntries } from '../contracts/limits/tools';
import { renderSource } from './render-source';
import type { SourceResolver } from './source-resolver';
import { isInside, type PathRules } from '../tools/confine-path';
import { canonicalJson, recipeServerFromExtension, type McpServerConfig } from '../tools/mcp-config';
import { ToolsetRegistryError } from '../tools/toolset-registry';

/**
 * Whether a recipe-declared MCP server may start (SEMANTICS §6: a tenant-writable folder never starts a
 * process outside the sandbox, nor inside it unless the operator vouches for that folder).
 *
 * A recipe or agent file under the working root — a tenant's project folder, `.goose/recipes`,
 * `.claude/agents`, or a configured store that lies there — is something a tenant (or a model with
 * `write_file`) can write. Its servers start only when the operator names its folder in
 * `ERRAND_TRUSTED_RECIPE_DIRS`. Files from the operator's own stores (configured folders outside the
 * working root, git and S3 stores, the worker's user folders) are the operator's word.
 *
 * The worker decides from what it finds itself: a workflow input only says which source the planner
 * resolved (`origin`); the worker resolves that source again among its own stores, looks at where the
 * file really is, renders it, and starts a server only if that file declares exactly this config.
 */

/** Where recipes may come from, for the trust decision. */
export interface RecipeTrustSettings {
  /** The working root: tenant folders live under it. */
  workingRoot: string;
  /** `ERRAND_TRUSTED_RECIPE_DIRS`: folders under the working root the operator vouches for. */
  trustedDirs: readonly string[];
}

async function real(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}

/**
 * Whether the folder a definition was read from is the operator's: neither under the working root nor
 * under the working directory it was resolved in (its project folders), or else under one of the trusted
 * folders (all compared after resolving links). `recipeDir` of an S3 source is an `s3://` URL: an
 * operator's store.
 */
export async function recipeFolderTrusted(recipeDir: string, settings: RecipeTrustSettings, resolveDir: string): Promise<boolean> {
  if (!recipeDir.startsWith('/')) return true;
  const folder = await real(recipeDir);
  if (!isInside(await real(settings.workingRoot), folder) && !isInside(await real(resolveDir), folder)) return true;
  for (const trusted of settings.trustedDirs) {
    if (isInside(await real(trusted), folder)) return true;
  }
  return false;
}

/** The message when a tenant-writable definition declares servers. */
export function untrustedRecipeMessage(file: string): string {
  return (
    `${file} declares MCP servers, but it lies in a folder under the working directory that tenants can write, so they are not started ` +
    '(nothing was started). The operator can allow them by naming that folder in ERRAND_TRUSTED_RECIPE_DIRS, or by moving the recipe to a configured store.'
  );
}

/** What the verifier needs from the worker. */
export interface RecipeServerVerifierOptions {
  resolverFor: (workingDir: string) => SourceResolver;
  trust: RecipeTrustSettings;
  paths?: PathRules;
  /** `recipeEnvKeys`: what a recipe's `env_keys` may pass (the conversion must match the planner's). */
  allowedEnvKeys?: readonly string[];
}

/** Checks recipe-server configs from workflow input against the definitions the worker finds itself. */
export class RecipeServerVerifier {
  /** Configs already verified (with their origin), so a running delegation does not re-render per call. */
  private readonly verified = new Set<string>();

  constructor(private readonly options: RecipeServerVerifierOptions) {}

  /** Throws a ToolsetRegistryError saying why, unless this config may start. */
  async verify(config: McpServerConfig, origin: RecipeServerOrigin | undefined): Promise<void> {
    if (origin === undefined) {
      throw new ToolsetRegistryError(`recipe MCP server "${config.name}" does not say which recipe declared it, so this worker cannot check it; nothing was started (plan the delegation again)`);
    }
    const key = canonicalJson({ config, origin });
    if (this.verified.has(key)) return;
    const resolved = await this.options.resolverFor(origin.resolveDir).resolve(origin.source);
    if (!resolved.ok) throw new ToolsetRegistryError(`recipe MCP server "${config.name}": its source "${origin.source}" cannot be found on this worker; nothing was started`);
    const snapshot = resolved.snapshot;
    const file = `${snapshot.store.description}: ${snapshot.path}`;
    if (!(await recipeFolderTrusted(snapshot.recipeDir, this.options.trust, origin.resolveDir))) throw new ToolsetRegistryError(untrustedRecipeMessage(file));
    let declared: readonly RecipeExtension[];
    if (snapshot.definition.type === 'agent') {
      declared = snapshot.definition.agent.mcpServers ?? [];
    } else {
      const rendered = await renderSource(snapshot, origin.values, { workingDirectory: origin.workingDir, ...(this.options.paths ? { paths: this.options.paths } : {}) });
      declared = rendered.ok ? rendered.recipe?.extensions ?? [] : [];
    }
    const wanted = canonicalJson(config);
    const conversion = this.options.allowedEnvKeys ? { allowedEnvKeys: this.options.allowedEnvKeys } : {};
    const found = declared.some((extension) => {
      const converted = recipeServerFromExtension(extension, conversion);
      return converted.ok && canonicalJson(converted.server.config) === wanted;
    });
    if (!found) {
      throw new ToolsetRegistryError(`recipe MCP server "${config.name}" is not declared by ${file} as this worker reads it; nothing was started (plan the delegation again)`);
    }
    if (this.verified.size >= recipeVerifiedCacheEntries) this.verified.clear();
    this.verified.add(key);
  }
}

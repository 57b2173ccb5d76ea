import type { RecipeServerOrigin } from '../contracts/agent-wire';
import type { CommandOptions } from './command-environment';
import { canonicalJson, isRecipeServerName, mcpServerConfigSchema, type McpServerConfig } from './mcp-config';
import { McpToolset, type McpToolsetOptions } from './mcp-toolset';
import { recipeServerRetireAfterMs } from '../contracts/limits/tools';
import { RecipeServerToolset } from './recipe-server-toolset';
import { createDeveloperToolset, type DeveloperToolsetOptions } from './developer-toolset';
import { ToolsetRegistry, ToolsetRegistryError } from './toolset-registry';

/** Most recipe-declared servers one worker keeps registered (each distinct config is one entry). */
export const maxRecipeServersPerWorker = 256;

/**
 * What checks a recipe-declared server before it starts: `RecipeServerVerifier`
 * (src/sources/recipe-server-trust.ts), which resolves the recipe among the worker's own sources. Named here
 * by its one method, so the tools need nothing from the sources.
 */
export interface RecipeServerCheck {
  verify(config: McpServerConfig, origin: RecipeServerOrigin | undefined): Promise<void>;
}

/** Options of {@link createToolsetRegistryFromConfig}. */
export interface ToolsetRegistryConfig extends Omit<McpToolsetOptions, 'idleMs'> {
  /** The operator's MCP servers (already validated with `mcpServerListSchema`). */
  mcpServers: readonly McpServerConfig[];
  /** Close an unused MCP connection (stop a stdio server) after this long. */
  idleMs?: number;
  /**
   * Whether recipe-declared servers may start (`ERRAND_ALLOW_RECIPE_MCP_SERVERS`). Checked again on the
   * worker for every config that arrives in workflow input: the planner's check alone would trust whoever
   * started the workflow. Default false.
   */
  allowRecipeServers?: boolean;
  /**
   * Checks each recipe server against the recipe the worker finds itself, and where that recipe lives
   * (ERRAND_TRUSTED_RECIPE_DIRS). Required for recipe servers to start: without it none do.
   */
  recipeVerifier?: RecipeServerCheck;
  /** Settings of the built-in developer tools (working root, denied folders, command environment, sandbox). */
  developer?: DeveloperToolsetOptions;
}

/** A recipe server as a workflow input carries it: config and origin, both checked before use. */
export interface CarriedRecipeServer {
  config: unknown;
  origin?: RecipeServerOrigin;
}

/**
 * A worker's toolsets: the built-in developer toolset, the operator's MCP servers, and recipe-declared
 * servers registered on demand when an activity runs a delegation that carries them. Every MCP toolset
 * is one pooled client; {@link close} stops them all (call it when the worker shuts down).
 */
export class WorkerToolsetRegistry extends ToolsetRegistry {
  private readonly mcpToolsets: McpToolset[] = [];
  private readonly recipeToolsets: RecipeServerToolset[] = [];
  /** Canonical JSON of each registered recipe server's config, by toolset name. */
  private readonly recipeConfigs = new Map<string, string>();
  /** When a delegation last claimed each recipe server config (ms since the epoch), by toolset name. */
  private readonly recipeClaims = new Map<string, number>();

  constructor(
    private readonly mcpOptions: McpToolsetOptions = {},
    private readonly allowRecipeServers = false,
    private readonly recipe: { verifier?: RecipeServerCheck; commands?: CommandOptions } = {},
  ) {
    super();
  }

  /** Registers an MCP server as a toolset (one client, pooled for the life of the worker). */
  registerMcpServer(config: McpServerConfig): McpToolset {
    const toolset = new McpToolset(config, this.mcpOptions);
    this.register(toolset);
    this.mcpToolsets.push(toolset);
    return toolset;
  }

  /**
   * Makes sure the recipe-declared servers a delegation carries are registered on this worker, and
   * returns their toolset names. Idempotent and cheap when they already are: call it at the start of
   * every modelTurn and runTool (the worker that runs a turn may not be the one that planned it).
   *
   * A name is `recipe-<name>-<config hash>`; the full config is compared too, so a name collision (or a
   * forged input) can never route calls to another recipe's server. Configs are re-validated here
   * because they come from workflow input, and refused outright unless the operator allows recipe
   * servers on this worker: a workflow input is not the operator's word. Each config is then checked
   * against the recipe the worker finds itself, and that recipe's folder must be the operator's or one
   * the operator trusts (src/sources/recipe-server-trust.ts). Each server runs one process per working directory,
   * in the sandbox where one is configured (recipe-server-toolset.ts).
   */
  async ensureRecipeServers(servers: readonly CarriedRecipeServer[]): Promise<string[]> {
    const names: string[] = [];
    if (servers.length > 0 && !this.allowRecipeServers) {
      throw new ToolsetRegistryError(
        'this delegation carries recipe-declared MCP servers, but this worker does not allow them (ERRAND_ALLOW_RECIPE_MCP_SERVERS is not true); nothing was started',
      );
    }
    const verifier = this.recipe.verifier;
    if (servers.length > 0 && !verifier) throw new ToolsetRegistryError('this worker cannot check where recipe MCP servers come from; nothing was started');
    for (const { config: raw, origin } of servers) {
      const parsed = mcpServerConfigSchema.safeParse(raw);
      if (!parsed.success) {
        throw new ToolsetRegistryError(`invalid recipe MCP server config: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
      }
      const config = parsed.data;
      if (!isRecipeServerName(config.name)) {
        throw new ToolsetRegistryError(`recipe MCP server "${config.name}" must be named recipe-…; plan the delegation again`);
      }
      const canonical = canonicalJson(config);
      const known = this.recipeConfigs.get(config.name);
      if (known !== undefined && known !== canonical) {
        throw new ToolsetRegistryError(`recipe MCP server "${config.name}" is already registered with a different config`);
      }
      // Every delegation's claim is checked, also for a config another delegation registered already.
      await verifier?.verify(config, origin);
      if (known === undefined) {
        if (this.recipeConfigs.size >= maxRecipeServersPerWorker && !this.retireOldestIdleRecipeServer(Date.now())) {
          throw new ToolsetRegistryError(`this worker already runs ${maxRecipeServersPerWorker} distinct recipe MCP servers, all in use; try again later`);
        }
        const toolset = new RecipeServerToolset(config, this.mcpOptions, this.recipe.commands ?? {});
        this.register(toolset);
        this.recipeToolsets.push(toolset);
        this.recipeConfigs.set(config.name, canonical);
      }
      this.recipeClaims.set(config.name, Date.now());
      names.push(config.name);
    }
    return names;
  }

  /**
   * Retires the recipe server config claimed longest ago whose processes have all stopped (idle), if it was
   * last claimed over {@link recipeServerRetireAfterMs} ago: a delegation that registers a config uses it
   * within its activity, so a config claimed recently may be about to start and is kept. A retired config is
   * registered again by the next delegation that carries it.
   */
  private retireOldestIdleRecipeServer(now: number): boolean {
    const oldestFirst = [...this.recipeClaims.entries()].sort((left, right) => left[1] - right[1]);
    for (const [name, claimedAt] of oldestFirst) {
      if (now - claimedAt < recipeServerRetireAfterMs) return false;
      const toolset = this.recipeToolsets.find((candidate) => candidate.name === name);
      if (toolset && !toolset.idle()) continue;
      this.unregister(name);
      this.recipeConfigs.delete(name);
      this.recipeClaims.delete(name);
      const index = this.recipeToolsets.findIndex((candidate) => candidate.name === name);
      if (index >= 0) this.recipeToolsets.splice(index, 1);
      return true;
    }
    return false;
  }

  /** The MCP toolset of that name, if it is one (for diagnostics and tests). */
  mcpToolset(name: string): McpToolset | undefined {
    return this.mcpToolsets.find((toolset) => toolset.name === name);
  }

  /** The recipe server of that name, if one is registered (for diagnostics and tests). */
  recipeToolset(name: string): RecipeServerToolset | undefined {
    return this.recipeToolsets.find((toolset) => toolset.name === name);
  }

  /** Closes every MCP connection and stops every stdio server; later calls report the servers unavailable. */
  async close(): Promise<void> {
    await Promise.all([...this.mcpToolsets, ...this.recipeToolsets].map((toolset) => toolset.close(true)));
  }
}

/**
 * The worker's registry from configuration: `developer` plus one toolset per operator MCP server.
 * Nothing is started here; each server starts on first use.
 */
export function createToolsetRegistryFromConfig(config: ToolsetRegistryConfig): WorkerToolsetRegistry {
  const { mcpServers, allowRecipeServers, recipeVerifier, developer, ...options } = config;
  const registry = new WorkerToolsetRegistry(options, allowRecipeServers ?? false, {
    ...(recipeVerifier ? { verifier: recipeVerifier } : {}),
    ...(developer?.commands ? { commands: developer.commands } : {}),
  });
  registry.register(createDeveloperToolset(developer));
  for (const server of mcpServers) {
    if (isRecipeServerName(server.name)) {
      throw new ToolsetRegistryError(`MCP server name "${server.name}" is reserved for recipe-declared servers (prefix "recipe-")`);
    }
    registry.registerMcpServer(server);
  }
  return registry;
}

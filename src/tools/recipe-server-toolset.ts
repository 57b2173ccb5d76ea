import { maxRecipeServerInstancesPerConfig } from '../contracts/limits/tools';
import { bwrapProgramInvocation, commandEnvironment, type CommandOptions } from './command-environment';
import { isInside } from './confine-path';
import type { McpServerConfig } from './mcp-config';
import { McpToolset, type McpToolsetOptions } from './mcp-toolset';
import type { StdioLaunch } from './mcp-transport';
import { containedInvocation } from './process-containment';
import type { Tool, Toolset } from './tool';
import { ToolsetRegistryError } from './toolset-registry';

/**
 * A recipe-declared MCP server as a toolset: one server process per working directory, never shared
 * between tenants, each started like a `run_command` command (SEMANTICS §6, DESIGN "Trust boundary"):
 * - with the bubblewrap sandbox: inside it, with that working directory the only writable (and only
 *   visible) folder of the tenant's, the allow-listed environment and the sandbox's network setting;
 * - without it: as PID 1 of a PID namespace of its own where the system allows it, so nothing it starts
 *   outlives it (process-containment.ts), in the recipe's `cwd` if it names one (else the worker's).
 */
export class RecipeServerToolset implements Toolset {
  readonly name: string;
  readonly description: string;
  private readonly instances = new Map<string, McpToolset>();

  constructor(
    readonly config: McpServerConfig,
    private readonly options: McpToolsetOptions,
    private readonly commands: CommandOptions,
  ) {
    this.name = config.name;
    this.description = config.description ?? (config.type === 'stdio' ? `MCP server (${config.command})` : `MCP server at ${new URL(config.url).host}`);
  }

  /**
   * The server for a working directory (started on first use). The instances are kept least recently used
   * first: at the limit, the oldest idle one (its process stopped after its idle time) is dropped to make room,
   * so a worker that sees a new folder per delegation (`isolation: worktree`) never runs out; only when every
   * instance is busy is the new one refused.
   */
  instanceFor(workingDir: string | undefined): McpToolset {
    const key = workingDir ?? '';
    let instance = this.instances.get(key);
    if (instance) {
      this.instances.delete(key);
    } else {
      if (this.instances.size >= maxRecipeServerInstancesPerConfig && !this.dropOldestIdle()) {
        throw new ToolsetRegistryError(`recipe MCP server "${this.name}" is busy in ${maxRecipeServerInstancesPerConfig} working directories on this worker; try again later`);
      }
      instance = new McpToolset(this.config, { ...this.options, ...(this.config.type === 'stdio' ? { launch: this.launchFor(workingDir) } : {}) });
    }
    this.instances.set(key, instance);
    return instance;
  }

  /** Whether no instance runs or is in use (the config may be retired). */
  idle(): boolean {
    return [...this.instances.values()].every((instance) => instance.idle());
  }

  /** Drops the least recently used idle instance; false when every instance is busy. */
  private dropOldestIdle(): boolean {
    for (const [key, instance] of this.instances) {
      if (instance.idle()) {
        this.instances.delete(key);
        return true;
      }
    }
    return false;
  }

  /** The tools of the server that runs for `context.workingDir`. */
  tools(context?: { workingDir: string }): Promise<Tool[]> {
    return this.instanceFor(context?.workingDir).tools();
  }

  /** Every running instance (diagnostics and tests). */
  running(): McpToolset[] {
    return [...this.instances.values()];
  }

  /** Stops every instance. */
  async close(final = false): Promise<void> {
    await Promise.all([...this.instances.values()].map((instance) => instance.close(final)));
  }

  private launchFor(workingDir: string | undefined): StdioLaunch {
    const sandbox = this.commands.sandbox;
    return (command, args, env, cwd) => {
      if (sandbox) {
        // The sandbox is built around one tenant's working directory: without one there is nothing to start.
        if (workingDir === undefined) throw new ToolsetRegistryError(`recipe MCP server "${this.name}" needs the delegation's working directory to start in the sandbox (ERRAND_SANDBOX=bwrap); plan the delegation again`);
        const invocation = bwrapProgramInvocation(sandbox, workingDir, command, args, { ...commandEnvironment(this.commands), ...env });
        // A cwd the recipe names counts only inside the working directory: the sandbox shows nothing else of the tenant's.
        const start = cwd !== undefined && isInside(workingDir, cwd) ? cwd : workingDir;
        return { command: invocation.file, args: start === workingDir ? invocation.args : withChdir(invocation.args, start), cwd: workingDir };
      }
      const invocation = containedInvocation(this.commands.containment, command, args);
      return { command: invocation.file, args: invocation.args, ...(cwd !== undefined ? { cwd } : {}) };
    };
  }
}

/** bwrap arguments with the `--chdir` folder replaced. */
function withChdir(args: string[], folder: string): string[] {
  const index = args.indexOf('--chdir');
  if (index < 0) return args;
  return [...args.slice(0, index + 1), folder, ...args.slice(index + 2)];
}

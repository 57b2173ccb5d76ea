import type { JsonObject } from '../contracts/json';
import type { ToolSpec } from '../contracts/model';
import { createDeveloperToolset } from './developer-toolset';
import { toolError, type Tool, type ToolContext, type ToolResult, type Toolset } from './tool';
import { isValidToolsetName, matchesPattern, qualifyToolName } from './tool-name';

export { matchesPattern };

/**
 * Narrows a set of tools. Each entry is a qualified tool name (`developer__run_command`), a toolset name
 * (`developer`: all its tools), or a pattern with `*` wildcards over qualified names (`developer__*_file`).
 * A tool is offered when it matches `allow` (or `allow` is absent) and matches no `deny` entry.
 */
export interface ToolFilter {
  allow?: string[];
  deny?: string[];
}

/** The tools one session offers its model: toolsets by name, optionally filtered. */
export interface ToolScope {
  toolsetNames: string[];
  filter?: ToolFilter;
}

/** Thrown when a toolset is registered twice or asked for but not registered: a configuration error. */
export class ToolsetRegistryError extends Error {
  /** Marker for recognition without `instanceof` (DESIGN.md convention 5). */
  readonly errandError = 'ToolsetRegistryError';
  constructor(message: string) {
    super(message);
    this.name = 'ToolsetRegistryError';
  }
}

/** Whether `error` is a ToolsetRegistryError, by marker. */
export function isToolsetRegistryError(error: unknown): error is ToolsetRegistryError {
  return typeof error === 'object' && error !== null && 'errandError' in error && error.errandError === 'ToolsetRegistryError';
}

/**
 * The toolsets a worker knows, by name. The built-in `developer` toolset is registered by
 * `createToolsetRegistry`; other toolsets (MCP servers) are added with `register`.
 */
export class ToolsetRegistry {
  private readonly toolsets = new Map<string, Toolset>();

  /** Adds a toolset; its name must be valid and not yet registered. */
  register(toolset: Toolset): void {
    if (!isValidToolsetName(toolset.name)) {
      throw new ToolsetRegistryError(`toolset name "${toolset.name}" is invalid: use lower-case letters, digits, "-" and single "_"`);
    }
    if (this.toolsets.has(toolset.name)) throw new ToolsetRegistryError(`toolset "${toolset.name}" is already registered`);
    this.toolsets.set(toolset.name, toolset);
  }

  /** Removes a toolset (a retired recipe server); unknown names are ignored. */
  protected unregister(name: string): void {
    this.toolsets.delete(name);
  }

  /** Names of the registered toolsets, in registration order. */
  names(): string[] {
    return [...this.toolsets.keys()];
  }

  /** Whether a toolset of that name is registered. */
  has(name: string): boolean {
    return this.toolsets.has(name);
  }

  /** The registered toolset of that name, if any. */
  get(name: string): Toolset | undefined {
    return this.toolsets.get(name);
  }

  /**
   * Tool specs, with qualified names, of the given toolsets after the filter. An unknown toolset name is
   * a caller error (delegate validates names against `names()` first) and throws a ToolsetRegistryError.
   */
  async specsFor(toolsetNames: string[], filter?: ToolFilter, workingDir?: string): Promise<ToolSpec[]> {
    const tools = await this.qualifiedTools({ toolsetNames, filter }, workingDir);
    return tools.map(({ qualifiedName, tool }) => ({ ...tool.spec, name: qualifiedName }));
  }

  /**
   * Runs a tool by qualified name. An unknown name — or, when `scope` is given, a tool outside the scope
   * the model was offered — is an `isError` result listing the available tools, never a throw, so the
   * model can correct itself.
   */
  async call(qualifiedName: string, args: JsonObject, context: ToolContext, scope?: ToolScope): Promise<ToolResult> {
    const available = await this.qualifiedTools(scope ?? { toolsetNames: this.names() }, context.workingDir);
    const found = available.find((entry) => entry.qualifiedName === qualifiedName);
    if (found === undefined) {
      const names = available.map((entry) => entry.qualifiedName);
      return toolError(
        `Unknown tool "${qualifiedName}". Available tools: ${names.length > 0 ? names.join(', ') : '(none)'}.`,
      );
    }
    return found.tool.run(args, context);
  }

  private async qualifiedTools(scope: ToolScope, workingDir?: string): Promise<{ qualifiedName: string; tool: Tool }[]> {
    const result: { qualifiedName: string; tool: Tool }[] = [];
    for (const toolsetName of scope.toolsetNames) {
      const toolset = this.toolsets.get(toolsetName);
      if (toolset === undefined) {
        throw new ToolsetRegistryError(`unknown toolset "${toolsetName}"; registered toolsets: ${this.names().join(', ') || '(none)'}`);
      }
      for (const tool of await toolset.tools(workingDir !== undefined ? { workingDir } : undefined)) {
        const qualifiedName = qualifyToolName(toolset.name, tool.spec.name);
        if (isOffered(qualifiedName, toolset.name, scope.filter)) result.push({ qualifiedName, tool });
      }
    }
    return result;
  }
}

/** A registry with the built-in toolsets registered. */
export function createToolsetRegistry(): ToolsetRegistry {
  const registry = new ToolsetRegistry();
  registry.register(createDeveloperToolset());
  return registry;
}

function isOffered(qualifiedName: string, toolsetName: string, filter: ToolFilter | undefined): boolean {
  if (filter === undefined) return true;
  const matches = (entry: string): boolean => entry === toolsetName || matchesPattern(entry, qualifiedName);
  if (filter.allow !== undefined && !filter.allow.some(matches)) return false;
  return !(filter.deny ?? []).some(matches);
}


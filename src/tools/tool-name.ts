import { toolNameSeparator } from '../contracts/limits/tools';

/**
 * Qualified tool names: the model sees `<toolset>__<tool>` (e.g. `developer__read_file`) so tools of
 * different toolsets never collide. Model providers commonly accept only `[A-Za-z0-9_-]{1,64}` for tool
 * names, hence a separator made of underscores rather than `.` or `/`.
 */

/** Valid toolset names: lower-case letters, digits, `-` and single `_`; never the separator. */
const toolsetNamePattern = /^[a-z0-9](?:[a-z0-9-]|_(?!_))*$/;

/** Whether `name` is a valid toolset name (it must not contain the separator `__`). */
export function isValidToolsetName(name: string): boolean {
  return toolsetNamePattern.test(name) && !name.endsWith('_');
}

/** Joins a toolset name and a tool name into the name the model sees. */
export function qualifyToolName(toolsetName: string, toolName: string): string {
  if (!isValidToolsetName(toolsetName)) {
    throw new Error(
      `toolset name "${toolsetName}" is invalid: use lower-case letters, digits, "-" and single "_" (never "${toolNameSeparator}")`,
    );
  }
  if (toolName.length === 0) throw new Error(`tool name of toolset "${toolsetName}" is empty`);
  return `${toolsetName}${toolNameSeparator}${toolName}`;
}

/**
 * Splits a qualified name at the first separator (toolset names never contain it, tool names may).
 * Returns undefined when the name is not qualified.
 */
export function splitToolName(qualifiedName: string): { toolsetName: string; toolName: string } | undefined {
  const at = qualifiedName.indexOf(toolNameSeparator);
  if (at <= 0) return undefined;
  const toolsetName = qualifiedName.slice(0, at);
  const toolName = qualifiedName.slice(at + toolNameSeparator.length);
  if (toolName.length === 0 || !isValidToolsetName(toolsetName)) return undefined;
  return { toolsetName, toolName };
}

/** Whether `name` matches `pattern`, where `*` stands for any run of characters. */
export function matchesPattern(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  const escaped = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`).test(name);
}

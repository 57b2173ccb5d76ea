import { lstat, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { listDirectoryMaxEntries } from '../../contracts/limits';
import { confinePath, type PathRules } from '../confine-path';
import { defineTool } from '../define-tool';
import { toolError, toolSuccess, type Tool } from '../tool';

const schema = z
  .object({
    path: z.string().optional().describe('Directory path, relative to the working directory (default ".").'),
  })
  .strict();

/** `list_directory`: the entries of one directory with their type and size, bounded in count. */
export function createListDirectoryTool(paths: PathRules = {}): Tool {
  return defineTool({
    name: 'list_directory',
    description:
      `List the entries of a directory inside the working directory: type (dir, file, symlink, other), size in bytes for files, ` +
      `and the target of symbolic links. At most ${listDirectoryMaxEntries} entries are shown.`,
    schema,
    async run(args, context) {
      const requested = args.path ?? '.';
      const confined = await confinePath(context.workingDir, requested, paths);
      if (!confined.ok) return toolError(confined.message);
      let names: string[];
      try {
        names = await readdir(confined.absolutePath);
      } catch (error) {
        const code = error instanceof Error && 'code' in error ? error.code : undefined;
        if (code === 'ENOENT') return toolError(`directory "${requested}" does not exist`);
        if (code === 'ENOTDIR') return toolError(`"${requested}" is a file, not a directory; use read_file`);
        throw error;
      }
      names.sort();
      const shown = names.slice(0, listDirectoryMaxEntries);
      const lines: string[] = [];
      for (const name of shown) {
        if (context.abortSignal.aborted) return toolError('list_directory was cancelled');
        const full = path.join(confined.absolutePath, name);
        const stats = await lstat(full).catch(() => undefined);
        if (stats === undefined) continue; // removed while listing
        if (stats.isDirectory()) lines.push(`dir      ${name}/`);
        else if (stats.isFile()) lines.push(`file     ${name} (${stats.size} bytes)`);
        else if (stats.isSymbolicLink()) lines.push(`symlink  ${name} -> ${await readlink(full).catch(() => '?')}`);
        else lines.push(`other    ${name}`);
      }
      const header = `${confined.displayPath}: ${names.length} entr${names.length === 1 ? 'y' : 'ies'}`;
      const footer = names.length > shown.length ? `\n[${names.length - shown.length} more entries not shown]` : '';
      return toolSuccess(`${header}\n${lines.join('\n')}${footer}`.trimEnd());
    },
  });
}

/** `list_directory` with no rules beyond the working directory (tests, the plain registry). */
export const listDirectoryTool: Tool = createListDirectoryTool();

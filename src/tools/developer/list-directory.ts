import { readlink } from 'node:fs/promises';
import { z } from 'zod';
import { listDirectoryMaxEntries } from '../../contracts/limits/tools';
import { confinePath, type PathRules } from '../confine-path';
import { ConfinedDir, isConfinedWalkError, walkStart } from '../confined-dir';
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
      // The folder is reached from the working root one step at a time, never through a link (confined-dir.ts).
      const start = await walkStart(confined.absolutePath, confined.realRoot, paths.workingRoot);
      let folder: ConfinedDir;
      try {
        folder = await withRoot(start.root, (root) => root.openPath(start.relative));
      } catch (error) {
        if (isConfinedWalkError(error) && error.reason === 'missing') return toolError(`directory "${requested}" does not exist`);
        if (isConfinedWalkError(error) && error.reason === 'not-directory') return toolError(`"${requested}" is a file, not a directory; use read_file`);
        if (isConfinedWalkError(error) && error.reason === 'link') return toolError(`"${requested}" changed into a symbolic link while it was being listed; it was not followed — check the path and try again`);
        throw error;
      }
      const lines: string[] = [];
      let names: string[];
      try {
        names = (await folder.entries()).map((entry) => entry.name);
        for (const name of names.slice(0, listDirectoryMaxEntries)) {
          if (context.abortSignal.aborted) return toolError('list_directory was cancelled');
          const stats = await folder.lstatChild(name);
          if (stats === undefined) continue; // removed while listing
          if (stats.isDirectory()) lines.push(`dir      ${name}/`);
          else if (stats.isFile()) lines.push(`file     ${name} (${stats.size} bytes)`);
          else if (stats.isSymbolicLink()) lines.push(`symlink  ${name} -> ${await readlink(folder.pathOf(name)).catch(() => '?')}`);
          else lines.push(`other    ${name}`);
        }
      } finally {
        await folder.close();
      }
      const shown = names.slice(0, listDirectoryMaxEntries);
      const header = `${confined.displayPath}: ${names.length} entr${names.length === 1 ? 'y' : 'ies'}`;
      const footer = names.length > shown.length ? `\n[${names.length - shown.length} more entries not shown]` : '';
      return toolSuccess(`${header}\n${lines.join('\n')}${footer}`.trimEnd());
    },
  });
}

/** Opens the walk's root, runs `work` on it, and closes it (the folder `work` opened stays open). */
async function withRoot<T>(root: string, work: (base: ConfinedDir) => Promise<T>): Promise<T> {
  const base = await ConfinedDir.openRoot(root);
  try {
    return await work(base);
  } finally {
    await base.close();
  }
}

/** `list_directory` with no rules beyond the working directory (tests, the plain registry). */
export const listDirectoryTool: Tool = createListDirectoryTool();

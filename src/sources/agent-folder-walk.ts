import { maxAgentFolderDepth, maxStoreEntries } from '../contracts/limits/sources';
import { entryKindOf } from './source-store';

/**
 * The subfolders of an agent folder (`.claude/agents/team/reviewer.md`), walked as Claude Code scans them,
 * but never through a symbolic link. The walk only names paths; the store reads (and checks) each file
 * itself, so it works over any way of listing a folder (plain `readdir`, or a confined walk).
 */

/** One entry of a folder, by what it is itself (a link is a link, whatever it points to). */
export interface FolderEntry {
  name: string;
  kind: 'directory' | 'file' | 'link' | 'other';
}

/** Lists a folder of the agent folder (`''` is its top); throws when it cannot. */
export type ListFolder = (relativeFolder: string) => Promise<FolderEntry[]>;

/** Agent files found below the top, and what was skipped, worded for people (prefixed with `where`). */
export interface AgentFolderWalk {
  paths: string[];
  problems: string[];
}

/** Folders never entered. */
const skippedFolders = new Set(['.git', 'node_modules']);

/**
 * Agent files (`.md`) of the subfolders of an agent folder, in path order: a folder's files before its
 * subfolders, names sorted, so a top-level `reviewer.md` is found before `team/reviewer.md`. The top's own
 * files are the store's (listed as before); a link anywhere is skipped and reported, except a link at the
 * top named like a source file (the store checks that one). Bounded by {@link maxAgentFolderDepth} levels
 * and {@link maxStoreEntries} entries.
 */
export async function walkAgentSubfolders(list: ListFolder, where: string): Promise<AgentFolderWalk> {
  const paths: string[] = [];
  const problems: string[] = [];
  let seen = 0;
  const walk = async (folder: string, depth: number): Promise<void> => {
    let children: FolderEntry[];
    try {
      children = [...(await list(folder))].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    } catch (error) {
      problems.push(`${where}: ${folder}: cannot list: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    const folders: string[] = [];
    for (const child of children) {
      if (seen >= maxStoreEntries) return;
      seen += 1;
      const path = folder === '' ? child.name : `${folder}/${child.name}`;
      if (child.kind === 'link') {
        if (folder !== '' || entryKindOf(child.name) === undefined) problems.push(`${where}: ${path}: skipped: agent folders are scanned without following symbolic links`);
      } else if (child.kind === 'directory') {
        if (!skippedFolders.has(child.name)) folders.push(path);
      } else if (folder !== '' && child.kind === 'file' && entryKindOf(child.name) === 'agent') {
        paths.push(path);
      }
    }
    for (const sub of folders) {
      if (depth >= maxAgentFolderDepth) problems.push(`${where}: ${sub}: not scanned: agent folders are scanned ${maxAgentFolderDepth} levels deep`);
      else await walk(sub, depth + 1);
    }
  };
  await walk('', 0);
  return { paths, problems };
}

import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import type { Dirent } from 'node:fs';
import { maxSourceFileBytes, maxStoreEntries } from '../contracts/limits';
import { walkAgentSubfolders, type FolderEntry } from './agent-folder-walk';
import { entryKindOf, formatBytes, type SourceStore, type StoreEntry, type StoreEntryKind, type StoreListing, type StoreReadResult } from './source-store';

/** Options of a {@link DirectoryStore}. */
export interface DirectoryStoreOptions {
  /** Human description (defaults to the path). */
  description?: string;
  /** Only these kinds are listed (the project directory itself holds recipes only). */
  kinds?: readonly StoreEntryKind[];
  /** Overrides the version of every entry (a git store passes the commit SHA). */
  version?: () => string;
  /** Id override (a git store's id names the repository, not its cache folder). */
  id?: string;
  /**
   * An agent folder (`.claude/agents`, …): its subfolders are scanned too, for agent files only, as
   * Claude Code scans them (`team/reviewer.md`), without following links (src/sources/agent-folder-walk.ts).
   */
  agentFolder?: boolean;
}

/**
 * A local directory of recipes and agents (an agent folder's subfolders too). A missing directory lists as empty: most of
 * the searched places (`.goose/recipes`, `~/.claude/agents`, …) usually do not exist. Files over
 * {@link maxSourceFileBytes} and symlinks that resolve outside the directory are refused.
 */
export class DirectoryStore implements SourceStore {
  readonly id: string;
  readonly root: string;
  private readonly options: DirectoryStoreOptions;

  constructor(root: string, options: DirectoryStoreOptions = {}) {
    this.root = resolve(root);
    this.id = options.id ?? `dir:${this.root}`;
    this.options = options;
  }

  describe(): string {
    return this.options.description ?? this.root;
  }

  folderOf(path: string): string {
    return posix.dirname(path) === '.' ? this.root : join(this.root, posix.dirname(path));
  }

  async list(): Promise<StoreListing> {
    let names: string[];
    try {
      names = (await readdir(this.root)).sort();
    } catch (error) {
      if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return { entries: [], problems: [] };
      throw new Error(`${this.describe()}: cannot list ${this.root}: ${messageOf(error)}`);
    }
    const entries: StoreEntry[] = [];
    const problems: string[] = [];
    const rootReal = await realpath(this.root);
    for (const name of names.slice(0, maxStoreEntries)) {
      const kind = entryKindOf(name);
      if (!kind || (this.options.kinds && !this.options.kinds.includes(kind))) continue;
      try {
        const info = await this.check(rootReal, name);
        if (!info) continue;
        entries.push({ path: name, kind, version: this.options.version?.() ?? `mtime:${info.mtime.toISOString()}` });
      } catch (error) {
        problems.push(messageOf(error));
      }
    }
    if (this.options.agentFolder) {
      const walk = await walkAgentSubfolders(async (folder) => (await readdir(join(this.root, folder), { withFileTypes: true })).map(folderEntry), this.describe());
      problems.push(...walk.problems);
      for (const path of walk.paths) {
        try {
          const info = await this.check(rootReal, path);
          if (info) entries.push({ path, kind: 'agent', version: this.options.version?.() ?? `mtime:${info.mtime.toISOString()}` });
        } catch (error) {
          problems.push(messageOf(error));
        }
      }
    }
    return { entries, problems };
  }

  async read(path: string): Promise<StoreReadResult> {
    const relativePath = this.insidePath(path);
    const rootReal = await realpath(this.root);
    const info = await this.check(rootReal, relativePath);
    if (!info) throw new Error(`${this.describe()}: ${path} is not a file`);
    const content = await readFile(join(this.root, relativePath), 'utf8');
    return { content, version: this.options.version?.() ?? `mtime:${info.mtime.toISOString()}` };
  }

  /** Refuses paths that climb out of the store (`../x`, absolute paths elsewhere). */
  private insidePath(path: string): string {
    const normalized = posix.normalize(path.split(sep).join('/'));
    if (isAbsolute(normalized)) {
      const inside = relative(this.root, normalized);
      if (inside.startsWith('..') || isAbsolute(inside)) throw new Error(`${this.describe()}: ${path} is outside the store (${this.root})`);
      return inside;
    }
    if (normalized === '..' || normalized.startsWith('../')) throw new Error(`${this.describe()}: ${path} is outside the store (${this.root})`);
    return normalized;
  }

  /** Stats a file after the symlink and size checks; undefined for directories and other non-files. */
  private async check(rootReal: string, relativePath: string): Promise<{ mtime: Date } | undefined> {
    const full = join(this.root, relativePath);
    const link = await lstat(full);
    if (link.isSymbolicLink()) {
      let target: string;
      try {
        target = await realpath(full);
      } catch {
        throw new Error(`${this.describe()}: ${relativePath}: refused: symlink target does not exist`);
      }
      const inside = relative(rootReal, target);
      if (inside.startsWith('..') || isAbsolute(inside)) {
        throw new Error(`${this.describe()}: ${relativePath}: refused: symlink leaves the store (points to ${target}); only links inside ${this.root} are followed`);
      }
    } else {
      // A path like sub/file.md may pass through a symlinked folder; check the real location too.
      const inside = relative(rootReal, await realpath(full));
      if (inside.startsWith('..') || isAbsolute(inside)) throw new Error(`${this.describe()}: ${relativePath}: refused: resolves outside the store`);
    }
    const info = await stat(full);
    if (!info.isFile()) return undefined;
    if (info.size > maxSourceFileBytes) {
      throw new Error(`${this.describe()}: ${relativePath}: refused: file is ${formatBytes(info.size)}, over the ${formatBytes(maxSourceFileBytes)} limit for sources`);
    }
    return { mtime: info.mtime };
  }
}

/** A directory entry by what it is itself (a link is a link). */
function folderEntry(entry: Dirent): FolderEntry {
  return { name: entry.name, kind: entry.isSymbolicLink() ? 'link' : entry.isDirectory() ? 'directory' : entry.isFile() ? 'file' : 'other' };
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/** Message of an unknown thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

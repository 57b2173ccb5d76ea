import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import type { Dirent, Stats } from 'node:fs';
import { maxSourceFileBytes, maxStoreEntries } from '../contracts/limits/sources';
import { isConfinedWalkError, withConfinedDir, type ConfinedDir } from '../tools/confined-dir';
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
   * A folder above the store that others may write (the working root of tenant folders): the store is
   * then reached from it one step at a time and read without following any symbolic link, so a tenant
   * cannot make the store a link to another tenant's folder (see src/tools/confined-dir.ts).
   */
  confinedWithin?: string;
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
    if (this.options.confinedWithin !== undefined) return this.listConfined(this.options.confinedWithin);
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
    if (this.options.confinedWithin !== undefined) return this.readConfined(this.options.confinedWithin, relativePath);
    const rootReal = await realpath(this.root);
    const info = await this.check(rootReal, relativePath);
    if (!info) throw new Error(`${this.describe()}: ${path} is not a file`);
    const content = await readFile(join(this.root, relativePath), 'utf8');
    return { content, version: this.options.version?.() ?? `mtime:${info.mtime.toISOString()}` };
  }

  /** The store's folder below the confining folder (a store outside it is refused). */
  private relativeTo(base: string): string {
    const inside = relative(resolve(base), this.root);
    if (inside.startsWith('..') || isAbsolute(inside)) throw new Error(`${this.describe()}: refused: the store is not inside the folder it is confined to`);
    return inside.split(sep).join('/');
  }

  /** Runs `work` on the store's folder reached without links; undefined when the folder does not exist. */
  private async inConfinedFolder<T>(base: string, subfolder: string, work: (folder: ConfinedDir) => Promise<T>): Promise<T | undefined> {
    const inside = [this.relativeTo(base), subfolder].filter((part) => part !== '' && part !== '.').join('/');
    try {
      return await withConfinedDir(base, inside, work);
    } catch (error) {
      if (isConfinedWalkError(error) && error.reason === 'missing') return undefined;
      if (isConfinedWalkError(error)) throw new Error(`${this.describe()}: refused: ${this.storeRelative(base, error.relativePath)} ${linkWords(error.reason)}`);
      throw error;
    }
  }

  /** A refused step's path, relative to the store (the folder the tenant sees), never a server path. */
  private storeRelative(base: string, walked: string): string {
    const store = this.relativeTo(base);
    const inside = posix.relative(store === '' ? '.' : store, walked);
    return inside === '' ? 'the store folder' : inside.startsWith('..') ? 'a folder on the way to the store' : inside;
  }

  private async listConfined(base: string): Promise<StoreListing> {
    const problems: string[] = [];
    let entries: StoreEntry[] | undefined;
    try {
      entries = await this.inConfinedFolder(base, '.', async (folder) => {
        const found: StoreEntry[] = [];
        for (const entry of (await folder.entries()).slice(0, maxStoreEntries)) {
          const kind = entryKindOf(entry.name);
          if (!kind || (this.options.kinds && !this.options.kinds.includes(kind))) continue;
          if (entry.kind === 'link') {
            problems.push(`${this.describe()}: ${entry.name}: skipped: a symbolic link, and links are not followed in folders under the working directory`);
            continue;
          }
          if (entry.kind !== 'file') continue;
          const checked = this.sizedEntry(entry.name, kind, await folder.lstatChild(entry.name), problems);
          if (checked) found.push(checked);
        }
        return found;
      });
    } catch (error) {
      return { entries: [], problems: [messageOf(error)] };
    }
    if (entries === undefined) return { entries: [], problems };
    if (this.options.agentFolder) await this.walkConfinedAgentFolders(base, entries, problems);
    return { entries, problems };
  }

  /** An agent folder's subfolders, walked through the confined handles (no link followed at any step). */
  private async walkConfinedAgentFolders(base: string, entries: StoreEntry[], problems: string[]): Promise<void> {
    const walk = await walkAgentSubfolders(async (folder) => (await this.inConfinedFolder(base, folder, (opened) => opened.entries())) ?? [], this.describe());
    problems.push(...walk.problems);
    for (const path of walk.paths) {
      try {
        const info = await this.inConfinedFolder(base, posix.dirname(path), (opened) => opened.lstatChild(posix.basename(path)));
        const checked = this.sizedEntry(path, 'agent', info, problems);
        if (checked) entries.push(checked);
      } catch (error) {
        problems.push(messageOf(error));
      }
    }
  }

  /** A listed file as a store entry: only a regular file within the size limit (a larger one is reported). */
  private sizedEntry(path: string, kind: StoreEntryKind, info: Stats | undefined, problems: string[]): StoreEntry | undefined {
    if (!info?.isFile()) return undefined;
    if (info.size > maxSourceFileBytes) {
      problems.push(`${this.describe()}: ${path}: refused: file is ${formatBytes(info.size)}, over the ${formatBytes(maxSourceFileBytes)} limit for sources`);
      return undefined;
    }
    return { path, kind, version: this.options.version?.() ?? `mtime:${info.mtime.toISOString()}` };
  }

  private async readConfined(base: string, relativePath: string): Promise<StoreReadResult> {
    const folder = posix.dirname(relativePath);
    const name = posix.basename(relativePath);
    const read = await this.inConfinedFolder(base, folder, async (opened) => {
      try {
        return await opened.readFile(name, maxSourceFileBytes);
      } catch (error) {
        if (isConfinedWalkError(error) && error.reason === 'missing') return undefined;
        throw error;
      }
    });
    if (read === undefined) throw new Error(`${this.describe()}: ${relativePath} is not a file`);
    if ('tooLarge' in read) {
      throw new Error(`${this.describe()}: ${relativePath}: refused: file is ${formatBytes(read.tooLarge)}, over the ${formatBytes(maxSourceFileBytes)} limit for sources`);
    }
    return { content: read.content.toString('utf8'), version: this.options.version?.() ?? `mtime:${read.stats.mtime.toISOString()}` };
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

function linkWords(reason: string): string {
  switch (reason) {
    case 'link':
      return 'is a symbolic link (or became one); links are not followed in folders under the working directory';
    case 'not-directory':
      return 'is not a folder';
    default:
      return 'is not a regular file';
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

import { constants, existsSync, type Dirent, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { isInside } from './confine-path';

/**
 * Walking a folder that someone else may write (a tenant's folder, errand's data folder) without ever
 * following a symbolic link out of it, at any step, even while the folder changes under the walk.
 *
 * Node has no `openat`, but on Linux a directory opened with `O_DIRECTORY | O_NOFOLLOW` can serve as a
 * base: `/proc/self/fd/<fd>/<name>` is resolved by the kernel relative to the directory that handle
 * holds (the handle, not the path it was opened by), and `O_NOFOLLOW` refuses `<name>` when it is a link.
 * So every step opens one name relative to the handle of the step before: a folder swapped for a symlink
 * after it was listed is refused at the open, and a folder renamed away keeps being the one walked.
 * Decision 0020 explains the choice. Where there is no procfs (not Linux: a developer's machine), each step
 * opens the full path with `O_NOFOLLOW` and compares device and inode with what the path names after the
 * open — the check-after-open of open-confined.ts, which a swap-and-swap-back can still beat.
 */

/** Whether handles can be used as bases through procfs. */
const procfsBases = process.platform === 'linux' && existsSync('/proc/self/fd');

/** Why a step of a confined walk was refused. */
export type ConfinedRefusal = 'missing' | 'link' | 'not-directory' | 'not-regular';

/** A refused step: the reason and the relative path that was refused. */
export class ConfinedWalkError extends Error {
  readonly errandError = 'ConfinedWalkError';
  constructor(
    readonly reason: ConfinedRefusal,
    readonly relativePath: string,
  ) {
    super(`${relativePath}: ${refusalText(reason)}`);
    this.name = 'ConfinedWalkError';
  }
}

/** Words for a refusal, for messages that name the path. */
export function refusalText(reason: ConfinedRefusal): string {
  switch (reason) {
    case 'missing':
      return 'does not exist';
    case 'link':
      return 'is a symbolic link (or changed into one), which is not followed here';
    case 'not-directory':
      return 'is not a folder';
    case 'not-regular':
      return 'is not a regular file';
  }
}

/** Whether `error` is a {@link ConfinedWalkError} (by marker). */
export function isConfinedWalkError(error: unknown): error is ConfinedWalkError {
  return typeof error === 'object' && error !== null && 'errandError' in error && error.errandError === 'ConfinedWalkError';
}

/** One entry of a confined folder, by what it is itself (a link is never looked through). */
export interface ConfinedEntry {
  name: string;
  kind: 'directory' | 'file' | 'link' | 'other';
}

const directoryFlags = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const fileFlags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * An opened folder: the base of every further step. `relativePath` is where it is below the walk's root
 * (for messages). Close it when done (handles of a walk are closed by {@link walkConfined} itself).
 */
export class ConfinedDir {
  /** Device and inode, read from the handle when first asked for (most walks never ask). */
  private stats: Promise<Stats> | undefined;

  private constructor(
    private readonly handle: FileHandle,
    /** The path the folder was reached by (used only where there is no procfs). */
    private readonly lexical: string,
    readonly relativePath: string,
  ) {}

  /**
   * Opens the root of a walk: a folder the operator named (the working root, the data folder), which may
   * itself be reached through links the operator made. Throws a ConfinedWalkError 'missing' when absent.
   */
  static async openRoot(folder: string): Promise<ConfinedDir> {
    const real = await realpath(folder).catch((error: unknown) => {
      if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) throw new ConfinedWalkError('missing', '.');
      throw error;
    });
    const handle = await open(real, constants.O_RDONLY | constants.O_DIRECTORY).catch((error: unknown) => {
      if (isCode(error, 'ENOENT')) throw new ConfinedWalkError('missing', '.');
      if (isCode(error, 'ENOTDIR')) throw new ConfinedWalkError('not-directory', '.');
      throw error;
    });
    return new ConfinedDir(handle, real, '.');
  }

  /** Device and inode of the folder (to recognise a folder, e.g. errand's data folder, wherever it is met). */
  async identity(): Promise<{ dev: number; ino: number }> {
    this.stats ??= this.handle.stat();
    const { dev, ino } = await this.stats;
    return { dev, ino };
  }

  /** The path of `name` in this folder, resolved by the kernel relative to the handle (on Linux). */
  pathOf(name: string): string {
    checkName(name);
    return procfsBases ? `/proc/self/fd/${this.handle.fd}/${name}` : path.join(this.lexical, name);
  }

  /** The path of the folder itself for calls that take a folder (readdir). */
  private get self(): string {
    return procfsBases ? `/proc/self/fd/${this.handle.fd}` : this.lexical;
  }

  /** Opens the folder `name` of this folder; a link there is refused, never followed. */
  async openChild(name: string): Promise<ConfinedDir> {
    const relative = this.relativeOf(name);
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(name), directoryFlags);
    } catch (error) {
      throw await this.refusalFor(name, error);
    }
    // With procfs the open itself was relative to this folder's handle and refused a link: nothing to check
    // after it. Without, what the path names now must be what was opened.
    if (!procfsBases) {
      try {
        if (!(await sameFile(path.join(this.lexical, name), await handle.stat()))) throw new ConfinedWalkError('link', relative);
      } catch (error) {
        await handle.close();
        throw error;
      }
    }
    return new ConfinedDir(handle, path.join(this.lexical, name), relative);
  }

  /**
   * Opens the folder at `relative` (POSIX segments below this folder) one step at a time. With `create`,
   * missing folders are made on the way (each relative to its parent's handle, so never through a link).
   */
  async openPath(relative: string, options: { create?: boolean; mode?: number } = {}): Promise<ConfinedDir> {
    const segments = splitRelative(relative);
    // No segment: a handle of this same folder, so the caller may close what it gets back in every case.
    if (segments.length === 0) return this.openChild('.');
    // Each step opens from the handle of the step before; this folder's own handle stays the caller's, and
    // `opened` is the last handle this walk opened (closed on the way, or returned).
    let opened: ConfinedDir | undefined;
    try {
      for (const segment of segments) {
        const from = opened ?? this;
        let next: ConfinedDir;
        try {
          next = await from.openChild(segment);
        } catch (error) {
          if (!options.create || !isConfinedWalkError(error) || error.reason !== 'missing') throw error;
          await mkdir(from.pathOf(segment), options.mode === undefined ? {} : { mode: options.mode }).catch((made: unknown) => {
            if (!isCode(made, 'EEXIST')) throw made;
          });
          next = await from.openChild(segment);
        }
        await opened?.close();
        opened = next;
      }
    } catch (error) {
      await opened?.close();
      throw error;
    }
    return opened ?? this.openChild('.');
  }

  /** The entries of this folder, sorted by name, each by what it is itself. */
  async entries(): Promise<ConfinedEntry[]> {
    const dirents: Dirent[] = await readdir(this.self, { withFileTypes: true });
    return dirents
      .map((entry) => ({ name: entry.name, kind: kindOf(entry) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** What `name` is, without following it; undefined when it does not exist. */
  async lstatChild(name: string): Promise<Stats | undefined> {
    return lstat(this.pathOf(name)).catch((error: unknown) => {
      if (isCode(error, 'ENOENT') || isCode(error, 'ENOTDIR')) return undefined;
      throw error;
    });
  }

  /**
   * Opens the regular file `name` for reading: a link, a FIFO or a folder there is refused. The caller
   * closes the handle; `stats` describe what was opened.
   */
  async openFile(name: string, flags: number = fileFlags): Promise<{ handle: FileHandle; stats: Stats }> {
    const relative = this.relativeOf(name);
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(name), flags | constants.O_NOFOLLOW);
    } catch (error) {
      throw await this.refusalFor(name, error);
    }
    try {
      const stats = await handle.stat();
      if (!stats.isFile()) throw new ConfinedWalkError('not-regular', relative);
      if (!procfsBases && !(await sameFile(path.join(this.lexical, name), stats))) throw new ConfinedWalkError('link', relative);
      return { handle, stats };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Reads the regular file `name`, at most `maxBytes` (undefined when it is larger). */
  async readFile(name: string, maxBytes: number): Promise<{ content: Buffer; stats: Stats } | { tooLarge: number }> {
    const { handle, stats } = await this.openFile(name);
    try {
      if (stats.size > maxBytes) return { tooLarge: stats.size };
      // One byte past the limit: the file may have grown since fstat.
      const buffer = Buffer.alloc(Math.min(stats.size, maxBytes) + 1);
      let filled = 0;
      while (filled < buffer.length) {
        const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      if (filled > maxBytes) return { tooLarge: filled };
      return { content: buffer.subarray(0, filled), stats };
    } finally {
      await handle.close();
    }
  }

  /** Flushes the folder's entries (a new name) to disk; a file system that refuses fsync on a folder is left as it is. */
  async sync(): Promise<void> {
    await this.handle.sync().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }

  private relativeOf(name: string): string {
    if (name === '.') return this.relativePath;
    return this.relativePath === '.' ? name : `${this.relativePath}/${name}`;
  }

  /** Turns a failed open into a refusal: a link (ELOOP, or ENOTDIR on a link) or a missing name. */
  private async refusalFor(name: string, error: unknown): Promise<unknown> {
    const relative = this.relativeOf(name);
    if (isCode(error, 'ELOOP')) return new ConfinedWalkError('link', relative);
    if (isCode(error, 'ENOENT')) return new ConfinedWalkError('missing', relative);
    if (isCode(error, 'ENXIO')) return new ConfinedWalkError('not-regular', relative);
    if (isCode(error, 'ENOTDIR') || isCode(error, 'EISDIR')) {
      const what = await this.lstatChild(name);
      if (what === undefined) return new ConfinedWalkError('missing', relative);
      // A folder now, but not at the open: it was swapped meanwhile (a link, then the folder again).
      if (what.isSymbolicLink() || (isCode(error, 'ENOTDIR') && what.isDirectory())) return new ConfinedWalkError('link', relative);
      return new ConfinedWalkError(isCode(error, 'EISDIR') ? 'not-regular' : 'not-directory', relative);
    }
    return error;
  }
}

/**
 * Runs `work` on the folder `relative` below `root`, reached without following a link at any step, and
 * closes every handle afterwards.
 */
export async function withConfinedDir<T>(root: string, relative: string, work: (folder: ConfinedDir) => Promise<T>, options: { create?: boolean; mode?: number } = {}): Promise<T> {
  const base = await ConfinedDir.openRoot(root);
  try {
    const folder = await base.openPath(relative, options);
    try {
      return await work(folder);
    } finally {
      await folder.close();
    }
  } finally {
    await base.close();
  }
}

/** The POSIX segments of a relative path; `..`, absolute paths and empty segments are refused. */
export function splitRelative(relative: string): string[] {
  if (relative === '' || relative === '.') return [];
  if (path.isAbsolute(relative)) throw new Error(`${relative}: expected a path relative to the walk's root`);
  const segments = relative.split(/[\\/]/).filter((segment) => segment !== '' && segment !== '.');
  for (const segment of segments) checkName(segment);
  return segments;
}

function checkName(name: string): void {
  if (name === '..' || name.includes('/') || name.includes('\0') || name === '') {
    throw new Error(`${JSON.stringify(name)}: expected one name inside the folder (no "..", no "/")`);
  }
}

function kindOf(entry: Dirent): ConfinedEntry['kind'] {
  if (entry.isSymbolicLink()) return 'link';
  if (entry.isDirectory()) return 'directory';
  if (entry.isFile()) return 'file';
  return 'other';
}

/** Without procfs: whether `lexical` still names the opened file and leads through no link. */
async function sameFile(lexical: string, opened: Stats): Promise<boolean> {
  try {
    if ((await realpath(lexical)) !== path.resolve(lexical)) return false;
    const now = await stat(lexical);
    return now.dev === opened.dev && now.ino === opened.ino;
  } catch {
    return false;
  }
}

function isCode(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}

/**
 * Where a walk to a confined path starts: the working root of tenant folders when the path is below it
 * (so no step inside a tenant's folder, the tenant's own folder included, is taken through a link), else
 * the working directory's real path. `relative` leads from there to `absolutePath`.
 */
export async function walkStart(absolutePath: string, realRoot: string, workingRoot?: string): Promise<{ root: string; relative: string }> {
  const base = workingRoot === undefined ? realRoot : await realpath(workingRoot).catch(() => realRoot);
  const root = isInside(base, realRoot) ? base : realRoot;
  return { root, relative: path.relative(root, absolutePath).split(path.sep).join('/') };
}

/** Device and inode of each existing folder (errand's own folders), to recognise them wherever a walk meets them. */
export async function folderIdentities(folders: readonly string[]): Promise<{ dev: number; ino: number }[]> {
  const found = await Promise.all(folders.map((folder) => stat(folder).then((info) => ({ dev: info.dev, ino: info.ino }), () => undefined)));
  return found.filter((identity) => identity !== undefined);
}

import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { isErrnoCode, type ConfinedPath } from './confine-path';
import { isConfinedWalkError, withConfinedDir, type ConfinedDir } from './confined-dir';

/**
 * Opening a confined path without the check-then-use gap. `confinePath` resolves symlinks and checks the
 * real path; between that check and the `open`, a command could swap a symlink in (for the last name, or
 * for a directory on the way). So the file is opened with `O_NOFOLLOW` (a symlink as the last name fails
 * with ELOOP instead of being followed) and `O_NONBLOCK` (a FIFO does not hang the call), the handle is
 * `fstat`ed, and the file it names is compared with what the confined path names now: the real path must
 * still be the confined one and device and inode must match. Only then is anything written. Reads go
 * further: they walk from the working directory without following any link (confined-dir.ts) and stop
 * at the limit however large the file has grown.
 */

/** Why an open was refused (the tool turns it into a message for the model). */
export type OpenRefusal = 'missing' | 'directory' | 'not-regular' | 'moved' | 'parent-not-folder';

/** What {@link readConfined} found. */
export type ReadOutcome =
  | { ok: true; content: Buffer; size: number }
  | { ok: false; reason: OpenRefusal }
  | { ok: false; reason: 'too-large'; size: number };

/**
 * Reads a confined regular file, at most `maxBytes`. The file is reached from the working directory's real
 * path one folder at a time, each opened relative to the one before and none through a link
 * (confined-dir.ts), so a folder on the way swapped for a link after the check is refused at its open.
 */
export async function readConfined(confined: ConfinedPath, maxBytes: number): Promise<ReadOutcome> {
  const inside = path.relative(confined.realRoot, confined.absolutePath).split(path.sep).join('/');
  const folder = path.posix.dirname(inside);
  const name = path.posix.basename(inside);
  if (inside === '') return { ok: false, reason: 'directory' };
  try {
    const read = await withConfinedDir(confined.realRoot, folder === '.' ? '' : folder, async (opened) => {
      const stats = await opened.lstatChild(name);
      if (stats?.isDirectory()) return 'directory' as const;
      return opened.readFile(name, maxBytes);
    });
    if (read === 'directory') return { ok: false, reason: 'directory' };
    if ('tooLarge' in read) return { ok: false, reason: 'too-large', size: read.tooLarge };
    return { ok: true, content: read.content, size: read.content.length };
  } catch (error) {
    if (!isConfinedWalkError(error)) throw error;
    if (error.reason === 'missing') return { ok: false, reason: 'missing' };
    if (error.reason === 'not-regular') return { ok: false, reason: 'not-regular' };
    return { ok: false, reason: 'moved' };
  }
}

/** What {@link writeConfined} did. */
export type WriteOutcome = { ok: true; created: boolean } | { ok: false; reason: OpenRefusal };

/**
 * Creates or replaces a confined file with `content`. The folder that holds it is reached from the working
 * directory's real path one handle at a time (confined-dir.ts), and missing folders are made on the way,
 * each relative to its parent's handle: a folder on the way swapped for a link after the check is refused
 * at its open and nothing is made through it (a `mkdir -p` on the checked path would follow the link and
 * make folders wherever it points). The file is opened relative to that last handle, without following a
 * link and without truncation, checked as above, and only then truncated and written, so a swapped-in
 * symlink never gets a byte written through it.
 */
export async function writeConfined(confined: ConfinedPath, content: string, signal?: AbortSignal): Promise<WriteOutcome> {
  const inside = path.relative(confined.realRoot, confined.absolutePath).split(path.sep).join('/');
  if (inside === '') return { ok: false, reason: 'directory' };
  const folder = path.posix.dirname(inside);
  const name = path.posix.basename(inside);
  try {
    return await withConfinedDir(confined.realRoot, folder === '.' ? '' : folder, (opened) => writeIn(opened, name, confined.absolutePath, content, signal), { create: true });
  } catch (error) {
    if (!isConfinedWalkError(error)) throw error;
    // A name on the way that is a file, not a folder: the path cannot be made.
    if (error.reason === 'not-directory') return { ok: false, reason: 'parent-not-folder' };
    return { ok: false, reason: 'moved' };
  }
}

/** Creates or replaces the file `name` of an opened confined folder (see {@link writeConfined}). */
async function writeIn(folder: ConfinedDir, name: string, confinedPath: string, content: string, signal: AbortSignal | undefined): Promise<WriteOutcome> {
  const flags = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  let handle: FileHandle;
  let created = true;
  try {
    handle = await open(folder.pathOf(name), flags | constants.O_CREAT | constants.O_EXCL, 0o644);
  } catch (error) {
    if (!isErrnoCode(error, 'EEXIST')) return refusalOf(error);
    created = false;
    try {
      handle = await open(folder.pathOf(name), flags);
    } catch (second) {
      return refusalOf(second);
    }
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { ok: false, reason: stats.isDirectory() ? 'directory' : 'not-regular' };
    if (!(await namesSameFile(confinedPath, stats))) {
      // A directory on the way was swapped for a symlink, so the create happened elsewhere: take back the
      // empty file this call made there (found through the handle, on Linux), then refuse.
      if (created) await removeCreated(handle, stats);
      return { ok: false, reason: 'moved' };
    }
    await handle.truncate(0);
    await handle.writeFile(content, { encoding: 'utf8', ...(signal ? { signal } : {}) });
    return { ok: true, created };
  } finally {
    await handle.close();
  }
}

/** Removes a file this call created, by the path its handle really has, if it is still that empty file. */
async function removeCreated(handle: FileHandle, opened: Stats): Promise<void> {
  try {
    const actual = await readlink(`/proc/self/fd/${handle.fd}`);
    const now = await lstat(actual);
    if (now.dev === opened.dev && now.ino === opened.ino && now.size === 0) await unlink(actual);
  } catch {
    // No procfs (not Linux), or it changed again: leave it; nothing was written to it.
  }
}

function refusalOf(error: unknown): { ok: false; reason: OpenRefusal } {
  if (isErrnoCode(error, 'ELOOP')) return { ok: false, reason: 'moved' };
  if (isErrnoCode(error, 'EISDIR')) return { ok: false, reason: 'directory' };
  // ENXIO: a FIFO without a reader (O_NONBLOCK); ENOENT/ENOTDIR: a directory on the way was swapped.
  if (isErrnoCode(error, 'ENXIO')) return { ok: false, reason: 'not-regular' };
  if (isErrnoCode(error, 'ENOENT') || isErrnoCode(error, 'ENOTDIR')) return { ok: false, reason: 'moved' };
  throw error;
}

/**
 * Whether the confined path still names the opened file: its real path is unchanged (no directory on the
 * way became a symlink) and it has the opened file's device and inode (it was not swapped and back).
 */
async function namesSameFile(confinedPath: string, opened: Stats): Promise<boolean> {
  try {
    if ((await realpath(confinedPath)) !== confinedPath) return false;
    const now = await stat(confinedPath);
    return now.dev === opened.dev && now.ino === opened.ino;
  } catch {
    return false;
  }
}

/** Sentence for a refusal, naming the path as the model gave it. */
export function describeRefusal(requested: string, reason: OpenRefusal): string {
  switch (reason) {
    case 'missing':
      return `file "${requested}" does not exist`;
    case 'directory':
      return `"${requested}" is a directory; give a file path (list_directory shows a directory's entries)`;
    case 'not-regular':
      return `"${requested}" is not a regular file`;
    case 'parent-not-folder':
      return `a name on the way to "${requested}" is a file, not a folder, so "${requested}" cannot be made`;
    case 'moved':
      return `"${requested}" changed while it was being opened (a symbolic link or a moved directory); it was not touched — check the path and try again`;
  }
}

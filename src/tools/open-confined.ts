import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, stat, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { isErrnoCode, type ConfinedPath } from './confine-path';
import { isConfinedWalkError, withConfinedDir } from './confined-dir';

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
export type OpenRefusal = 'missing' | 'directory' | 'not-regular' | 'moved';

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
 * Creates or replaces a confined file with `content`. Missing parent directories are made first (they
 * are below the confined real path). The file is opened without truncation, checked as above, and only
 * then truncated and written, so a swapped-in symlink never gets a byte written through it.
 */
export async function writeConfined(confined: ConfinedPath, content: string, signal?: AbortSignal): Promise<WriteOutcome> {
  await mkdir(path.dirname(confined.absolutePath), { recursive: true });
  const flags = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  let handle: FileHandle;
  let created = true;
  try {
    handle = await open(confined.absolutePath, flags | constants.O_CREAT | constants.O_EXCL, 0o644);
  } catch (error) {
    if (!isErrnoCode(error, 'EEXIST')) return refusalOf(error);
    created = false;
    try {
      handle = await open(confined.absolutePath, flags);
    } catch (second) {
      return refusalOf(second);
    }
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { ok: false, reason: stats.isDirectory() ? 'directory' : 'not-regular' };
    if (!(await namesSameFile(confined.absolutePath, stats))) {
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
    case 'moved':
      return `"${requested}" changed while it was being opened (a symbolic link or a moved directory); it was not touched — check the path and try again`;
  }
}

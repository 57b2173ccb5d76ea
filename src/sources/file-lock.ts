import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileLockPollMs, fileLockStaleMs, fileLockWaitMs } from '../contracts/limits/sources';

/**
 * Runs `work` while holding an advisory lock file (created exclusively, removed afterwards), so processes
 * that share a folder — workers on one volume — do not run it at the same time. A lock older than
 * {@link fileLockStaleMs} is taken to be left by a process that died, and is broken. Waiting is bounded:
 * after {@link fileLockWaitMs} the call fails with a message naming the lock.
 *
 * Each holder writes a token of its own into the lock. Breaking a stale lock and releasing one are done by
 * renaming the lock to a name of this call's own (atomic: of two racing breakers only one gets the file)
 * and then checking the token of what was moved: when it is not the lock that was judged stale (another
 * process broke it and took the lock in between) or not this holder's, it is put back with `link`, which
 * never replaces a lock someone made meanwhile. So a slow breaker never removes a fresh holder's lock.
 */
export async function withFileLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  await mkdir(dirname(lockPath), { recursive: true });
  const token = `${process.pid}-${randomBytes(8).toString('hex')}`;
  const deadline = Date.now() + fileLockWaitMs;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx');
      try {
        await handle.writeFile(`${token}\n`);
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if (!isCode(error, 'EEXIST')) throw error;
      const age = await stat(lockPath).then((info) => Date.now() - info.mtimeMs, () => 0);
      if (age > fileLockStaleMs) {
        const stale = await tokenOf(lockPath);
        if (stale !== undefined) await takeAway(lockPath, stale, token);
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another process holds ${lockPath} for more than ${Math.round(fileLockWaitMs / 1000)} s; remove the file if no errand process is syncing`);
      await new Promise((resolveWait) => setTimeout(resolveWait, fileLockPollMs));
    }
  }
  try {
    return await work();
  } finally {
    await takeAway(lockPath, token, token);
  }
}

/**
 * Removes the lock at `lockPath` if it holds `expected`: moves it aside under a name of `mover`'s, then
 * removes it when it is the expected one, or puts it back (unless a new lock exists by then) when not.
 */
async function takeAway(lockPath: string, expected: string, mover: string): Promise<void> {
  const aside = `${lockPath}.${mover}-${randomBytes(4).toString('hex')}`;
  try {
    await rename(lockPath, aside);
  } catch (error) {
    if (isCode(error, 'ENOENT')) return; // already gone
    throw error;
  }
  const moved = await tokenOf(aside);
  if (moved !== expected) await link(aside, lockPath).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

/** The token written in a lock file (undefined when it is gone). */
async function tokenOf(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').then((text) => text.trim(), () => undefined);
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}

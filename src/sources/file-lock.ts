import { mkdir, open, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileLockPollMs, fileLockStaleMs, fileLockWaitMs } from '../contracts/limits';

/**
 * Runs `work` while holding an advisory lock file (created exclusively, removed afterwards), so processes
 * that share a folder — workers on one volume — do not run it at the same time. A lock older than
 * {@link fileLockStaleMs} is taken to be left by a process that died, and is broken. Waiting is bounded:
 * after {@link fileLockWaitMs} the call fails with a message naming the lock.
 */
export async function withFileLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  await mkdir(dirname(lockPath), { recursive: true });
  const deadline = Date.now() + fileLockWaitMs;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx');
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      break;
    } catch (error) {
      if (!isExists(error)) throw error;
      const age = await stat(lockPath).then((info) => Date.now() - info.mtimeMs, () => 0);
      if (age > fileLockStaleMs) {
        await rm(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`another process holds ${lockPath} for more than ${Math.round(fileLockWaitMs / 1000)} s; remove the file if no errand process is syncing`);
      await new Promise((resolveWait) => setTimeout(resolveWait, fileLockPollMs));
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockPath, { force: true });
  }
}

function isExists(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === 'EEXIST';
}

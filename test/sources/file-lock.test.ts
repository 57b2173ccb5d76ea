import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileLockStaleMs } from '../../src/contracts/limits/sources';
import { withFileLock } from '../../src/sources/file-lock';

/**
 * The lock of git syncs: holders never overlap, also when several of them find the same stale lock at
 * once and race to break it (a breaker must never remove the lock a faster breaker has just taken).
 */

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function staleLock(): string {
  const folder = mkdtempSync(join(tmpdir(), 'errand-file-lock-'));
  folders.push(folder);
  const lock = join(folder, 'sync.lock');
  writeFileSync(lock, 'dead-holder\n');
  const old = (Date.now() - fileLockStaleMs - 60_000) / 1000;
  utimesSync(lock, old, old);
  return lock;
}

describe('withFileLock', () => {
  it('lets one holder at a time through when many break the same stale lock at once', async () => {
    for (let round = 0; round < 1; round += 1) {
      const lock = staleLock();
      let inside = 0;
      let most = 0;
      let done = 0;
      const holders = Array.from({ length: 16 }, () =>
        withFileLock(lock, async () => {
          inside += 1;
          most = Math.max(most, inside);
          await new Promise((resolveWait) => setTimeout(resolveWait, 100));
          inside -= 1;
          done += 1;
        }),
      );
      await Promise.all(holders);
      expect(done).toBe(16);
      expect(most).toBe(1);
      // Nothing is left behind: no lock, no moved-aside file.
      expect(readdirSync(join(lock, '..'))).toEqual([]);
    }
  }, 60_000);
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Set for the run and inherited by every test fork and the processes they start. */
const rootKey = 'ERRAND_TEST_TMP_ROOT';

/**
 * Gives the test run one temp folder of its own and points TMPDIR at it, so the many folders tests make with
 * `mkdtemp(tmpdir())` — data, homes, working directories, stores, git repositories — and those of the
 * processes they start end up inside it. Removed when the run ends well; after a failure it is kept for
 * inspection and its path printed. (Without it every run left about a hundred folders in the OS temp folder.)
 * Called from vitest.config.ts in the main process; forks see the variable set and leave it alone.
 */
export function useTestTempRoot(): void {
  if (process.env[rootKey]) return;
  const root = mkdtempSync(join(tmpdir(), 'errand-test-run-'));
  process.env[rootKey] = root;
  process.env.TMPDIR = root;
  process.once('exit', (code) => {
    if (code === 0) rmSync(root, { recursive: true, force: true });
    else process.stderr.write(`errand: the run's temp folder is kept for inspection: ${root}\n`);
  });
}

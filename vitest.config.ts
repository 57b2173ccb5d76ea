import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { useTestTempRoot } from './test/support/test-temp-root';
import { testFilesUsingTemporal } from './test/support/test-tiers';

/**
 * Two projects, decided by what each test file imports (test/support/test-tiers.ts):
 * - `temporal`: files that use the run's Temporal dev server (through test/support/temporal.ts). Its global
 *   setup starts the server and bundles the workflow code once per run.
 * - `unit`: every other file. No server, so `npx vitest run --project unit` (or one unit file) runs in
 *   seconds; its global setup only rebuilds the CLI bundle when a source is newer (a few seconds), for
 *   the unit tests that run `bin/errand.js`.
 * Both setups rebuild stale artifacts that process tests run (test/support/built-artifacts.ts).
 *
 * Files run in parallel forks. Vitest's default is one fork per core minus one — a single fork on a 2-core
 * machine, which ran the suite file after file. Most dev-server tests spend their time waiting (for
 * Temporal, timers, child processes), so more forks than cores keeps both cores busy; each test uses its own
 * task queue, data folder and ports, so files never share state.
 */
useTestTempRoot();
const temporalTests = testFilesUsingTemporal(__dirname);
const forks = Math.max(3, availableParallelism() + 1);

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: forks,
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: temporalTests, globalSetup: ['test/support/cli-bundle-setup.ts'] },
      },
      {
        extends: true,
        test: { name: 'temporal', include: temporalTests, globalSetup: ['test/support/global-setup.ts'] },
      },
    ],
  },
});

import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints one plain closing line, `errand: N passed, N failed[, N skipped]`, that CI reads, and where the
 * dev server's log is kept when something failed.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed += 1;
    }
    failed += unhandledErrors.length;
    if (failed > 0) process.stdout.write('\nThe Temporal dev server log of this run is in test-artifacts/temporal-dev-server.log\n');
    process.stdout.write(`\nerrand: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`);
  }
}

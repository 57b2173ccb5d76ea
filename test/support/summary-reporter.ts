import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { readSuiteBudget, suiteFileCount, suiteTimeLines } from './suite-time';

/**
 * Prints one plain closing line, `errand: N passed, N failed[, N skipped]`, that CI reads, and where the
 * dev server's log is kept when something failed. A file that failed outside its tests (its import, or a hook
 * such as beforeAll) counts as one failure and is named, its tests that never ran as skipped. Also keeps when
 * each test file ran and for how long in test-artifacts/test-durations.json and names the slowest files, so the suite's time can be profiled
 * from any run (what runs in parallel, what waits) without a special reporter. Ends with the run's wall
 * time, beside the suite's budget (test/suite-time.json) when the run was the whole suite, and a warning line
 * when it went over: a printed figure, never a failure.
 */
export default class SummaryReporter implements Reporter {
  private readonly runStarted = Date.now();
  private readonly started = new Map<string, number>();

  onTestModuleStart(module: TestModule): void {
    this.started.set(module.moduleId, Date.now());
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    /** Files that failed outside their tests (an import or a hook such as beforeAll): their tests did not run. */
    const failedOutside: string[] = [];
    for (const module of testModules) {
      let testFailed = false;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') {
          failed += 1;
          testFailed = true;
        } else skipped += 1;
      }
      if (module.state() === 'failed' && !testFailed) {
        failed += 1;
        failedOutside.push(module.relativeModuleId);
      }
    }
    failed += unhandledErrors.length;
    const wallSeconds = this.writeDurations(testModules);
    const root = resolve(__dirname, '..', '..');
    const timeLines = suiteTimeLines({ wallSeconds, filesRun: testModules.length, filesInSuite: suiteFileCount(root) }, readSuiteBudget(root));
    process.stdout.write(`\n${timeLines.join('\n')}\n`);
    if (failed > 0) process.stdout.write('\nThe Temporal dev server log of this run is in test-artifacts/temporal-dev-server.log\n');
    for (const file of failedOutside) process.stdout.write(`\n${file} failed outside its tests (its import or a hook); the error is above\n`);
    process.stdout.write(`\nerrand: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`);
  }

  /** Writes test-artifacts/test-durations.json, prints the slowest files and returns the run's wall time in seconds. */
  private writeDurations(testModules: ReadonlyArray<TestModule>): number {
    const root = resolve(__dirname, '..', '..');
    const files = testModules.map((module) => {
      const diagnostic = module.diagnostic();
      const startedAt = this.started.get(module.moduleId);
      return {
        file: module.relativeModuleId,
        project: module.project.name,
        // Seconds from the start of the run; the file's time in its fork = import + hooks and tests.
        startS: startedAt === undefined ? null : round((startedAt - this.runStarted) / 1000),
        importS: round(diagnostic.collectDuration / 1000),
        testsS: round(diagnostic.duration / 1000),
        tests: [...module.children.allTests()].length,
      };
    });
    const totalS = round((Date.now() - this.runStarted) / 1000);
    const directory = join(root, 'test-artifacts');
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, 'test-durations.json'), `${JSON.stringify({ totalS, files }, null, 2)}\n`);
    const slowest = [...files].sort((a, b) => b.importS + b.testsS - (a.importS + a.testsS)).slice(0, 8);
    process.stdout.write(`\nslowest test files (of ${files.length}; all in test-artifacts/test-durations.json):\n`);
    for (const file of slowest) process.stdout.write(`  ${(file.importS + file.testsS).toFixed(1).padStart(6)} s  ${file.file}\n`);
    return totalS;
  }
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

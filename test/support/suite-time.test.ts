import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readSuiteBudget, suiteFileCount, suiteTimeLines } from './suite-time';

/** The closing lines about a run's wall time (the reporter prints them; no run fails on them). */
describe('the suite time budget', () => {
  test("the project's budget file reads as a positive number of seconds", () => {
    const budget = readSuiteBudget(resolve(__dirname, '..', '..'));
    expect('seconds' in budget && budget.seconds > 0).toBe(true);
  });

  test('a whole run prints its figure beside the budget, and a warning line only when over it', () => {
    expect(suiteTimeLines({ wallSeconds: 512.34, filesRun: 10, filesInSuite: 10 }, { seconds: 900 })).toEqual(['suite wall time: 512.3 s (budget 900 s, test/suite-time.json)']);
    const over = suiteTimeLines({ wallSeconds: 950, filesRun: 10, filesInSuite: 10 }, { seconds: 900 });
    expect(over).toHaveLength(2);
    expect(over[1]).toBe('warning: the suite took 950.0 s, 50.0 s over its budget of 900 s (test/suite-time.json); the slowest files are listed above');
  });

  test('part of the suite prints its figure only, naming how much of the suite ran', () => {
    expect(suiteTimeLines({ wallSeconds: 12, filesRun: 3, filesInSuite: 10 }, { seconds: 1 })).toEqual([
      "wall time: 12.0 s for 3 of the suite's 10 test files (the budget in test/suite-time.json is for a whole run)",
    ]);
  });

  test('a missing or bad budget file is named with what it should hold', () => {
    const root = mkdtempSync(join(tmpdir(), 'errand-suite-time-'));
    expect(readSuiteBudget(root)).toEqual({ problem: 'test/suite-time.json is missing: it holds {"budgetSeconds": <seconds>}' });
    mkdirSync(join(root, 'test'));
    writeFileSync(join(root, 'test', 'suite-time.json'), '{"budgetSeconds": "ten minutes"}');
    const budget = readSuiteBudget(root);
    expect(budget).toEqual({ problem: 'test/suite-time.json: budgetSeconds must be a positive number of seconds, found "ten minutes"' });
    expect(suiteTimeLines({ wallSeconds: 5, filesRun: 1, filesInSuite: 1 }, budget)).toEqual(['suite wall time: 5.0 s', `warning: no suite time budget: ${'problem' in budget ? budget.problem : ''}`]);
  });

  test('the suite is every *.test.ts file under test/', () => {
    const root = mkdtempSync(join(tmpdir(), 'errand-suite-files-'));
    mkdirSync(join(root, 'test', 'domain'), { recursive: true });
    for (const file of ['domain/a.test.ts', 'domain/helper.ts', 'b.test.ts']) writeFileSync(join(root, 'test', file), '');
    expect(suiteFileCount(root)).toBe(2);
  });
});

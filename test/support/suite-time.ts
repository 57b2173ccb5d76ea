import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The suite's wall time against its budget (test/suite-time.json): the closing lines of a run print the
 * figure, and a warning when a whole run went over. Nothing fails on it: tests never assert timings.
 */

/** Where the budget is kept, relative to the project root. */
export const suiteTimeFile = 'test/suite-time.json';

/** The budget, or why it could not be read. */
export type SuiteBudget = { seconds: number } | { problem: string };

/** Reads the budget from `root`/test/suite-time.json (`budgetSeconds`, a positive number). */
export function readSuiteBudget(root: string): SuiteBudget {
  const path = join(root, suiteTimeFile);
  if (!existsSync(path)) return { problem: `${suiteTimeFile} is missing: it holds {"budgetSeconds": <seconds>}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return { problem: `${suiteTimeFile} is not JSON (${(error as Error).message})` };
  }
  const seconds = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>).budgetSeconds : undefined;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
    return { problem: `${suiteTimeFile}: budgetSeconds must be a positive number of seconds, found ${JSON.stringify(seconds)}` };
  }
  return { seconds };
}

/** The number of test files of the suite (every `*.test.ts` under `root`/test). */
export function suiteFileCount(root: string): number {
  const count = (directory: string): number =>
    readdirSync(directory, { withFileTypes: true }).reduce((sum, entry) => {
      if (entry.isDirectory()) return sum + count(join(directory, entry.name));
      return sum + (entry.name.endsWith('.test.ts') ? 1 : 0);
    }, 0);
  return count(join(root, 'test'));
}

/** What a run took: its wall time and how many of the suite's files it ran. */
export interface RunTime {
  wallSeconds: number;
  filesRun: number;
  filesInSuite: number;
}

/**
 * The closing lines about the run's wall time: for a whole run, the figure beside the budget and a warning
 * when over; for part of the suite, the figure only (the budget is for the whole suite).
 */
export function suiteTimeLines(run: RunTime, budget: SuiteBudget): string[] {
  const took = `${run.wallSeconds.toFixed(1)} s`;
  if (run.filesRun < run.filesInSuite) {
    return [`wall time: ${took} for ${run.filesRun} of the suite's ${run.filesInSuite} test files (the budget in ${suiteTimeFile} is for a whole run)`];
  }
  if ('problem' in budget) return [`suite wall time: ${took}`, `warning: no suite time budget: ${budget.problem}`];
  const lines = [`suite wall time: ${took} (budget ${budget.seconds} s, ${suiteTimeFile})`];
  if (run.wallSeconds > budget.seconds) {
    lines.push(`warning: the suite took ${took}, ${(run.wallSeconds - budget.seconds).toFixed(1)} s over its budget of ${budget.seconds} s (${suiteTimeFile}); the slowest files are listed above`);
  }
  return lines;
}

import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Finding test processes by a unique command line: a `sleep` whose duration has unique decimals is a
 * process no one else runs, and /proc shows whether it is still alive (a zombie has an empty command line).
 */

/** A `sleep` argument no other process uses: a day, with random decimals. */
export function uniqueSleepSeconds(): string {
  return `86400.${randomInt(100_000_000, 999_999_999)}`;
}

/** Host pids of live processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let commandLine: string;
    try {
      commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue;
    }
    if (commandLine.includes(marker)) found.push(Number(entry));
  }
  return found;
}

/** Kills the processes a test left behind (pids it found by its own marker). */
export function killProcessesWith(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}

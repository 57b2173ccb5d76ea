import { execFile } from 'node:child_process';
import { gitCommandTimeoutMs } from '../contracts/limits';

/**
 * git, run by the worker in a repository that models work in. A model can write that repository's
 * `.git/config` and `.git/hooks` (it is inside its working directory), and git runs commands named there:
 * hooks (`post-checkout` on `worktree add`), `core.fsmonitor` (on `status`), filter drivers (on checkout).
 * Run by the worker, outside any sandbox, those would be a way out of it. So every git command here gets
 * the allow-listed command environment (no credentials) and a configuration that turns all of them off:
 * no hooks, no fsmonitor, no automatic gc, and every filter driver the repository defines emptied.
 */
export class SafeGit {
  constructor(private readonly env: Record<string, string>) {}

  /** Runs `git <args>` in `cwd` with the safety overrides; resolves with stdout, rejects with git's message. */
  async run(cwd: string, args: string[]): Promise<string> {
    const drivers = await this.filterDrivers(cwd);
    const overrides = [
      '-c', 'core.hooksPath=/dev/null',
      '-c', 'core.fsmonitor=false',
      '-c', 'gc.auto=0',
      ...drivers.flatMap((driver) => ['-c', `filter.${driver}.smudge=`, '-c', `filter.${driver}.clean=`, '-c', `filter.${driver}.process=`, '-c', `filter.${driver}.required=false`]),
    ];
    return this.exec(cwd, [...overrides, ...args]);
  }

  /** Like {@link run}, but resolves with undefined instead of rejecting (a probe: does this ref exist?). */
  async probe(cwd: string, args: string[]): Promise<string | undefined> {
    try {
      return await this.run(cwd, args);
    } catch {
      return undefined;
    }
  }

  /** Names of the filter drivers the repository's configuration defines (reading configuration runs nothing). */
  private async filterDrivers(cwd: string): Promise<string[]> {
    let listing: string;
    try {
      listing = await this.exec(cwd, ['config', '--name-only', '--get-regexp', '^filter\\.']);
    } catch {
      return []; // exit 1: no such keys
    }
    const names = new Set<string>();
    for (const key of listing.split('\n')) {
      const match = /^filter\.(.+)\.[^.]+$/.exec(key.trim());
      if (match?.[1]) names.add(match[1]);
    }
    return [...names];
  }

  private exec(cwd: string, args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        'git',
        args,
        { cwd, timeout: gitCommandTimeoutMs, maxBuffer: 16 * 1024 * 1024, env: { ...this.env, GIT_TERMINAL_PROMPT: '0' } },
        (error, stdout, stderr) => {
          if (error) reject(new Error(stderr.trim() || error.message));
          else resolve(stdout);
        },
      );
    });
  }
}

import { execFile } from 'node:child_process';
import path from 'node:path';
import { gitCommandTimeoutMs } from '../contracts/limits/sources';
import { bwrapArguments, type BwrapSandbox } from '../tools/command-environment';

/**
 * git, run by the worker in a repository that models work in. A model can write that repository's
 * `.git/config` and `.git/hooks` (it is inside its working directory), and git runs commands named there:
 * hooks (`post-checkout` on `worktree add`), `core.fsmonitor` (on `status`), filter drivers (on checkout).
 * Run by the worker, outside any sandbox, those would be a way out of it. So every git command here gets
 * the allow-listed command environment (no credentials) and a configuration that turns all of them off:
 * no hooks, no fsmonitor, no automatic gc, and every filter driver the repository defines emptied.
 *
 * git is also confined to a folder (a {@link GitScope}): with the bubblewrap sandbox configured, it runs in
 * it with that folder the only one of the host it sees; without, it runs only in a repository proven to
 * live inside the folder (git-confinement.ts), with GIT_DIR and GIT_WORK_TREE pinned to it and
 * GIT_CEILING_DIRECTORIES above the folder, so it cannot discover or follow its way to another repository.
 */
export class SafeGit {
  constructor(
    private readonly env: Record<string, string>,
    private readonly sandbox?: BwrapSandbox,
  ) {}

  /** Whether git runs in the sandbox (then a repository need not be proven first). */
  get sandboxed(): boolean {
    return this.sandbox !== undefined;
  }

  /** Runs `git <args>` in `cwd` with the safety overrides; resolves with stdout, rejects with git's message. */
  async run(cwd: string, args: string[], scope?: GitScope): Promise<string> {
    const drivers = await this.filterDrivers(cwd, scope);
    const overrides = [
      '-c', 'core.hooksPath=/dev/null',
      '-c', 'core.fsmonitor=false',
      '-c', 'gc.auto=0',
      ...drivers.flatMap((driver) => ['-c', `filter.${driver}.smudge=`, '-c', `filter.${driver}.clean=`, '-c', `filter.${driver}.process=`, '-c', `filter.${driver}.required=false`]),
    ];
    return this.exec(cwd, [...overrides, ...args], scope);
  }

  /** Like {@link run}, but resolves with undefined instead of rejecting (a probe: does this ref exist?). */
  async probe(cwd: string, args: string[], scope?: GitScope): Promise<string | undefined> {
    try {
      return await this.run(cwd, args, scope);
    } catch {
      return undefined;
    }
  }

  /** Names of the filter drivers the repository's configuration defines (reading configuration runs nothing). */
  private async filterDrivers(cwd: string, scope: GitScope | undefined): Promise<string[]> {
    let listing: string;
    try {
      listing = await this.exec(cwd, ['config', '--name-only', '--get-regexp', '^filter\\.'], scope);
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

  private exec(cwd: string, args: string[], scope: GitScope | undefined): Promise<string> {
    const env: Record<string, string> = { ...this.env, GIT_TERMINAL_PROMPT: '0' };
    if (scope !== undefined) {
      env.GIT_CEILING_DIRECTORIES = path.dirname(scope.folder);
      if (scope.gitDir !== undefined) env.GIT_DIR = scope.gitDir;
      if (scope.workTree !== undefined) env.GIT_WORK_TREE = scope.workTree;
    }
    const sandboxed = this.sandbox !== undefined && scope !== undefined;
    const file = sandboxed ? 'bwrap' : 'git';
    const argv = sandboxed && this.sandbox ? [...bwrapArguments(this.sandbox, scope.folder, cwd, env), '--', 'git', ...args] : args;
    return new Promise((resolve, reject) => {
      execFile(
        file,
        argv,
        { cwd, timeout: gitCommandTimeoutMs, maxBuffer: 16 * 1024 * 1024, env },
        (error, stdout, stderr) => {
          if (error) reject(new Error(stderr.trim() || error.message));
          else resolve(stdout);
        },
      );
    });
  }
}

/** The folder git is confined to for one call, and the repository pinned when it was proven. */
export interface GitScope {
  /** The only folder git may touch: the sandbox shows only it; GIT_CEILING_DIRECTORIES is set above it. */
  folder: string;
  /** GIT_DIR: the proven git directory (without the sandbox). */
  gitDir?: string;
  /** GIT_WORK_TREE: the proven work tree (without the sandbox). */
  workTree?: string;
}

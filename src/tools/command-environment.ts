import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ProcessContainment } from './process-containment';
import { commandBaseEnvironment, sandboxCheckTimeoutMs, sandboxSystemPaths } from '../contracts/limits/tools';

/**
 * How a model-run command (`run_command`) is started: which environment it gets and, with the bubblewrap
 * sandbox, what it can see. The worker's own environment holds the Temporal credential, every LLM key and
 * the cloud credentials, so a command gets an allow-list only: PATH, HOME, LANG, TMPDIR and what the
 * operator names (`ERRAND_COMMAND_ENV`, checked in config.ts to hold no credential).
 */

/** The sandbox of model-run commands, when one is configured. */
export interface BwrapSandbox {
  kind: 'bwrap';
  /** Share the worker's network (default: a network namespace of its own, with nothing in it). */
  network: boolean;
  /** Extra absolute paths the command sees read-only. */
  readOnlyPaths: readonly string[];
}

/** Options of the command runner. */
export interface CommandOptions {
  /** Names passed from the worker's environment besides {@link commandBaseEnvironment}. */
  envNames?: readonly string[];
  /** The worker's environment the allowed values are read from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  sandbox?: BwrapSandbox;
  /**
   * Without the sandbox: how a command is made to end as a whole (its own PID namespace where the system
   * allows it; see process-containment.ts). Absent: its process group only.
   */
  containment?: ProcessContainment;
  /** URL prefixes agent files' `http` hooks may POST to (`ERRAND_HOOK_URLS`); absent or empty: none. */
  hookUrls?: readonly string[];
}

/** The environment of a command: the allow-listed variables that are set in the worker's environment. */
export function commandEnvironment(options: CommandOptions = {}): Record<string, string> {
  const source = options.env ?? process.env;
  const result: Record<string, string> = {};
  for (const name of [...commandBaseEnvironment, ...(options.envNames ?? [])]) {
    const value = source[name];
    if (value !== undefined) result[name] = value;
  }
  return result;
}

/** What a program and its arguments are: `file` is run with `args`. */
export interface Invocation {
  file: string;
  args: string[];
}

/**
 * The bwrap arguments that run `/bin/sh -c command` in `workingDir`:
 * - every namespace unshared (`--unshare-all`): no network (unless allowed), its own PIDs (it cannot see or
 *   signal the worker, and `/proc` shows only its own processes), IPC, UTS and user;
 * - the system folders read-only, `/tmp` and the home folder private and empty, nothing else of the host's
 *   file system (not the working root with other tenants' folders, not errand's data, not the worker's
 *   home with its configuration) — except the extra read-only paths the operator lists;
 * - the working directory the only writable place;
 * - `--die-with-parent` and `--new-session`: it ends when the worker's process for it ends, and cannot
 *   push input into the worker's terminal.
 */
export function bwrapInvocation(sandbox: BwrapSandbox, workingDir: string, command: string, env: Record<string, string>): Invocation {
  return bwrapProgramInvocation(sandbox, workingDir, '/bin/sh', ['-c', command], env);
}

/** The bwrap arguments that run `file args` in `workingDir` in the sandbox {@link bwrapInvocation} describes (a recipe's stdio server). */
export function bwrapProgramInvocation(sandbox: BwrapSandbox, workingDir: string, file: string, programArgs: readonly string[], env: Record<string, string>): Invocation {
  return { file: 'bwrap', args: [...bwrapArguments(sandbox, workingDir, workingDir, env), '--', file, ...programArgs] };
}

/**
 * The bwrap options of {@link bwrapInvocation} without the program: `writable` is the one folder of the
 * host the sandbox sees (read-write), `chdir` where the program starts. The worker's git for worktrees
 * runs with the tenant's folder as `writable` (safe-git.ts).
 */
export function bwrapArguments(sandbox: BwrapSandbox, writable: string, chdir: string, env: Record<string, string>): string[] {
  const args = ['--unshare-all', ...(sandbox.network ? ['--share-net'] : []), '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  args.push(...systemMounts());
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--setenv', 'TMPDIR', '/tmp');
  const home = env.HOME;
  if (home !== undefined && path.isAbsolute(home) && path.resolve(home) !== '/') args.push('--tmpfs', path.resolve(home));
  for (const extra of sandbox.readOnlyPaths) args.push('--ro-bind', extra, extra);
  args.push('--bind', writable, writable, '--chdir', chdir);
  return args;
}

let cachedSystemMounts: string[] | undefined;

/**
 * Read-only binds of the system folders that exist; a folder that is a symlink (`/bin` → `usr/bin` on a
 * merged-/usr system) is recreated as the same symlink. Computed once: the system does not change.
 */
function systemMounts(): string[] {
  if (cachedSystemMounts) return cachedSystemMounts;
  const mounts: string[] = [];
  for (const folder of sandboxSystemPaths) {
    let stats;
    try {
      stats = lstatSync(folder);
    } catch {
      continue;
    }
    if (stats.isSymbolicLink()) mounts.push('--symlink', readlinkSync(folder), folder);
    else if (stats.isDirectory()) mounts.push('--ro-bind', folder, folder);
  }
  cachedSystemMounts = mounts;
  return mounts;
}

/** Thrown at worker start when the configured sandbox cannot run here; the message says why and what to do. */
export class SandboxUnavailableError extends Error {
  readonly errandError = 'SandboxUnavailableError';
  constructor(message: string) {
    super(message);
    this.name = 'SandboxUnavailableError';
  }
}

/**
 * Checks at worker start that bwrap is installed and can build the sandbox commands will run in (some
 * container platforms forbid the user namespaces it needs): runs `true` in a sandbox over a scratch
 * folder, exactly as a command would run. Throws a {@link SandboxUnavailableError} naming `ERRAND_SANDBOX`.
 */
export async function checkSandbox(sandbox: BwrapSandbox, options: Pick<CommandOptions, 'env'> = {}): Promise<void> {
  const missing = sandbox.readOnlyPaths.filter((extra) => !existsSync(extra));
  if (missing.length > 0) {
    throw new SandboxUnavailableError(`ERRAND_SANDBOX_READ_ONLY_PATHS names ${missing.join(', ')}, which ${missing.length === 1 ? 'does' : 'do'} not exist on this worker; give folders that exist, or remove them`);
  }
  const scratch = mkdtempSync(path.join(tmpdir(), 'errand-sandbox-check-'));
  try {
    const env = commandEnvironment({ ...(options.env ? { env: options.env } : {}) });
    const invocation = bwrapInvocation(sandbox, scratch, 'exit 0', env);
    const outcome = await new Promise<{ code: number | null; stderr: string; error?: NodeJS.ErrnoException }>((resolveRun) => {
      const child = spawn(invocation.file, invocation.args, { cwd: scratch, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), sandboxCheckTimeoutMs);
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-2_000);
      });
      child.on('error', (error) => {
        clearTimeout(timer);
        resolveRun({ code: null, stderr, error });
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolveRun({ code, stderr });
      });
    });
    if (outcome.error?.code === 'ENOENT') {
      throw new SandboxUnavailableError(
        'ERRAND_SANDBOX=bwrap, but the bwrap program is not on the PATH: install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap) or unset ERRAND_SANDBOX',
      );
    }
    if (outcome.error || outcome.code !== 0) {
      const why = outcome.error ? outcome.error.message : outcome.stderr.trim() || `it exited with code ${outcome.code ?? 'none (killed)'}`;
      throw new SandboxUnavailableError(
        `ERRAND_SANDBOX=bwrap, but bwrap cannot create its sandbox here: ${why}. ` +
          'It needs user namespaces, which some container platforms forbid (see docs/security.md); run the worker where they are allowed, ' +
          'or unset ERRAND_SANDBOX and put run_command under an "ask" policy',
      );
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

import { lstat, mkdir, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { tenantWorkingDirMode } from '../contracts/limits/tools';

/** A path that passed confinement. */
export interface ConfinedPath {
  ok: true;
  /** Absolute path with every existing symlink resolved: use this for the actual I/O. */
  absolutePath: string;
  /** The path relative to the working directory, for messages to the model (`.` for the root). */
  displayPath: string;
  /** The working directory's real path (symlinks resolved). */
  realRoot: string;
  /** Real paths of the folders no tool may touch (see {@link PathRules.denied}), for tools that walk trees. */
  denied: string[];
}

/** A path that was refused, with a message for the model. */
export interface RefusedPath {
  ok: false;
  message: string;
}

/**
 * Where tools may go besides "inside the working directory": the worker's settings.
 *
 * - `workingRoot`: the configured working root. A working directory below it belongs to the folder
 *   `<workingRoot>/<first segment>` (a tenant's folder, `<root>/<tenant>`): it is created when missing
 *   (the API only joins names; the worker makes the folders), and a working directory whose real path
 *   leaves that folder (a symlink swapped in by a command) is refused, so one tenant's delegation can never
 *   work in another's folder.
 * - `denied`: folders no tool may read, write or list wherever they are (errand's data folder and git
 *   cache: stored conversations, stored answers a retry would replay, the dev server's database).
 */
export interface PathRules {
  workingRoot?: string;
  denied?: readonly string[];
}

/** Most symlink hops followed while resolving a path that does not exist yet (same bound as Linux's ELOOP). */
const maxSymlinkHops = 40;

/**
 * Confines `requested` (relative to `workingDir`, or absolute) to the working directory.
 *
 * Refused: `..` escapes, absolute paths outside, paths whose symlinks resolve outside, and anything inside a
 * denied folder. The check is done on the *real* path, so a symlink inside the working directory that
 * points outside is refused whether it names a file or a directory on the way. For a path that does not
 * exist yet (write_file), the deepest existing ancestor is resolved instead and the missing rest appended —
 * the missing part cannot contain symlinks. A dangling symlink is followed by hand, since realpath fails on
 * it but a write would go through it. Refusals are values, not exceptions: the tool returns them to the
 * model. Messages name the path the model gave and never a server path outside the working directory.
 *
 * This is a check before use: a tool that opens the path must still open it without following a last
 * symlink and compare what it opened with the confined path (see `open-confined.ts`), or a symlink swapped
 * in between the check and the open would win.
 */
export async function confinePath(workingDir: string, requested: string, rules: PathRules = {}): Promise<ConfinedPath | RefusedPath> {
  const root = await confineWorkingDir(workingDir, rules);
  if (!root.ok) return root;
  const { lexicalRoot, realRoot, denied } = root;
  const wanted = path.resolve(lexicalRoot, requested.length === 0 ? '.' : requested);
  // An absolute path may be written through the root's real path or its lexical one (e.g. /tmp vs /private/tmp).
  if (!isInside(lexicalRoot, wanted) && !isInside(realRoot, wanted)) {
    return { ok: false, message: outsideMessage(requested) };
  }
  const resolved = await resolveReal(wanted);
  if (resolved === undefined) {
    return { ok: false, message: `path "${requested}" has too many levels of symbolic links` };
  }
  if (!isInside(realRoot, resolved)) {
    return { ok: false, message: `${outsideMessage(requested)} (it resolves through a symbolic link to a place outside it)` };
  }
  if (denied.some((folder) => isInside(folder, resolved))) return { ok: false, message: deniedMessage(requested) };
  const relative = path.relative(realRoot, resolved);
  return { ok: true, absolutePath: resolved, displayPath: relative === '' ? '.' : relative, realRoot, denied };
}

/** The message for a path inside a denied folder. */
export function deniedMessage(requested: string): string {
  return `path "${requested}" is errand's own data, which tools may not read, write or list`;
}

function outsideMessage(requested: string): string {
  return `path "${requested}" is outside the working directory; use a path inside it (relative to it, or absolute under it)`;
}

/** The working directory checked against the rules, created when it is (or is inside) a missing tenant folder. */
async function confineWorkingDir(
  workingDir: string,
  rules: PathRules,
): Promise<{ ok: true; lexicalRoot: string; realRoot: string; denied: string[] } | RefusedPath> {
  const lexicalRoot = path.resolve(workingDir);
  const denied = await Promise.all((rules.denied ?? []).map((folder) => realOrLexical(folder)));
  let tenantFolder: string | undefined;
  if (rules.workingRoot !== undefined) {
    const workingRoot = path.resolve(rules.workingRoot);
    const relative = path.relative(workingRoot, lexicalRoot);
    if (relative !== '' && isInside(workingRoot, lexicalRoot)) {
      const [first = ''] = relative.split(path.sep);
      tenantFolder = path.join(workingRoot, first);
      const created = await ensureWorkingDir(tenantFolder, lexicalRoot);
      if (!created.ok) return created;
    }
  }
  let realRoot: string;
  try {
    realRoot = await realpath(lexicalRoot);
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT') || isErrnoCode(error, 'ENOTDIR')) {
      return { ok: false, message: 'the working directory of this delegation does not exist (any more); finish with what you have' };
    }
    throw error;
  }
  if (tenantFolder !== undefined && !isInside(await realpath(tenantFolder), realRoot)) {
    return { ok: false, message: 'the working directory of this delegation leads out of its folder through a symbolic link; no tool may use it' };
  }
  if (denied.some((folder) => isInside(folder, realRoot))) {
    return { ok: false, message: "the working directory of this delegation is inside errand's own data, which tools may not touch" };
  }
  return { ok: true, lexicalRoot, realRoot, denied };
}

/**
 * Makes a tenant folder (`<root>/<tenant>`) when it is missing, then the working directory below it when
 * that is missing too — but only when the deepest part that exists is really inside the tenant folder, so a
 * symlink cannot make the worker create folders elsewhere.
 */
async function ensureWorkingDir(tenantFolder: string, workingDir: string): Promise<{ ok: true } | RefusedPath> {
  if (!(await exists(tenantFolder))) {
    await mkdir(path.dirname(tenantFolder), { recursive: true });
    await mkdir(tenantFolder, { mode: tenantWorkingDirMode }).catch((error: unknown) => {
      if (!isErrnoCode(error, 'EEXIST')) throw error; // made by a parallel tool call
    });
  }
  if (workingDir === tenantFolder || (await exists(workingDir))) return { ok: true };
  const { existing } = await deepestExisting(workingDir);
  if (!isInside(await realpath(tenantFolder), await realpath(existing))) {
    return { ok: false, message: 'the working directory of this delegation leads out of its folder through a symbolic link; no tool may use it' };
  }
  await mkdir(workingDir, { recursive: true, mode: tenantWorkingDirMode });
  return { ok: true };
}

async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch (error) {
    if (isErrnoCode(error, 'ENOENT')) return false;
    throw error;
  }
}

/** The real path of a folder, or its absolute path while it does not exist. */
async function realOrLexical(folder: string): Promise<string> {
  const absolute = path.resolve(folder);
  return (await resolveReal(absolute)) ?? absolute;
}

/** Whether `candidate` is `root` or below it. Both absolute and normalised. */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
}

/** The real path of `absolute`, resolving symlinks of its existing part; undefined on a symlink loop. */
async function resolveReal(absolute: string): Promise<string | undefined> {
  let current = absolute;
  for (let hop = 0; hop <= maxSymlinkHops; hop += 1) {
    const { existing, rest } = await deepestExisting(current);
    const stats = await lstat(existing);
    if (stats.isSymbolicLink()) {
      // Only reached for a dangling link (realpath below would have resolved a live one): follow it by hand.
      try {
        return path.join(await realpath(existing), ...rest);
      } catch {
        const target = await readlink(existing);
        current = path.resolve(path.dirname(existing), target, ...rest);
        continue;
      }
    }
    return path.join(await realpath(existing), ...rest);
  }
  return undefined;
}

/** Splits an absolute path into its deepest existing ancestor (by lstat) and the missing segments after it. */
async function deepestExisting(absolute: string): Promise<{ existing: string; rest: string[] }> {
  const rest: string[] = [];
  let current = absolute;
  // Bounded by the number of segments: each step moves to the parent, and the filesystem root exists.
  for (;;) {
    try {
      await lstat(current);
      return { existing: current, rest };
    } catch (error) {
      if (!isErrnoCode(error, 'ENOENT') && !isErrnoCode(error, 'ENOTDIR')) throw error;
      const parent = path.dirname(current);
      if (parent === current) return { existing: current, rest };
      rest.unshift(path.basename(current));
      current = parent;
    }
  }
}

/** Whether `error` is a Node system error with the given code. */
export function isErrnoCode(error: unknown, code: string): boolean {
  return error instanceof Error && 'code' in error && error.code === code;
}

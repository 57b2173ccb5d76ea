import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';

/** A path that passed confinement. */
export interface ConfinedPath {
  ok: true;
  /** Absolute path with every existing symlink resolved: use this for the actual I/O. */
  absolutePath: string;
  /** The path relative to the working directory, for messages to the model (`.` for the root). */
  displayPath: string;
  /** The working directory's real path (symlinks resolved). */
  realRoot: string;
}

/** A path that was refused, with a message for the model. */
export interface RefusedPath {
  ok: false;
  message: string;
}

/** Most symlink hops followed while resolving a path that does not exist yet (same bound as Linux's ELOOP). */
const maxSymlinkHops = 40;

/**
 * Confines `requested` (relative to `workingDir`, or absolute) to the working directory.
 *
 * Refused: `..` escapes, absolute paths outside, and paths whose symlinks resolve outside. The check is
 * done on the *real* path, so a symlink inside the working directory that points outside is refused
 * whether it names a file or a directory on the way. For a path that does not exist yet (write_file),
 * the deepest existing ancestor is resolved instead and the missing rest appended — the missing part
 * cannot contain symlinks. A dangling symlink is followed by hand, since realpath fails on it but a write
 * would go through it. Refusals are values, not exceptions: the tool returns them to the model.
 */
export async function confinePath(workingDir: string, requested: string): Promise<ConfinedPath | RefusedPath> {
  const lexicalRoot = path.resolve(workingDir);
  const realRoot = await realpath(lexicalRoot);
  const wanted = path.resolve(lexicalRoot, requested.length === 0 ? '.' : requested);
  // An absolute path may be written through the root's real path or its lexical one (e.g. /tmp vs /private/tmp).
  if (!isInside(lexicalRoot, wanted) && !isInside(realRoot, wanted)) {
    return { ok: false, message: outsideMessage(requested, workingDir) };
  }
  const resolved = await resolveReal(wanted);
  if (resolved === undefined) {
    return { ok: false, message: `path "${requested}" has too many levels of symbolic links` };
  }
  if (!isInside(realRoot, resolved)) {
    return {
      ok: false,
      message: `${outsideMessage(requested, workingDir)} (it resolves through a symbolic link to ${resolved})`,
    };
  }
  const relative = path.relative(realRoot, resolved);
  return { ok: true, absolutePath: resolved, displayPath: relative === '' ? '.' : relative, realRoot };
}

function outsideMessage(requested: string, workingDir: string): string {
  return `path "${requested}" is outside the working directory ${workingDir}; use a path inside it (relative to it, or absolute under it)`;
}

/** Whether `candidate` is `root` or below it. Both absolute and normalised. */
function isInside(root: string, candidate: string): boolean {
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

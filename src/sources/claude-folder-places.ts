import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { DirectoryStore, messageOf } from './directory-store';
import type { SourceStore } from './source-store';

/*
 * What the places of Claude Code's folders (`.claude/skills`, `.claude/workflows`) share, whatever they hold:
 * the three places in their order, reading one file of an operator's store, where a project's folder is
 * reached from, and a folder's path inside the folder it is confined to.
 */

/**
 * A file of an operator's store, or undefined when it is not there. A file the store refuses (too large) is an
 * error; otherwise these stores say "missing" and "unreachable" alike, and a file not found here is looked for
 * in the next place.
 */
export async function readFromStore(store: SourceStore, path: string): Promise<string | undefined> {
  try {
    return (await store.read(path)).content;
  } catch (error) {
    if (messageOf(error).includes(': refused: ')) throw error;
    return undefined;
  }
}

/** The working directory, and the folder its project folder is reached from: the working root when it is under it. */
export function projectReach(workingDirectory: string, workingRoot?: string): { work: string; from: string } {
  const work = resolve(workingDirectory);
  const root = workingRoot === undefined ? undefined : resolve(workingRoot);
  const inside = root !== undefined && (work === root || work.startsWith(`${root}${sep}`));
  return { work, from: inside ? root : work };
}

/**
 * The path of `folder` inside `confinedWithin`, `/`-separated ('' for the folder itself), for a confined walk
 * from there. Throws when the folder is not inside it (`what` names the folder in the error).
 */
export function confinedPath(folder: string, confinedWithin: string, label: string, what: string): string {
  const path = relative(resolve(confinedWithin), resolve(folder));
  if (path.startsWith('..') || isAbsolute(path)) throw new Error(`${label}: ${what} is not inside the folder it is confined to`);
  return path.split(sep).join('/');
}

/** How one kind of Claude Code folder makes its places. */
export interface ClaudeFolderKind<Place> {
  /** The folder inside a project, a store or a home directory (`.claude/skills`). */
  folder: string;
  /** A place over a local folder, reached from `confinedWithin` without following links. */
  inFolder(folder: string, label: string, confinedWithin: string): Place;
  /** A place over a store that is not a local folder (git, S3). */
  inStore(store: SourceStore): Place;
}

/** The three places of one kind, in the order of SEMANTICS §1: an operator's store, the project, the worker user's home. */
export interface ClaudeFolderPlaces<Place> {
  /** An operator's store: its folder's `<folder>` (confined to the store), or the store itself. */
  operator(store: SourceStore): Place;
  /** The working directory's `<folder>`, reached from the working root when the directory is under it. */
  project(workingDirectory: string, workingRoot?: string): Place;
  /** The worker user's `~/<folder>`. */
  user(homeDirectory?: string): Place;
}

/** The place factories of one kind of folder. */
export function claudeFolderPlaces<Place>(kind: ClaudeFolderKind<Place>): ClaudeFolderPlaces<Place> {
  return {
    operator: (store) => (store instanceof DirectoryStore ? kind.inFolder(join(store.root, kind.folder), `${store.describe()} ${kind.folder}`, store.root) : kind.inStore(store)),
    project: (workingDirectory, workingRoot) => {
      const { work, from } = projectReach(workingDirectory, workingRoot);
      return kind.inFolder(join(work, kind.folder), `project ${kind.folder}`, from);
    },
    user: (homeDirectory = homedir()) => {
      const folder = join(homeDirectory, kind.folder);
      return kind.inFolder(folder, `user ~/${kind.folder}`, folder);
    },
  };
}

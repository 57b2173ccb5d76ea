import { resolve, sep } from 'node:path';
import { messageOf } from './directory-store';
import type { SourceStore } from './source-store';

/*
 * What the places of Claude Code's folders (`.claude/skills`, `.claude/workflows`) share, whatever they hold:
 * reading one file of an operator's store, and where a project's folder is reached from.
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

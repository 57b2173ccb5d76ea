import { stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * The top folder of the git work tree that holds `folder` (the first ancestor with a `.git` entry: a
 * folder in a clone, a file in a worktree or submodule), or undefined when there is none. Read from the
 * file system only, so planning can refuse `isolation: worktree` early without running git.
 */
export async function findGitWorkTree(folder: string): Promise<string | undefined> {
  let current = folder;
  for (;;) {
    try {
      await stat(join(current, '.git'));
      return current;
    } catch {
      // No .git here: look one folder up.
    }
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

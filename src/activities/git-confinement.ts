import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { defaultWorktreeFolderName, maxGitDirEntriesChecked, maxGitMetadataFileBytes } from '../contracts/limits/sources';
import { isInside } from '../tools/confine-path';
import { isConfinedWalkError, refusalText, walkStart, withConfinedDir, type ConfinedDir } from '../tools/confined-dir';

/**
 * Proving that a repository a model could write lives inside the folder git may touch, before the worker
 * runs git there outside any sandbox (`isolation: worktree`, decision 0020). git follows whatever the
 * repository says: a `.git` that is a link or a `gitdir:` file, a `commondir` file, `objects/info/alternates`,
 * configuration includes, and links anywhere in the git directory (refs, objects, packed-refs, config). Any
 * of them could lead git to read or write another tenant's repository. So every one is checked here, each
 * file reached from the working root without following a link, and the repository is refused unless all
 * of it stays inside the folder. git then runs with GIT_DIR and GIT_WORK_TREE pinned to what was proven
 * (see safe-git.ts), so it never discovers a repository of its own choosing.
 */

/** A repository proven to live inside `folder`. */
export interface ProvenRepository {
  /** The folder git is confined to (the tenant's folder, or the repository's top folder without tenants). */
  folder: string;
  /** Top folder of the work tree. */
  top: string;
  /** The git directory of this work tree (`<top>/.git`, or a worktree's folder under the common one). */
  gitDir: string;
  /** The repository's common git directory (refs, objects, configuration). */
  commonDir: string;
}

/** A repository git may not be run in; the message names paths relative to the folder, never a server path. */
export class RepositoryRefusedError extends Error {
  readonly errandError = 'RepositoryRefused';
  constructor(message: string) {
    super(message);
    this.name = 'RepositoryRefusedError';
  }
}

/**
 * The tenant's folder that `workingDir` (a real path) belongs to: `<working root>/<tenant>`, the working
 * root itself when it is the working directory, or undefined outside the working root.
 */
export async function tenantFolderOf(workingDir: string, workingRoot: string | undefined): Promise<string | undefined> {
  if (workingRoot === undefined) return undefined;
  const root = await realpath(workingRoot).catch(() => path.resolve(workingRoot));
  if (!isInside(root, workingDir) || workingDir === root) return undefined;
  const [tenant = ''] = path.relative(root, workingDir).split(path.sep);
  return path.join(root, tenant);
}

/**
 * The top folder of the work tree holding `workingDir` (the first folder up with a `.git` entry), looked
 * up no higher than `folder` and without following links; undefined when there is none.
 */
export async function findWorkTreeTop(workingDir: string, folder: string | undefined, workingRoot?: string): Promise<string | undefined> {
  let current = workingDir;
  for (;;) {
    const entry = await gitEntryIn(current, folder, workingRoot);
    if (entry !== undefined) return current;
    if (folder !== undefined && current === folder) return undefined;
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** Proves the repository of `workingDir` lives inside `folder` (see the module comment); throws a RepositoryRefusedError. */
export async function proveRepository(workingDir: string, tenantFolder: string | undefined, workingRoot?: string, commonFolder?: (top: string) => string): Promise<ProvenRepository> {
  const top = await findWorkTreeTop(workingDir, tenantFolder, workingRoot);
  if (top === undefined) {
    throw new RepositoryRefusedError(
      tenantFolder === undefined
        ? 'isolation "worktree" needs a git repository, and the working directory is not inside one'
        : "isolation \"worktree\" needs a git repository inside the tenant's folder, and the working directory is not inside one",
    );
  }
  const folder = tenantFolder ?? commonFolder?.(top) ?? top;
  const shown = (absolute: string) => path.relative(folder, absolute) || '.';
  const read = (file: string) => readConfinedText(folder, workingRoot, file, shown);
  const entry = await gitEntryIn(top, tenantFolder, workingRoot);
  let gitDir = path.join(top, '.git');
  if (entry === 'file') {
    const text = await read(gitDir);
    const target = /^gitdir:\s*(.+?)\s*$/m.exec(text)?.[1];
    if (target === undefined) throw new RepositoryRefusedError(`${shown(gitDir)} is a file without a "gitdir:" line; it is not a repository git can use`);
    gitDir = path.resolve(top, target);
    if (!isInside(folder, gitDir)) throw new RepositoryRefusedError(`${shown(path.join(top, '.git'))} points to a git directory outside the folder git may use here; it was not followed`);
  }
  let commonDir = gitDir;
  const commondir = await read(path.join(gitDir, 'commondir')).catch((error: unknown) => {
    if (error instanceof MissingFile) return undefined;
    throw error;
  });
  if (commondir !== undefined) {
    commonDir = path.resolve(gitDir, commondir.trim());
    if (!isInside(folder, commonDir)) throw new RepositoryRefusedError(`${shown(path.join(gitDir, 'commondir'))} points outside the folder git may use here; it was not followed`);
  }
  for (const directory of new Set([gitDir, commonDir])) await checkNoLinks(folder, workingRoot, directory, shown);
  const alternates = await read(path.join(commonDir, 'objects', 'info', 'alternates')).catch((error: unknown) => {
    if (error instanceof MissingFile) return '';
    throw error;
  });
  if (alternates.trim() !== '') throw new RepositoryRefusedError(`${shown(path.join(commonDir, 'objects', 'info', 'alternates'))} borrows objects from another repository, which git may not read here; remove it (git repack -a, then delete the file)`);
  for (const config of [path.join(commonDir, 'config'), path.join(gitDir, 'config.worktree')]) {
    const text = await read(config).catch((error: unknown) => {
      if (error instanceof MissingFile) return '';
      throw error;
    });
    if (/^\s*\[\s*include(if)?\b/im.test(text)) throw new RepositoryRefusedError(`${shown(config)} includes other configuration files ([include] or [includeIf]), which git may not read here; remove those sections`);
  }
  return { folder, top, gitDir, commonDir };
}

/** What `.git` in `folderPath` is: 'directory', 'file', undefined when absent; a link or anything else is refused. */
async function gitEntryIn(folderPath: string, tenantFolder: string | undefined, workingRoot: string | undefined): Promise<'directory' | 'file' | undefined> {
  let stats;
  if (tenantFolder === undefined) {
    stats = await lstat(path.join(folderPath, '.git')).catch(() => undefined);
  } else {
    const start = await walkStart(folderPath, tenantFolder, workingRoot);
    stats = await withConfinedDir(start.root, start.relative, (opened) => opened.lstatChild('.git')).catch((error: unknown) => {
      if (isConfinedWalkError(error) && error.reason === 'missing') return undefined;
      if (isConfinedWalkError(error)) throw new RepositoryRefusedError(`${path.relative(tenantFolder, folderPath) || '.'} ${refusalText(error.reason)}; git was not run`);
      throw error;
    });
  }
  if (stats === undefined) return undefined;
  if (stats.isDirectory()) return 'directory';
  if (stats.isFile()) return 'file';
  const shown = tenantFolder === undefined ? '.git' : path.relative(tenantFolder, path.join(folderPath, '.git'));
  throw new RepositoryRefusedError(`${shown} is ${stats.isSymbolicLink() ? 'a symbolic link' : 'neither a folder nor a file'}; git is only run in a repository whose .git lives in the folder itself`);
}

class MissingFile extends Error {}

/** A small metadata file of the repository, read without following links. */
async function readConfinedText(folder: string, workingRoot: string | undefined, file: string, shown: (absolute: string) => string): Promise<string> {
  const start = await walkStart(path.dirname(file), folder, workingRoot);
  try {
    const read = await withConfinedDir(start.root, start.relative, (opened) => opened.readFile(path.basename(file), maxGitMetadataFileBytes));
    if ('tooLarge' in read) throw new RepositoryRefusedError(`${shown(file)} is over ${maxGitMetadataFileBytes} bytes; git was not run`);
    return read.content.toString('utf8');
  } catch (error) {
    if (isConfinedWalkError(error) && error.reason === 'missing') throw new MissingFile();
    if (isConfinedWalkError(error)) throw new RepositoryRefusedError(`${shown(file)} (or a folder on the way) ${refusalText(error.reason)}; git was not run`);
    throw error;
  }
}

/** Walks a git directory without following links and refuses it when any entry is a link. */
async function checkNoLinks(folder: string, workingRoot: string | undefined, directory: string, shown: (absolute: string) => string): Promise<void> {
  const start = await walkStart(directory, folder, workingRoot);
  let checked = 0;
  const walk = async (opened: ConfinedDir, absolute: string, depth: number): Promise<void> => {
    for (const entry of await opened.entries()) {
      checked += 1;
      if (checked > maxGitDirEntriesChecked) {
        throw new RepositoryRefusedError(`${shown(directory)} has more than ${maxGitDirEntriesChecked} entries, too many to check before running git outside a sandbox; run the worker with ERRAND_SANDBOX=bwrap`);
      }
      const child = path.join(absolute, entry.name);
      if (entry.kind === 'link') throw new RepositoryRefusedError(`${shown(child)} is a symbolic link; git is only run in a repository without links in its git directory`);
      // The worktrees errand makes by default live here: their files are the tenant's, not git's.
      if (entry.kind !== 'directory' || (depth === 0 && entry.name === defaultWorktreeFolderName)) continue;
      const next = await opened.openChild(entry.name).catch((error: unknown) => {
        if (isConfinedWalkError(error) && error.reason !== 'missing') throw new RepositoryRefusedError(`${shown(child)} ${refusalText(error.reason)}; git was not run`);
        throw error;
      });
      try {
        await walk(next, child, depth + 1);
      } finally {
        await next.close();
      }
    }
  };
  try {
    await withConfinedDir(start.root, start.relative, (opened) => walk(opened, directory, 0));
  } catch (error) {
    if (isConfinedWalkError(error)) throw new RepositoryRefusedError(`${shown(directory)} (or a folder on the way) ${refusalText(error.reason)}; git was not run`);
    throw error;
  }
}

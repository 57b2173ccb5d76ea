import { createHash } from 'node:crypto';
import { maxSourceFileBytes } from '../contracts/limits/sources';
import { isConfinedWalkError, refusalText, withConfinedDir, type ConfinedDir } from '../tools/confined-dir';
import { messageOf } from './directory-store';
import { formatBytes, type SourceStore } from './source-store';
import { claudeFolderPlaces, confinedPath, readFromStore } from './claude-folder-places';

/**
 * Workflow scripts as sources (SEMANTICS §7, decision 0039): a workflow `<name>` is the file
 * `.claude/workflows/<name>.js` (Claude Code's place and extension; `.mjs` is read too), searched in the
 * operator's stores, then the working directory's project, then the worker user's `~/.claude/workflows` —
 * the order of SEMANTICS §1, so a tenant's repository cannot replace the operator's workflow of the same
 * name. Folders are reached through src/tools/confined-dir.ts (no link followed at any step); stores that
 * are not folders (git, S3) are read through the store, which confines its own reads. The content is read
 * once, when a run starts, and goes into the run's input (the snapshot rule of SEMANTICS §1).
 */

/** The folder of workflow scripts inside a project, a store or a home directory. */
export const workflowFolder = '.claude/workflows';
/** File extensions of a workflow script, in the order they are tried. */
export const workflowExtensions = ['.js', '.mjs'] as const;

/** What a workflow name may be: a file stem of letters, digits, `.`, `_` and `-`, not starting with `.`. */
const workflowNamePattern = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** Why `name` is not a workflow name, or undefined when it is one. */
export function workflowNameProblem(name: string): string | undefined {
  if (workflowNamePattern.test(name)) return undefined;
  return `"${name}" is not a workflow name: a name is the file stem of ${workflowFolder}/<name>.js, letters, digits, ".", "_" and "-" (at most 128, not starting with ".")`;
}

/** One script found. */
export interface FoundWorkflowScript {
  name: string;
  /** The script's text. */
  content: string;
  /** Where it was found, worded for people (never a server path). */
  from: string;
  /** The file inside that place (`<name>.js`). */
  file: string;
  /** `sha256:<hex>` of the content (the run's snapshot version). */
  contentHash: string;
}

/** One place workflow scripts may be found. */
export interface WorkflowPlace {
  /** Worded for people and tenants: never a server path. */
  readonly label: string;
  /** The script `<name><extension>` here, or undefined when this place has none. Throws on a refusal (a link, a file too large). */
  read(name: string): Promise<{ file: string; content: string } | undefined>;
  /** Names of the scripts this place holds, when it can list them (folders can; other stores are only asked by name). */
  names(): Promise<string[]>;
}

/** A folder of workflow scripts, reached from `confinedWithin` without following links (a tenant may write it). */
export class FolderWorkflowPlace implements WorkflowPlace {
  private readonly inside: string;

  constructor(
    folder: string,
    readonly label: string,
    private readonly confinedWithin: string = folder,
  ) {
    this.inside = confinedPath(folder, confinedWithin, label, 'the workflow folder');
  }

  private async inFolder<T>(work: (folder: ConfinedDir) => Promise<T>): Promise<T | undefined> {
    try {
      return await withConfinedDir(this.confinedWithin, this.inside === '' ? '.' : this.inside, work);
    } catch (error) {
      if (isConfinedWalkError(error) && (error.reason === 'missing' || error.reason === 'not-directory')) return undefined;
      if (isConfinedWalkError(error)) throw new Error(`${this.label}: refused: the workflow folder ${refusalText(error.reason)}`);
      throw error;
    }
  }

  async read(name: string): Promise<{ file: string; content: string } | undefined> {
    const found = await this.inFolder(async (folder) => {
      for (const extension of workflowExtensions) {
        const file = `${name}${extension}`;
        try {
          const read = await folder.readFile(file, maxSourceFileBytes);
          if ('tooLarge' in read) throw new Error(`${this.label}: ${file}: refused: file is ${formatBytes(read.tooLarge)}, over the ${formatBytes(maxSourceFileBytes)} limit for sources`);
          return { file, content: read.content.toString('utf8') };
        } catch (error) {
          if (isConfinedWalkError(error) && error.reason === 'missing') continue;
          if (isConfinedWalkError(error)) throw new Error(`${this.label}: refused: ${file} ${refusalText(error.reason)}`);
          throw error;
        }
      }
      return undefined;
    });
    return found ?? undefined;
  }

  async names(): Promise<string[]> {
    const entries = await this.inFolder((folder) => folder.entries()).catch(() => undefined);
    return (entries ?? []).filter((entry) => entry.kind === 'file').flatMap((entry) => stemOf(entry.name) ?? []);
  }
}

/** A store that is not a local folder (git, S3): a workflow is the file `.claude/workflows/<name>.js` in it. */
export class StoreWorkflowPlace implements WorkflowPlace {
  readonly label: string;

  constructor(private readonly store: SourceStore) {
    this.label = `${store.describe()} ${workflowFolder}`;
  }

  async read(name: string): Promise<{ file: string; content: string } | undefined> {
    for (const extension of workflowExtensions) {
      const file = `${name}${extension}`;
      const content = await readFromStore(this.store, `${workflowFolder}/${file}`);
      if (content !== undefined) return { file, content };
    }
    return undefined;
  }

  names(): Promise<string[]> {
    return Promise.resolve([]);
  }
}

/** The workflow places: an operator's store, the project, the worker user's home (claude-folder-places.ts). */
const workflowPlaces = claudeFolderPlaces<WorkflowPlace>({
  folder: workflowFolder,
  inFolder: (folder, label, confinedWithin) => new FolderWorkflowPlace(folder, label, confinedWithin),
  inStore: (store) => new StoreWorkflowPlace(store),
});
/** The workflow place of an operator's store: its folder's `.claude/workflows` (confined to the store), or the store itself. */
export const operatorWorkflowPlace = workflowPlaces.operator;
/** The working directory's `.claude/workflows`, reached from the working root when the directory is under it. */
export const projectWorkflowPlace = workflowPlaces.project;
/** The worker user's `~/.claude/workflows`. */
export const userWorkflowPlace = workflowPlaces.user;

/** A script found, or a message naming the name, where it looked and the scripts that exist. */
export type WorkflowLookup = { ok: true; script: FoundWorkflowScript } | { ok: false; message: string; known: string[] };

/** Finds the workflow script `name` in `places` (first place wins). */
export async function findWorkflowScript(name: string, places: readonly WorkflowPlace[]): Promise<WorkflowLookup> {
  const problem = workflowNameProblem(name);
  if (problem !== undefined) return { ok: false, message: problem, known: [] };
  for (const place of places) {
    let found: { file: string; content: string } | undefined;
    try {
      found = await place.read(name);
    } catch (error) {
      return { ok: false, message: `workflow "${name}" cannot be read: ${messageOf(error)}`, known: [] };
    }
    if (found !== undefined) {
      const contentHash = `sha256:${createHash('sha256').update(found.content).digest('hex')}`;
      return { ok: true, script: { name, content: found.content, from: place.label, file: found.file, contentHash } };
    }
  }
  const known = new Set<string>();
  for (const place of places) for (const each of await place.names().catch(() => [])) known.add(each);
  const list = [...known].sort();
  return {
    ok: false,
    known: list,
    message:
      `no workflow named "${name}" (a workflow is a file ${workflowFolder}/<name>.js; searched: ${places.map((place) => place.label).join(', ') || 'nowhere'}); ` +
      `workflows found: ${list.length > 0 ? list.join(', ') : 'none'}`,
  };
}

/** The name of a workflow file (`sweep.js` → `sweep`), or undefined for another file. */
function stemOf(fileName: string): string | undefined {
  const extension = workflowExtensions.find((candidate) => fileName.endsWith(candidate));
  if (extension === undefined) return undefined;
  const stem = fileName.slice(0, -extension.length);
  return workflowNameProblem(stem) === undefined ? stem : undefined;
}

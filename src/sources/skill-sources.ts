import { agentSkillsMaxTotalBytes } from '../contracts/limits/memory';
import { maxSourceFileBytes } from '../contracts/limits/sources';
import type { PreloadedSkill } from '../contracts/subagent';
import { isConfinedWalkError, refusalText, withConfinedDir, type ConfinedDir } from '../tools/confined-dir';
import { messageOf } from './directory-store';
import { formatBytes, type SourceStore } from './source-store';
import { claudeFolderPlaces, confinedPath, readFromStore } from './claude-folder-places';

/**
 * Where an agent's `skills` come from (Claude Code's preloaded skills, decision 0031): a skill `<name>` is
 * the folder `.claude/skills/<name>/` with its `SKILL.md`, searched in the operator's stores, then the
 * working directory's project, then the worker user's `~/.claude/skills` — the order of SEMANTICS §1, so a
 * tenant's repository cannot replace the operator's skill of the same name. Folders are reached through
 * src/tools/confined-dir.ts (no link followed at any step); stores that are not folders (git, S3) are read
 * through the store, which confines its own reads.
 */

/** The folder of skills inside a project, a store or a home directory. */
export const skillFolder = '.claude/skills';
/** The file of a skill inside its folder. */
export const skillFile = 'SKILL.md';

/** One place skills may be found. */
export interface SkillPlace {
  /** Worded for people and tenants: never a server path. */
  readonly label: string;
  /** The skill's SKILL.md text, or undefined when this place has no skill of that name. Throws on a refusal (a link, a file too large). */
  read(name: string): Promise<string | undefined>;
  /** Names of the skills this place holds, when it can list them (folders can; other stores are only asked by name). */
  names(): Promise<string[]>;
}

/** A folder of skill folders, reached from `confinedWithin` without following links (a tenant may write it). */
export class FolderSkillPlace implements SkillPlace {
  private readonly inside: string;

  constructor(
    folder: string,
    readonly label: string,
    private readonly confinedWithin: string = folder,
  ) {
    this.inside = confinedPath(folder, confinedWithin, label, 'the skill folder');
  }

  private async inFolder<T>(subfolder: string, work: (folder: ConfinedDir) => Promise<T>): Promise<T | undefined> {
    const path = [this.inside, subfolder].filter((part) => part !== '' && part !== '.').join('/');
    try {
      return await withConfinedDir(this.confinedWithin, path, work);
    } catch (error) {
      if (isConfinedWalkError(error) && (error.reason === 'missing' || error.reason === 'not-directory')) return undefined;
      if (isConfinedWalkError(error)) throw new Error(`${this.label}: refused: ${subfolder === '' ? 'the skill folder' : subfolder} ${refusalText(error.reason)}`);
      throw error;
    }
  }

  async read(name: string): Promise<string | undefined> {
    const read = await this.inFolder(name, async (folder) => {
      try {
        return await folder.readFile(skillFile, maxSourceFileBytes);
      } catch (error) {
        if (isConfinedWalkError(error) && error.reason === 'missing') return undefined;
        if (isConfinedWalkError(error)) throw new Error(`${this.label}: refused: ${name}/${skillFile} ${refusalText(error.reason)}`);
        throw error;
      }
    });
    if (read === undefined) return undefined;
    if ('tooLarge' in read) throw new Error(`${this.label}: ${name}/${skillFile}: refused: file is ${formatBytes(read.tooLarge)}, over the ${formatBytes(maxSourceFileBytes)} limit for sources`);
    return read.content.toString('utf8');
  }

  async names(): Promise<string[]> {
    const entries = await this.inFolder('', (folder) => folder.entries()).catch(() => undefined);
    return (entries ?? []).filter((entry) => entry.kind === 'directory' && !entry.name.startsWith('.')).map((entry) => entry.name);
  }
}

/** A store that is not a local folder (git, S3): a skill is the file `.claude/skills/<name>/SKILL.md` in it. */
export class StoreSkillPlace implements SkillPlace {
  readonly label: string;

  constructor(private readonly store: SourceStore) {
    this.label = `${store.describe()} ${skillFolder}`;
  }

  read(name: string): Promise<string | undefined> {
    return readFromStore(this.store, `${skillFolder}/${name}/${skillFile}`);
  }

  names(): Promise<string[]> {
    return Promise.resolve([]);
  }
}

/** The skill places: an operator's store, the project, the worker user's home (claude-folder-places.ts). */
const skillPlaces = claudeFolderPlaces<SkillPlace>({
  folder: skillFolder,
  inFolder: (folder, label, confinedWithin) => new FolderSkillPlace(folder, label, confinedWithin),
  inStore: (store) => new StoreSkillPlace(store),
});
/** The skill place of an operator's store: its folder's `.claude/skills` (confined to the store), or the store itself. */
export const operatorSkillPlace = skillPlaces.operator;
/** The working directory's `.claude/skills`, reached from the working root when the directory is under it. */
export const projectSkillPlace = skillPlaces.project;
/** The worker user's `~/.claude/skills`. */
export const userSkillPlace = skillPlaces.user;

/** Skills found, or a message naming the field, the missing names and the skills that exist. */
export type SkillLookup = { ok: true; skills: PreloadedSkill[] } | { ok: false; message: string };

/**
 * Finds each named skill in `places` (first place wins). `file` names the agent file for messages. An
 * unknown name is an error that lists the skills found and the places searched; so is a skill a place
 * refused (a link) and a total over {@link agentSkillsMaxTotalBytes}.
 */
export async function findSkills(names: readonly string[], places: readonly SkillPlace[], file: string): Promise<SkillLookup> {
  const skills: PreloadedSkill[] = [];
  const missing: string[] = [];
  let total = 0;
  for (const name of names) {
    let found: PreloadedSkill | undefined;
    for (const place of places) {
      let content: string | undefined;
      try {
        content = await place.read(name);
      } catch (error) {
        return { ok: false, message: `${file}: skills: skill "${name}" cannot be read: ${messageOf(error)}` };
      }
      if (content !== undefined) {
        found = { name, from: place.label, content };
        break;
      }
    }
    if (!found) {
      missing.push(name);
      continue;
    }
    total += Buffer.byteLength(found.content, 'utf8');
    skills.push(found);
  }
  if (missing.length > 0) {
    const known = new Set<string>();
    for (const place of places) for (const name of await place.names().catch(() => [])) known.add(name);
    const list = [...known].sort();
    return {
      ok: false,
      message:
        `${file}: skills: no skill named ${missing.map((name) => `"${name}"`).join(', ')} (a skill is a folder ${skillFolder}/<name>/ with a ${skillFile}; ` +
        `searched: ${places.map((place) => place.label).join(', ') || 'nowhere'}); skills found: ${list.length > 0 ? list.join(', ') : 'none'}`,
    };
  }
  if (total > agentSkillsMaxTotalBytes) {
    return { ok: false, message: `${file}: skills: the skills come to ${formatBytes(total)}, over the ${formatBytes(agentSkillsMaxTotalBytes)} a system prompt takes; preload fewer or shorter skills` };
  }
  return { ok: true, skills };
}

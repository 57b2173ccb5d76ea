import { createHash } from 'node:crypto';
import {
  agentMemoryFileMaxBytes,
  agentMemoryMaxFiles,
  agentMemoryNameMaxLength,
  agentMemoryPathMaxDepth,
  agentMemoryPathMaxLength,
  agentMemoryPromptMaxBytes,
  agentMemoryPromptMaxLines,
  agentMemoryWriteAttempts,
  defaultAgentMemoryRevisionsKept,
} from '../contracts/limits/memory';
import type { AgentMemoryLocation } from '../contracts/subagent';
import { agentMemoryScopes } from '../contracts/agent-definition';
import { isBlobConflictError, validateBlobKey, type BlobStore } from './blob-store';

/**
 * An agent's memory folder (Claude Code's `memory` field, decision 0031), kept in errand's blob store so
 * every worker and the API see it, and never in a working directory.
 *
 * The blob store is write-once (a key always names the same body), so a memory file is a series of
 * revisions: `<folder>/f/<path>/@<revision>`, the highest revision being the file's content. A write puts
 * the next revision; two writers racing for the same revision are told apart by the store itself (the
 * loser gets a conflict and tries the next one), so no write is lost and none is half seen. An edit (read,
 * change, write) writes exactly the revision after the one it read, and reads again when another write took
 * it, so two parallel edits both land. A write deletes the file's revisions older than the last
 * `revisionsKept` (`ERRAND_MEMORY_REVISIONS_KEPT`), so a file's revisions, and what a read lists, stay few.
 * No write lands behind the latest: an edit based on a revision older than the latest is told of the
 * conflict before it writes, and a plain write that finds, after its put, a later revision than its own (the
 * one it read was pruned meanwhile) takes its revision back and writes again.
 *
 * The folder's key is built from the tenant, the scope, the project (for `project` and `local`: a hash of
 * the working directory, never the path itself) and the agent name, each checked to be one plain key
 * segment: a crafted agent name (`../other`) or tenant can never name another folder.
 */

/** The prefix of every memory folder in the blob store. */
export const agentMemoryKeyPrefix = 'agent-memory';
/** The folder's part of the key for delegations without a tenant (a tenant name cannot start with `_`). */
const noTenant = '_none';
/** The file whose start is put into the system prompt. */
export const memoryIndexFile = 'MEMORY.md';

/** A name that may name a memory folder: one key segment, as Claude Code names agents (letters, digits, `-`, `_`, `.`). */
const agentNamePattern = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,${agentMemoryNameMaxLength - 1}}$`);
/** One folder or file name inside a memory folder; `@` never appears, so a revision segment cannot be a name. */
const pathSegmentPattern = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;
/** What a valid path inside a memory folder looks like, for error messages the model reads. */
export const memoryPathRules =
  `a relative path such as memory/MEMORY.md or memory/topics/api.md: names of letters, digits, ".", "_" and "-" (not starting with "."), ` +
  `separated by "/", at most ${agentMemoryPathMaxDepth} levels and ${agentMemoryPathMaxLength} characters`;

/** A problem with a memory location or path: a message for the planner's caller or the model. */
export class AgentMemoryError extends Error {
  /** Marker for recognition without `instanceof` (DESIGN.md convention 5). */
  readonly errandError = 'AgentMemoryError';
  constructor(message: string) {
    super(message);
    this.name = 'AgentMemoryError';
  }
}

/** A compare-and-swap write that lost: another write made the revision after the one it was based on. */
export class AgentMemoryConflict extends Error {
  /** Marker for recognition without `instanceof` (DESIGN.md convention 5). */
  readonly errandError = 'AgentMemoryConflict';
  constructor(
    readonly path: string,
    readonly basedOn: number,
  ) {
    super(`memory file ${path} changed since revision ${basedOn}`);
    this.name = 'AgentMemoryConflict';
  }
}

/** Whether `error` is an AgentMemoryConflict, by marker. */
export function isAgentMemoryConflict(error: unknown): error is AgentMemoryConflict {
  return typeof error === 'object' && error !== null && 'errandError' in error && error.errandError === 'AgentMemoryConflict';
}

/** Whether `error` is an AgentMemoryError, by marker. */
export function isAgentMemoryError(error: unknown): error is AgentMemoryError {
  return typeof error === 'object' && error !== null && 'errandError' in error && error.errandError === 'AgentMemoryError';
}

/**
 * The memory location of an agent delegated with `memory: <scope>`: the project of `project` and `local`
 * is the working directory relative to the working root (so every worker computes the same one), hashed.
 * Throws an AgentMemoryError naming the agent file's field when the agent's name cannot name a folder.
 */
export function memoryLocationFor(options: { tenant: string | undefined; scope: string; agent: string; workingDir: string; workingRoot?: string; file: string }): AgentMemoryLocation {
  if (!(agentMemoryScopes as readonly string[]).includes(options.scope)) {
    throw new AgentMemoryError(`${options.file}: memory: "${options.scope}" is not a memory scope; expected one of ${agentMemoryScopes.join(', ')}`);
  }
  if (!agentNamePattern.test(options.agent)) {
    throw new AgentMemoryError(
      `${options.file}: memory: the agent name ${JSON.stringify(options.agent)} cannot name a memory folder; ` +
        `an agent with memory needs a name of letters, digits, ".", "_" and "-" (starting with a letter or digit, at most ${agentMemoryNameMaxLength} characters)`,
    );
  }
  const scope = options.scope as AgentMemoryLocation['scope'];
  const location: AgentMemoryLocation = { scope, agent: options.agent, ...(options.tenant !== undefined ? { tenant: options.tenant } : {}) };
  if (scope === 'user') return location;
  return { ...location, project: projectKey(options.workingDir, options.workingRoot) };
}

/** The project of a working directory: its path below the working root (the whole path outside it), hashed. */
function projectKey(workingDir: string, workingRoot: string | undefined): string {
  const dir = workingDir.replace(/\/+$/, '');
  const root = workingRoot?.replace(/\/+$/, '');
  const relative = root !== undefined && (dir === root || dir.startsWith(`${root}/`)) ? dir.slice(root.length).replace(/^\/+/, '') : dir;
  return createHash('sha256').update(relative === '' ? '.' : relative).digest('hex').slice(0, 32);
}

/**
 * The blob key of a location's folder. Every part is checked again here (a location comes from workflow
 * input): a part that is not one plain segment is refused, never cleaned up into another folder's name.
 */
export function memoryFolderKey(location: AgentMemoryLocation): string {
  const tenant = location.tenant ?? noTenant;
  const parts = [agentMemoryKeyPrefix, tenant, location.scope, ...(location.scope === 'user' ? [] : [location.project ?? '']), location.agent];
  if (location.tenant !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(location.tenant)) throw new AgentMemoryError(`memory: tenant ${JSON.stringify(location.tenant)} cannot name a memory folder`);
  if (!(agentMemoryScopes as readonly string[]).includes(location.scope)) throw new AgentMemoryError(`memory: "${String(location.scope)}" is not a memory scope`);
  if (location.scope !== 'user' && !/^[0-9a-f]{32}$/.test(location.project ?? '')) throw new AgentMemoryError('memory: the project of a project or local memory is missing or not a project key');
  if (!agentNamePattern.test(location.agent)) throw new AgentMemoryError(`memory: the agent name ${JSON.stringify(location.agent)} cannot name a memory folder`);
  const key = parts.join('/');
  validateBlobKey(key);
  return key;
}

/**
 * A path inside the memory folder, as the model writes it (`memory/MEMORY.md`, or `MEMORY.md`), checked
 * and returned without the `memory/` prefix. Throws an AgentMemoryError that says what a valid path is.
 */
export function memoryPath(raw: string): string {
  const trimmed = raw.trim().replace(/^\.\//, '');
  const inside = trimmed === 'memory' || trimmed === 'memory/' ? '' : trimmed.startsWith('memory/') ? trimmed.slice('memory/'.length) : trimmed;
  if (inside === '') throw new AgentMemoryError(`path ${JSON.stringify(raw)} names the memory folder itself, not a file; use ${memoryPathRules}`);
  const segments = inside.split('/');
  if (inside.length > agentMemoryPathMaxLength || segments.length > agentMemoryPathMaxDepth || !segments.every((segment) => pathSegmentPattern.test(segment))) {
    throw new AgentMemoryError(`path ${JSON.stringify(raw)} is not a path inside the memory folder; use ${memoryPathRules}`);
  }
  return inside;
}

const revisionDigits = 10;
const revisionSegment = (revision: number) => `@${String(revision).padStart(revisionDigits, '0')}`;

/** What an agent's memory folder is kept with besides the store. */
export interface AgentMemoryOptions {
  /** Revisions of each file kept (the latest included); older ones are deleted by the next write. Default {@link defaultAgentMemoryRevisionsKept}. */
  revisionsKept?: number;
}

/** One agent's memory folder in the blob store: read, write and list its files. */
export class AgentMemory {
  private readonly folder: string;
  private readonly revisionsKept: number;

  constructor(
    private readonly blobs: BlobStore,
    location: AgentMemoryLocation,
    options: AgentMemoryOptions = {},
  ) {
    this.folder = memoryFolderKey(location);
    this.revisionsKept = Math.max(1, options.revisionsKept ?? defaultAgentMemoryRevisionsKept);
  }

  /** The revisions of `path` (checked with {@link memoryPath}) the store holds, oldest first. */
  private async revisions(path: string): Promise<{ revision: number; key: string }[]> {
    const prefix = `${this.folder}/f/${path}/@`;
    const found: { revision: number; key: string }[] = [];
    for (const key of await this.blobs.list(prefix)) {
      const tail = key.slice(prefix.length);
      if (/^\d+$/.test(tail)) found.push({ revision: Number(tail), key });
    }
    return found.sort((a, b) => a.revision - b.revision);
  }

  /** The latest revision of `path`: its number and key, or undefined. */
  private async latest(path: string): Promise<{ revision: number; key: string } | undefined> {
    return (await this.revisions(path)).at(-1);
  }

  /**
   * After revision `revision` of `path` was put: whether it is the latest. When it is, the revisions older
   * than the last {@link revisionsKept} are deleted. When a later one exists, the put went behind it (its
   * revision had been pruned since it was read): it is deleted again, and the caller writes anew.
   */
  private async settleRevision(path: string, revision: number): Promise<boolean> {
    const revisions = await this.revisions(path);
    const latest = revisions.at(-1)?.revision ?? revision;
    if (latest > revision) {
      await this.blobs.delete(`${this.folder}/f/${path}/${revisionSegment(revision)}`);
      return false;
    }
    await this.prune(revisions, revision);
    return true;
  }

  /** Deletes the revisions older than the last {@link revisionsKept} up to `latest`. */
  private async prune(revisions: readonly { revision: number; key: string }[], latest: number): Promise<void> {
    for (const old of revisions) if (old.revision <= latest - this.revisionsKept) await this.blobs.delete(old.key);
  }

  /** The content of a file, or undefined when it does not exist. */
  async read(rawPath: string): Promise<string | undefined> {
    return (await this.readRevision(rawPath))?.content;
  }

  /** The latest revision of a file with its content (for a read-change-write: {@link write}'s `basedOn`), or undefined. */
  async readRevision(rawPath: string): Promise<{ revision: number; content: string } | undefined> {
    const found = await this.latest(memoryPath(rawPath));
    if (found === undefined) return undefined;
    const content = await this.blobs.get(found.key);
    return content === undefined ? undefined : { revision: found.revision, content };
  }

  /** Every file of the folder (paths below `memory/`), sorted. */
  async list(): Promise<string[]> {
    const prefix = `${this.folder}/f/`;
    const files = new Set<string>();
    for (const key of await this.blobs.list(prefix)) {
      const rest = key.slice(prefix.length);
      const at = rest.lastIndexOf('/@');
      if (at > 0) files.add(rest.slice(0, at));
    }
    return [...files].sort();
  }

  /**
   * Writes a whole file (a new revision); the same content as the latest revision writes nothing.
   * With `basedOn` (the revision the content was made from, 0 for a new file) the write is a compare-and-swap:
   * it takes exactly the next revision, and throws an {@link AgentMemoryConflict} when another write took it
   * first, so a read-change-write (an edit) reads again instead of overwriting what the other one wrote.
   */
  async write(rawPath: string, content: string, options: { basedOn?: number } = {}): Promise<void> {
    const path = memoryPath(rawPath);
    const size = Buffer.byteLength(content, 'utf8');
    if (size > agentMemoryFileMaxBytes) throw new AgentMemoryError(`the content is ${size} bytes; a memory file holds at most ${agentMemoryFileMaxBytes} bytes: keep MEMORY.md short and put details in topic files`);
    if (options.basedOn !== undefined) return this.writeRevision(path, content, options.basedOn);
    for (let attempt = 0; attempt < agentMemoryWriteAttempts; attempt += 1) {
      const latest = await this.latest(path);
      if (latest === undefined && (await this.list()).length >= agentMemoryMaxFiles) {
        throw new AgentMemoryError(`the memory folder already holds ${agentMemoryMaxFiles} files, the most it may; write into an existing file instead`);
      }
      // A retried tool call (or a write of what is there) adds no revision.
      if (latest !== undefined && (await this.blobs.get(latest.key)) === content) return;
      const revision = (latest?.revision ?? 0) + 1;
      try {
        await this.blobs.put(`${this.folder}/f/${path}/${revisionSegment(revision)}`, content);
        if (await this.settleRevision(path, revision)) return;
      } catch (error) {
        // Another write of this file took that revision first: read again and write the next one.
        if (!isBlobConflictError(error)) throw error;
      }
    }
    throw new AgentMemoryError(`memory file ${path} is being written by others at the same time; try again`);
  }

  /** Puts revision `basedOn + 1` of `path`, or throws an AgentMemoryConflict when it is taken by other content. */
  private async writeRevision(path: string, content: string, basedOn: number): Promise<void> {
    const revisions = await this.revisions(path);
    if ((revisions.at(-1)?.revision ?? 0) > basedOn) {
      // A later revision exists: another write came first, or this call is a retry that already wrote it.
      const next = revisions.find((entry) => entry.revision === basedOn + 1);
      if (next !== undefined && (await this.blobs.get(next.key)) === content) return;
      throw new AgentMemoryConflict(path, basedOn);
    }
    if (basedOn === 0 && (await this.list()).length >= agentMemoryMaxFiles) {
      throw new AgentMemoryError(`the memory folder already holds ${agentMemoryMaxFiles} files, the most it may; write into an existing file instead`);
    }
    try {
      // The same content under that revision (a retried tool call) is no conflict: the store's put is idempotent.
      await this.blobs.put(`${this.folder}/f/${path}/${revisionSegment(basedOn + 1)}`, content);
    } catch (error) {
      if (isBlobConflictError(error)) throw new AgentMemoryConflict(path, basedOn);
      throw error;
    }
    await this.prune(revisions, basedOn + 1);
  }

  /**
   * The part of MEMORY.md that goes into the system prompt: its first {@link agentMemoryPromptMaxLines}
   * lines, at most {@link agentMemoryPromptMaxBytes} bytes; `truncated` says whether anything was left out.
   */
  async promptExcerpt(): Promise<{ text: string; truncated: boolean } | undefined> {
    const content = await this.read(memoryIndexFile);
    if (content === undefined) return undefined;
    return excerpt(content);
  }
}

/** The first lines of a text, within the prompt's line and byte limits (a line is never cut in the middle unless it alone is over). */
export function excerpt(content: string): { text: string; truncated: boolean } {
  const lines = content.split('\n');
  const kept: string[] = [];
  let bytes = 0;
  let truncated = lines.length > agentMemoryPromptMaxLines;
  for (const line of lines.slice(0, agentMemoryPromptMaxLines)) {
    const size = Buffer.byteLength(line, 'utf8') + 1;
    if (bytes + size > agentMemoryPromptMaxBytes) {
      truncated = true;
      if (kept.length === 0) kept.push(Buffer.from(line, 'utf8').subarray(0, agentMemoryPromptMaxBytes).toString('utf8').replace(/\uFFFD$/, ''));
      break;
    }
    kept.push(line);
    bytes += size;
  }
  return { text: kept.join('\n').trimEnd(), truncated };
}

import { randomBytes } from 'node:crypto';
import { constants, statSync } from 'node:fs';
import { copyFile, link, mkdir, open, unlink } from 'node:fs/promises';
import path from 'node:path';
import { blobKeyMaxLength, blobListMaxKeys } from '../contracts/limits/activities';
import { ConfinedDir, isConfinedWalkError, refusalText, withConfinedDir } from '../tools/confined-dir';

/**
 * Large payloads by reference: workflow history carries a key, the blob store the body, so history per
 * turn does not grow with the payload. Entries are immutable: a key, once written, always names the same
 * body. That makes `put` safe to retry (an activity retry re-puts the same body: a no-op) and makes any
 * read cacheable forever. An entry may be deleted when nothing reads it any more (an agent memory's old
 * revisions); a key deleted is never written again with another body by errand's own writers.
 */
export interface BlobStore {
  /**
   * Stores `body` under `key`. Idempotent: the same body again is a no-op. A different body under an
   * existing key throws a BlobConflictError (entries are immutable). An invalid key throws a BlobKeyError.
   */
  put(key: string, body: string): Promise<void>;
  /** The body stored under `key`, or undefined if there is none. */
  get(key: string): Promise<string | undefined>;
  /** Every key that starts with `prefix` (a plain string prefix, e.g. `conversations/abc/`), sorted. */
  list(prefix: string): Promise<string[]>;
  /** Deletes the entry under `key`; a key with no entry is no error (a retried delete is a no-op). */
  delete(key: string): Promise<void>;
}

/** Marker values of blob store errors, for recognition without `instanceof` (DESIGN.md convention 5). */
export const BlobErrorKind = {
  invalidKey: 'BlobKeyInvalid',
  conflict: 'BlobConflict',
} as const;

/** A key (or list prefix) that is not valid. A caller bug: never retry. */
export class BlobKeyError extends Error {
  readonly errandError = BlobErrorKind.invalidKey;
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`blob key ${JSON.stringify(key)} is invalid: ${reason}. ${validKeyDescription}`);
    this.name = 'BlobKeyError';
  }
}

/** A put of a different body under an existing key. Entries are immutable: never retry. */
export class BlobConflictError extends Error {
  readonly errandError = BlobErrorKind.conflict;
  constructor(readonly key: string) {
    super(`blob ${JSON.stringify(key)} already exists with a different body; blob entries are immutable, write a new key instead`);
    this.name = 'BlobConflictError';
  }
}

/** Whether `error` is a BlobConflictError, by marker (works across module copies and sandboxes). */
export function isBlobConflictError(error: unknown): error is BlobConflictError {
  return hasMarker(error, BlobErrorKind.conflict);
}

/** Whether `error` is a BlobKeyError, by marker. */
export function isBlobKeyError(error: unknown): error is BlobKeyError {
  return hasMarker(error, BlobErrorKind.invalidKey);
}

function hasMarker(error: unknown, marker: string): boolean {
  return typeof error === 'object' && error !== null && 'errandError' in error && error.errandError === marker;
}

const validKeyDescription =
  `Valid keys are "/"-separated segments of letters, digits, ".", "_", "-", "=", "@" and "+", ` +
  `each segment non-empty and not starting with "." (so no ".."), no leading or trailing "/", at most ${blobKeyMaxLength} characters`;

/** One key segment. A leading "." is refused: it rules out `.` and `..` and keeps temp files (`.tmp-*`) apart from keys. */
const segmentPattern = /^[A-Za-z0-9_=@+-][A-Za-z0-9._=@+-]*$/;

/** Throws a BlobKeyError unless `key` is valid (see validKeyDescription). */
export function validateBlobKey(key: string): void {
  if (key.length === 0) throw new BlobKeyError(key, 'it is empty');
  if (key.length > blobKeyMaxLength) throw new BlobKeyError(key, `it has ${key.length} characters`);
  if (key.startsWith('/')) throw new BlobKeyError(key, 'it starts with "/"');
  if (key.endsWith('/')) throw new BlobKeyError(key, 'it ends with "/"');
  for (const segment of key.split('/')) {
    if (segment.length === 0) throw new BlobKeyError(key, 'it has an empty segment ("//")');
    if (segment === '..' || segment === '.') throw new BlobKeyError(key, `it has a "${segment}" segment`);
    if (!segmentPattern.test(segment)) throw new BlobKeyError(key, `segment ${JSON.stringify(segment)} has a character that is not allowed or starts with "."`);
  }
}

/**
 * Throws a BlobKeyError unless `prefix` is a valid list prefix: empty, or a valid key optionally followed
 * by "/" (the last segment may be partial, e.g. `conversations/ab`).
 */
export function validateBlobPrefix(prefix: string): void {
  if (prefix.length === 0) return;
  validateBlobKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
}

/**
 * BlobStore on a local directory: key `a/b/c` is the file `<root>/a/b/c`.
 *
 * Atomicity: a put writes a temp file (`.tmp-*`, in the same directory so the final step stays on one
 * filesystem), flushes it to disk (`fsync`, so the name never points at a body a crash could lose), and
 * then hard-links it to the final name. `link` fails if the name exists, so it is an atomic
 * create-if-absent: a reader sees either no file or the whole body, never a partial one, and two racing
 * puts of different bodies cannot both win. The directory is flushed after the link, so the name itself
 * survives a crash. Where hard links are not supported, the body is copied to the final name with an
 * exclusive create (`COPYFILE_EXCL`): it still never overwrites another body (a racing put of a different
 * body gets a conflict), but a reader racing that copy may see a partial body.
 *
 * Unlike S3, a directory cannot hold both a blob `a/b` and a blob `a/b/c`; errand's keys never need both.
 */
export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  /**
   * Runs `work` on the folder that holds `key`, reached from the store's root without following a link at
   * any step (src/tools/confined-dir.ts): the data folder may sit where a model's command can write (a
   * local working directory), and a folder of it swapped for a link must not lead a read or a write out.
   */
  private async inFolderOf<T>(key: string, work: (folder: ConfinedDir, name: string) => Promise<T>, create: boolean): Promise<T> {
    const segments = splitKey(key);
    const name = segments.pop() ?? '';
    const walk = () => withConfinedDir(this.root, segments.join('/'), (folder) => work(folder, name), { create });
    if (!create) return walk();
    // The store's own folder is made on the first write that finds it missing (not asked for at every write).
    try {
      return await walk();
    } catch (error) {
      if (!isConfinedWalkError(error) || error.reason !== 'missing' || error.relativePath !== '.') throw error;
      await mkdir(this.root, { recursive: true });
      return walk();
    }
  }

  async put(key: string, body: string): Promise<void> {
    validateBlobKey(key);
    tempCounter += 1;
    const tempSuffix = `${tempPrefix}-${tempCounter}`;
    await this.inFolderOf(
      key,
      async (folder, name) => {
        const temp = folder.pathOf(`.tmp-${name}-${tempSuffix}`);
        const file = folder.pathOf(name);
        // Most puts write a new key: no read first. A key that exists is found by the link below (EEXIST).
        const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
        try {
          await handle.writeFile(body, 'utf8');
          await handle.sync();
        } finally {
          await handle.close();
        }
        try {
          try {
            await link(temp, file);
          } catch (error) {
            if (errnoCode(error) !== 'EPERM' && errnoCode(error) !== 'ENOTSUP' && errnoCode(error) !== 'EXDEV') throw error;
            // No hard links here: an exclusive copy still never replaces another body.
            await copyFile(temp, file, constants.COPYFILE_EXCL);
          }
        } catch (error) {
          if (errnoCode(error) === 'EEXIST') {
            // Lost a race with another put of the same key: fine if it wrote the same body.
            const winner = await readIn(folder, name);
            if (winner !== undefined) return assertSameBody(key, winner, body);
          }
          throw error;
        } finally {
          await unlink(temp).catch(() => undefined);
        }
        await folder.sync();
      },
      true,
    );
  }

  async get(key: string): Promise<string | undefined> {
    validateBlobKey(key);
    // A miss is common (is this outcome stored yet?): a stat that returns nothing is much cheaper than a
    // failed open, which builds an error with a stack trace. A hit is then read through the confined walk.
    if (statSync(path.join(this.root, ...splitKey(key)), { throwIfNoEntry: false }) === undefined) return undefined;
    try {
      return await this.inFolderOf(key, (folder, name) => readIn(folder, name), false);
    } catch (error) {
      if (isConfinedWalkError(error) && (error.reason === 'missing' || error.reason === 'not-directory')) return undefined;
      if (isConfinedWalkError(error)) throw new Error(`blob ${JSON.stringify(key)}: refused: ${error.relativePath} ${refusalText(error.reason)}`);
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    validateBlobKey(key);
    if (statSync(path.join(this.root, ...splitKey(key)), { throwIfNoEntry: false }) === undefined) return;
    try {
      await this.inFolderOf(key, (folder, name) => unlink(folder.pathOf(name)).catch((error: unknown) => {
        if (errnoCode(error) !== 'ENOENT') throw error;
      }), false);
    } catch (error) {
      if (isConfinedWalkError(error) && (error.reason === 'missing' || error.reason === 'not-directory')) return;
      if (isConfinedWalkError(error)) throw new Error(`blob ${JSON.stringify(key)}: refused: ${error.relativePath} ${refusalText(error.reason)}`);
      throw error;
    }
  }

  async list(prefix: string): Promise<string[]> {
    validateBlobPrefix(prefix);
    // Walk only the directory the prefix's complete segments name, then filter by the partial rest.
    const slash = prefix.lastIndexOf('/');
    const baseKey = slash < 0 ? '' : prefix.slice(0, slash);
    const keys: string[] = [];
    let base: ConfinedDir;
    try {
      base = await ConfinedDir.openRoot(this.root);
    } catch (error) {
      if (isConfinedWalkError(error)) return [];
      throw error;
    }
    try {
      const stack = [baseKey];
      while (stack.length > 0) {
        const directoryKey = stack.pop() ?? '';
        // Each folder is opened from the root without links: a folder swapped for a link is not listed.
        const folder = await base.openPath(directoryKey).catch((error: unknown) => {
          if (isConfinedWalkError(error)) return undefined;
          throw error;
        });
        if (folder === undefined) continue;
        try {
          for (const entry of await folder.entries()) {
            if (entry.name.startsWith('.')) continue; // temp files of puts in progress
            const childKey = directoryKey === '' ? entry.name : `${directoryKey}/${entry.name}`;
            if (entry.kind === 'directory') {
              if (childKey.startsWith(prefix) || prefix.startsWith(`${childKey}/`)) stack.push(childKey);
            } else if (entry.kind === 'file' && childKey.startsWith(prefix)) {
              keys.push(childKey);
              if (keys.length > blobListMaxKeys) throw new Error(`blob list of prefix ${JSON.stringify(prefix)} has more than ${blobListMaxKeys} keys; use a narrower prefix`);
            }
          }
        } finally {
          await folder.close();
        }
      }
    } finally {
      await base.close();
    }
    return keys.sort();
  }
}

/** The body of the blob file `name` in `folder`; undefined when there is none (or it is a folder of longer keys). */
async function readIn(folder: ConfinedDir, name: string): Promise<string | undefined> {
  try {
    const read = await folder.readFile(name, Number.MAX_SAFE_INTEGER - 1);
    return 'tooLarge' in read ? undefined : read.content.toString('utf8');
  } catch (error) {
    // not-regular: the key names a "directory" of longer keys (`a/b` when `a/b/c` exists): no blob there.
    if (isConfinedWalkError(error) && (error.reason === 'missing' || error.reason === 'not-regular' || error.reason === 'not-directory')) return undefined;
    throw error;
  }
}

/** Temp file names: unique per process (random prefix) and per put (counter). */
const tempPrefix = `${process.pid}-${randomBytes(4).toString('hex')}`;
let tempCounter = 0;

function splitKey(key: string): string[] {
  return key === '' ? [] : key.split('/');
}

function assertSameBody(key: string, existing: string, body: string): void {
  if (existing !== body) throw new BlobConflictError(key);
}

function errnoCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

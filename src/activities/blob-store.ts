import { randomBytes } from 'node:crypto';
import { constants, statSync } from 'node:fs';
import { copyFile, link, mkdir, open, readFile, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import { blobKeyMaxLength, blobListMaxKeys } from '../contracts/limits';

/**
 * Large payloads by reference: workflow history carries a key, the blob store the body, so history per
 * turn does not grow with the payload. Entries are immutable: a key, once written, always names the same
 * body. That makes `put` safe to retry (an activity retry re-puts the same body: a no-op) and makes any
 * read cacheable forever.
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
  /** Directories this store made or found (a put then skips its mkdir). */
  private readonly directories = new Set<string>();

  constructor(private readonly root: string) {}

  async put(key: string, body: string): Promise<void> {
    validateBlobKey(key);
    const file = this.fileOf(key);
    const directory = path.dirname(file);
    tempCounter += 1;
    const temp = path.join(directory, `.tmp-${path.basename(file)}-${tempPrefix}-${tempCounter}`);
    // Most puts write a new key: no read first. A key that exists is found by the link below (EEXIST).
    const handle = await this.createTemp(directory, temp);
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
        const winner = await readIfExists(file);
        if (winner !== undefined) return assertSameBody(key, winner, body);
      }
      throw error;
    } finally {
      await unlink(temp).catch(() => undefined);
    }
    await syncDirectory(directory);
  }

  /** Creates the temp file, making its directory when it is not known to exist. */
  private async createTemp(directory: string, temp: string) {
    if (!this.directories.has(directory)) {
      await mkdir(directory, { recursive: true });
      this.directories.add(directory);
    }
    try {
      return await open(temp, 'wx');
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') throw error;
      // The directory was removed behind this store's back: make it again.
      await mkdir(directory, { recursive: true });
      return open(temp, 'wx');
    }
  }

  async get(key: string): Promise<string | undefined> {
    validateBlobKey(key);
    const file = this.fileOf(key);
    // A miss is common (is this outcome stored yet?): a stat that returns nothing is much cheaper than a
    // failed open, which builds an error with a stack trace.
    if (statSync(file, { throwIfNoEntry: false }) === undefined) return undefined;
    return readIfExists(file);
  }

  async list(prefix: string): Promise<string[]> {
    validateBlobPrefix(prefix);
    // Walk only the directory the prefix's complete segments name, then filter by the partial rest.
    const slash = prefix.lastIndexOf('/');
    const baseKey = slash < 0 ? '' : prefix.slice(0, slash);
    const keys: string[] = [];
    const stack = [baseKey];
    while (stack.length > 0) {
      const directoryKey = stack.pop() ?? '';
      const entries = await readdir(path.join(this.root, ...splitKey(directoryKey)), { withFileTypes: true }).catch((error: unknown) => {
        if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR') return [];
        throw error;
      });
      for (const entry of entries) {
        if (entry.name.startsWith('.')) continue; // temp files of puts in progress
        const childKey = directoryKey === '' ? entry.name : `${directoryKey}/${entry.name}`;
        if (entry.isDirectory()) {
          if (childKey.startsWith(prefix) || prefix.startsWith(`${childKey}/`)) stack.push(childKey);
        } else if (entry.isFile() && childKey.startsWith(prefix)) {
          keys.push(childKey);
          if (keys.length > blobListMaxKeys) throw new Error(`blob list of prefix ${JSON.stringify(prefix)} has more than ${blobListMaxKeys} keys; use a narrower prefix`);
        }
      }
    }
    return keys.sort();
  }

  private fileOf(key: string): string {
    return path.join(this.root, ...splitKey(key));
  }
}

/** Temp file names: unique per process (random prefix) and per put (counter). */
const tempPrefix = `${process.pid}-${randomBytes(4).toString('hex')}`;
let tempCounter = 0;

/** Flushes a directory's entries (a new name) to disk; where a directory cannot be opened for that, nothing to do. */
async function syncDirectory(directory: string): Promise<void> {
  let handle;
  try {
    handle = await open(directory, 'r');
  } catch {
    return;
  }
  try {
    await handle.sync().catch(() => undefined); // some file systems refuse fsync on a directory (EINVAL)
  } finally {
    await handle.close();
  }
}

function splitKey(key: string): string[] {
  return key === '' ? [] : key.split('/');
}

function assertSameBody(key: string, existing: string, body: string): void {
  if (existing !== body) throw new BlobConflictError(key);
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    // EISDIR: the key names a "directory" of longer keys (`a/b` when `a/b/c` exists): no blob there.
    if (errnoCode(error) === 'ENOENT' || errnoCode(error) === 'ENOTDIR' || errnoCode(error) === 'EISDIR') return undefined;
    throw error;
  }
}

function errnoCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

/**
 * The one interface every source store implements (local directory, git-synced directory, S3 prefix).
 * Paths are POSIX paths relative to the store's root.
 */

/** What a file is, by its extension: `.yaml`/`.yml`/`.json` recipes, `.md` agents. */
export type StoreEntryKind = 'recipe' | 'agent';

/** One file a store offers. */
export interface StoreEntry {
  /** Path relative to the store root (POSIX separators). */
  path: string;
  kind: StoreEntryKind;
  /** Store version of the file: commit SHA, ETag/VersionId, or `mtime:<ISO time>`. */
  version: string;
}

/** A store's listing: its entries plus files it refused or could not read, worded for people. */
export interface StoreListing {
  entries: StoreEntry[];
  problems: string[];
}

/** A file's content with the version that was read. */
export interface StoreReadResult {
  content: string;
  version: string;
}

/** Options of a listing call. */
export interface StoreListOptions {
  /** Discovery call: bypass intervals (a git store fetches now). */
  refresh?: boolean;
}

/** A place sources come from. */
export interface SourceStore {
  /** Stable id, e.g. `dir:<absolute path>`, `git:<url>#<ref>`, `s3://bucket/prefix/`. */
  readonly id: string;
  /** Human description for listings and "searched" lists. */
  describe(): string;
  /** The folder holding `path`, as `recipe_dir` renders it (local absolute path or URL). */
  folderOf(path: string): string;
  /** Lists the store's files (not recursive). Throws when the store cannot be reached. */
  list(options?: StoreListOptions): Promise<StoreListing>;
  /** Reads one file. Throws (with a message naming the store and path) on refusal or failure. */
  read(path: string): Promise<StoreReadResult>;
}

/** Kind of a file by its name, or undefined when it is neither a recipe nor an agent file. */
export function entryKindOf(fileName: string): StoreEntryKind | undefined {
  const lower = fileName.toLowerCase();
  if (lower.endsWith('.yaml') || lower.endsWith('.yml') || lower.endsWith('.json')) return 'recipe';
  if (lower.endsWith('.md')) return 'agent';
  return undefined;
}

/** The file stem: `deploy.yaml` → `deploy` (a recipe's name). */
export function fileStem(path: string): string {
  const base = path.split('/').pop() ?? path;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/** Human size: 1536 → `1.5 KiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

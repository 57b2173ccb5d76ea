import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { gitCommandTimeoutMs, gitSyncIntervalMs } from '../contracts/limits/sources';
import { DirectoryStore, messageOf } from './directory-store';
import { withFileLock } from './file-lock';
import { type SourceStore, type StoreListing, type StoreListOptions, type StoreReadResult } from './source-store';

/** Configuration of a git-synced store. */
export interface GitStoreOptions {
  /** Repository URL (`https://…`, `git@…`, `file://…`). */
  url: string;
  /** Branch, tag or commit to follow. */
  ref: string;
  /** Folder inside the repository holding the sources (default: the repository root). */
  subfolder?: string;
  /** Folder under which checkouts are cached (one sub-folder per url+ref). */
  cacheDirectory: string;
  /** Minimum time between fetches, except for discovery calls. Default {@link gitSyncIntervalMs}. */
  syncIntervalMs?: number;
  /** Clock (injectable for tests). */
  now?: () => number;
}

/**
 * A directory kept in sync with a git repository, using the `git` command line. The checkout is a
 * shallow fetch of `ref` detached at FETCH_HEAD; the commit SHA is every entry's version. A failed fetch
 * throws, so the catalog keeps serving the last good listing marked stale and reports the error.
 */
export class GitStore implements SourceStore {
  readonly id: string;
  private readonly options: GitStoreOptions;
  private readonly checkout: string;
  private readonly directory: DirectoryStore;
  private sha: string | undefined;
  private lastSyncAt: number | undefined;

  constructor(options: GitStoreOptions) {
    this.options = options;
    const subfolder = (options.subfolder ?? '').replace(/^\/+|\/+$/g, '');
    this.id = `git:${options.url}#${options.ref}${subfolder ? `:${subfolder}` : ''}`;
    const key = createHash('sha256').update(`${options.url}\n${options.ref}`).digest('hex').slice(0, 16);
    this.checkout = join(options.cacheDirectory, key);
    this.directory = new DirectoryStore(subfolder ? join(this.checkout, subfolder) : this.checkout, {
      id: this.id,
      description: this.describe(),
      version: () => this.sha ?? 'unsynced',
    });
  }

  describe(): string {
    const sub = this.options.subfolder ? ` (${this.options.subfolder})` : '';
    return `git ${this.options.url} @ ${this.options.ref}${sub}`;
  }

  folderOf(path: string): string {
    return this.directory.folderOf(path);
  }

  /** The sync in progress, shared by overlapping callers. */
  private syncing: Promise<string> | undefined;

  /** The commit SHA of the checkout, once synced. */
  get commit(): string | undefined {
    return this.sha;
  }

  async list(options: StoreListOptions = {}): Promise<StoreListing> {
    const now = (this.options.now ?? Date.now)();
    const interval = this.options.syncIntervalMs ?? gitSyncIntervalMs;
    if (options.refresh || this.sha === undefined || this.lastSyncAt === undefined || now - this.lastSyncAt >= interval) {
      await this.sync();
    }
    return this.directory.list();
  }

  async read(path: string): Promise<StoreReadResult> {
    if (this.sha === undefined) await this.sync();
    return this.directory.read(path);
  }

  /**
   * Clones (first time) or fetches `ref`, and checks it out. Throws with git's message on failure. Calls
   * that overlap share one sync (parallel delegations plan at once), and a lock file in the cache folder
   * keeps workers that share it (one volume, several processes) from running git in the same checkout at once.
   */
  sync(): Promise<string> {
    this.syncing ??= withFileLock(`${this.checkout}.lock`, () => this.syncNow()).finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async syncNow(): Promise<string> {
    const started = (this.options.now ?? Date.now)();
    if (!(await isDirectory(join(this.checkout, '.git')))) {
      await mkdir(this.checkout, { recursive: true });
      await this.git(['init', '--quiet']);
      await this.git(['remote', 'add', 'origin', this.options.url]);
    }
    await this.git(['fetch', '--quiet', '--depth', '1', 'origin', this.options.ref]);
    await this.git(['checkout', '--quiet', '--force', '--detach', 'FETCH_HEAD']);
    await this.git(['clean', '--quiet', '-fdx']);
    this.sha = (await this.git(['rev-parse', 'HEAD'])).trim();
    this.lastSyncAt = started;
    return this.sha;
  }

  private git(args: string[]): Promise<string> {
    return new Promise((resolvePromise, reject) => {
      execFile(
        'git',
        args,
        {
          cwd: this.checkout,
          timeout: gitCommandTimeoutMs,
          maxBuffer: 4 * 1024 * 1024,
          // Never wait for a credential prompt: a store sync runs unattended.
          env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo' },
        },
        (error, stdout, stderr) => {
          if (error) {
            const detail = stderr.trim() || messageOf(error);
            reject(new Error(`${this.describe()}: git ${args[0] ?? ''} failed: ${detail}`));
          } else resolvePromise(stdout);
        },
      );
    });
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

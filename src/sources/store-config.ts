import { homedir, tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { z } from 'zod';
import { DirectoryStore } from './directory-store';
import { GitStore } from './git-store';
import { S3Store } from './s3-store';
import { type CatalogStore } from './source-catalog';

/** A configured store (ERRAND configuration, in search order). */
export const storeConfigSchema = z.discriminatedUnion(
  'type',
  [
    z.strictObject({ type: z.literal('directory'), path: z.string().min(1, { error: 'expected a folder path' }) }),
    z.strictObject({
      type: z.literal('git'),
      url: z.string().min(1, { error: 'expected a repository URL' }),
      ref: z.string().min(1).default('main'),
      subfolder: z.string().optional(),
      cacheDirectory: z.string().optional(),
      syncIntervalMs: z.number().int().positive().optional(),
    }),
    z.strictObject({
      type: z.literal('s3'),
      bucket: z.string().min(3, { error: 'expected an S3 bucket name' }),
      prefix: z.string().default(''),
      endpoint: z.url({ error: 'expected an http(s) URL' }).optional(),
      region: z.string().optional(),
      credentials: z.strictObject({ accessKeyId: z.string(), secretAccessKey: z.string(), sessionToken: z.string().optional() }).optional(),
      forcePathStyle: z.boolean().optional(),
    }),
  ],
  { error: 'expected a store with type directory, git or s3' },
);
/** A configured store. */
export type StoreConfig = z.input<typeof storeConfigSchema>;

/** Inputs of {@link createSearchStores}. */
export interface SearchStoresOptions {
  /** The session's working directory (project directories are found under it). */
  workingDirectory: string;
  /** Configured stores, in configured order (validated with {@link storeConfigSchema}). */
  configured?: readonly StoreConfig[];
  /** `ERRAND_RECIPE_PATH` value (`:`-separated folders), searched after the configured stores. */
  recipePath?: string;
  /** Home directory for the user-level folders (default: os.homedir(); injectable for tests). */
  homeDirectory?: string;
  /** Where git stores keep their checkouts (default: `<tmp>/errand-git-cache`). */
  gitCacheDirectory?: string;
}

/** Project folders under the working directory, in search order (SEMANTICS §1, store 2). */
export const projectSourceFolders = ['.goose/recipes', '.agents/recipes', '.goose/agents', '.claude/agents', '.agents/agents'] as const;
/** User-level folders under the home directory, in search order (SEMANTICS §1, store 4). */
export const userSourceFolders = ['.goose/recipes', '.agents/recipes', '.goose/agents', '.agents/agents', '.claude/agents'] as const;

/**
 * Builds the ordered stores of SEMANTICS §1 (session sub-recipes are not a store: the resolver puts them
 * first): the working directory itself (recipes only, non-recipes skipped silently), the project
 * folders, the configured stores, `ERRAND_RECIPE_PATH`, then the user-level folders.
 * Throws when a configured store is invalid, naming its position and the field.
 */
export function createSearchStores(options: SearchStoresOptions): CatalogStore[] {
  const work = resolve(options.workingDirectory);
  const home = options.homeDirectory ?? homedir();
  const stores: CatalogStore[] = [
    { store: new DirectoryStore(work, { kinds: ['recipe'], description: 'working directory' }), quietInvalid: true },
    ...projectSourceFolders.map((folder) => ({ store: new DirectoryStore(join(work, folder), { description: `project ${folder}`, agentFolder: isAgentFolder(folder) }) })),
  ];
  (options.configured ?? []).forEach((raw, index) => {
    const parsed = storeConfigSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path.map(String).join('.') ?? '';
      throw new Error(`source store ${index + 1} in configuration: ${field ? `${field}: ` : ''}${issue?.message ?? 'invalid'}`);
    }
    const config = parsed.data;
    if (config.type === 'directory') stores.push({ store: new DirectoryStore(resolve(work, config.path), { description: `directory ${config.path}` }) });
    else if (config.type === 'git') {
      stores.push({
        store: new GitStore({
          url: config.url,
          ref: config.ref,
          ...(config.subfolder ? { subfolder: config.subfolder } : {}),
          cacheDirectory: config.cacheDirectory ?? options.gitCacheDirectory ?? join(tmpdir(), 'errand-git-cache'),
          ...(config.syncIntervalMs ? { syncIntervalMs: config.syncIntervalMs } : {}),
        }),
      });
    } else {
      const { type: _type, ...s3 } = config;
      stores.push({ store: new S3Store(s3) });
    }
  });
  for (const folder of parseRecipePath(options.recipePath)) {
    stores.push({ store: new DirectoryStore(resolve(work, folder), { description: `ERRAND_RECIPE_PATH ${folder}` }) });
  }
  for (const folder of userSourceFolders) {
    stores.push({ store: new DirectoryStore(join(home, folder), { description: `user ~/${folder}`, agentFolder: isAgentFolder(folder) }) });
  }
  return stores;
}

/** Whether a project or user folder holds agents (`.claude/agents`, …): those are scanned recursively. */
function isAgentFolder(folder: string): boolean {
  return folder.endsWith('/agents');
}

/** Splits `ERRAND_RECIPE_PATH` (`:`-separated, `;` on Windows); empty parts are ignored. */
export function parseRecipePath(value: string | undefined): string[] {
  return (value ?? '').split(delimiter).map((part) => part.trim()).filter((part) => part !== '');
}

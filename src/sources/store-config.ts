import { homedir, tmpdir } from 'node:os';
import { basename, delimiter, isAbsolute, join, relative, resolve, sep } from 'node:path';
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

/** Inputs of the operator's stores ({@link createOperatorStores}). */
export interface OperatorStoresOptions {
  /** Configured stores, in configured order (validated with {@link storeConfigSchema}). */
  configured?: readonly StoreConfig[];
  /** `ERRAND_RECIPE_PATH` value (`:`-separated folders), searched after the configured stores. */
  recipePath?: string;
  /**
   * Where relative folders of directory stores and `ERRAND_RECIPE_PATH` start: the working root, never a
   * tenant's folder (a store a tenant could write into would not be the operator's).
   */
  baseDirectory: string;
  /** Where git stores keep their checkouts (default: `<tmp>/errand-git-cache`). */
  gitCacheDirectory?: string;
  /**
   * The working root of tenant folders (`ERRAND_WORKING_DIR`). A folder under it is one tenants can write:
   * it is reached from the root without following any link (src/tools/confined-dir.ts).
   */
  workingRoot?: string;
}

/** Inputs of {@link createSearchStores}. */
export interface SearchStoresOptions extends Omit<OperatorStoresOptions, 'baseDirectory'> {
  /** The session's working directory (project directories are found under it). */
  workingDirectory: string;
  /** Where relative configured folders start (default: the working directory). */
  baseDirectory?: string;
  /** Home directory for the user-level folders (default: os.homedir(); injectable for tests). */
  homeDirectory?: string;
}

/** Project folders under the working directory, in search order (SEMANTICS §1). */
export const projectSourceFolders = ['.goose/recipes', '.agents/recipes', '.goose/agents', '.claude/agents', '.agents/agents'] as const;
/** User-level folders under the home directory, in search order (SEMANTICS §1). */
export const userSourceFolders = ['.goose/recipes', '.agents/recipes', '.goose/agents', '.agents/agents', '.claude/agents'] as const;

/**
 * Builds the ordered stores of SEMANTICS §1 (session sub-recipes are not a store: the resolver puts them
 * first): the operator's stores (configured stores, then `ERRAND_RECIPE_PATH`), the project folders under
 * the working directory, then the user-level folders. The operator's stores come before the project
 * folders because a tenant or its model can write the latter: a repository's recipe must not replace
 * the operator's of the same name (the resolver reports the shadowing).
 * Throws when a configured store is invalid, naming its position and the field.
 */
export function createSearchStores(options: SearchStoresOptions): CatalogStore[] {
  return [
    ...createOperatorStores({ ...options, baseDirectory: options.baseDirectory ?? options.workingDirectory }),
    ...createProjectStores(options.workingDirectory, options.workingRoot),
    ...createUserStores(options.homeDirectory),
  ];
}

/**
 * The project stores of one working directory: the directory itself (recipes only, non-recipes skipped
 * silently) and the project folders. Labels, not paths, describe them: listings reach tenants.
 */
export function createProjectStores(workingDirectory: string, workingRoot?: string): CatalogStore[] {
  const work = resolve(workingDirectory);
  // A tenant writes its working directory: its stores are read without following links, from the working
  // root when the directory is under it (src/tools/confined-dir.ts).
  const confinedWithin = workingRoot !== undefined && within(resolve(workingRoot), work) ? resolve(workingRoot) : work;
  return [
    { store: new DirectoryStore(work, { kinds: ['recipe'], description: 'working directory', confinedWithin }), quietInvalid: true, group: 'project' },
    ...projectSourceFolders.map((folder) => ({ store: new DirectoryStore(join(work, folder), { description: `project ${folder}`, confinedWithin, agentFolder: isAgentFolder(folder) }), group: 'project' as const })),
  ];
}

/** The user-level folders under the home directory (the worker's user, not a tenant). */
export function createUserStores(homeDirectory: string = homedir()): CatalogStore[] {
  return userSourceFolders.map((folder) => ({ store: new DirectoryStore(join(homeDirectory, folder), { description: `user ~/${folder}`, agentFolder: isAgentFolder(folder) }), group: 'user' as const }));
}

/**
 * The operator's stores: configured stores in configured order, then the folders of `ERRAND_RECIPE_PATH`.
 * They do not depend on a working directory, so a worker builds them once and shares them (one git
 * checkout state, one S3 client). Directory stores are labelled by position and folder name, since their
 * full path is a server path that listings must not show.
 */
export function createOperatorStores(options: OperatorStoresOptions): CatalogStore[] {
  const base = resolve(options.baseDirectory);
  const root = options.workingRoot === undefined ? undefined : resolve(options.workingRoot);
  // An operator's folder under the working root is one tenants can write: read it without following links.
  const confined = (folder: string) => (root !== undefined && within(root, folder) ? { confinedWithin: root } : {});
  const stores: CatalogStore[] = [];
  (options.configured ?? []).forEach((raw, index) => {
    const parsed = storeConfigSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue?.path.map(String).join('.') ?? '';
      throw new Error(`source store ${index + 1} in configuration: ${field ? `${field}: ` : ''}${issue?.message ?? 'invalid'}`);
    }
    const config = parsed.data;
    if (config.type === 'directory') {
      const folder = resolve(base, config.path);
      stores.push({ store: new DirectoryStore(folder, { description: `configured store ${index + 1} (directory ${basename(folder)})`, ...confined(folder) }), group: 'operator' });
    } else if (config.type === 'git') {
      stores.push({
        store: new GitStore({
          url: config.url,
          ref: config.ref,
          ...(config.subfolder ? { subfolder: config.subfolder } : {}),
          cacheDirectory: config.cacheDirectory ?? options.gitCacheDirectory ?? join(tmpdir(), 'errand-git-cache'),
          ...(config.syncIntervalMs ? { syncIntervalMs: config.syncIntervalMs } : {}),
        }),
        group: 'operator',
      });
    } else {
      const { type: _type, ...s3 } = config;
      stores.push({ store: new S3Store(s3), group: 'operator' });
    }
  });
  parseRecipePath(options.recipePath).forEach((folder, index) => {
    const path = resolve(base, folder);
    stores.push({ store: new DirectoryStore(path, { description: `ERRAND_RECIPE_PATH folder ${index + 1} (${basename(path)})`, ...confined(path) }), group: 'operator' });
  });
  return stores;
}

/** Whether a project or user folder holds agents (`.claude/agents`, …): those are scanned recursively. */
function isAgentFolder(folder: string): boolean {
  return folder.endsWith('/agents');
}

/** Whether `candidate` is `folder` or below it (both absolute). */
function within(folder: string, candidate: string): boolean {
  const inside = relative(folder, candidate);
  return inside === '' || (inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside));
}

/** Splits `ERRAND_RECIPE_PATH` (`:`-separated, `;` on Windows); empty parts are ignored. */
export function parseRecipePath(value: string | undefined): string[] {
  return (value ?? '').split(delimiter).map((part) => part.trim()).filter((part) => part !== '');
}

import { createHash } from 'node:crypto';
import { sourceListingTtlMs } from '../contracts/limits/sources';
import { type AgentDefinition, type ModelAliasTable } from '../contracts/agent-definition';
import { requiredParameterKeys } from '../domain/recipe-parameters';
import { type RecipeDefinition } from '../contracts/recipe-schema';
import { readAgentText } from './agent-file';
import { messageOf } from './directory-store';
import { readRecipeText } from './recipe-file';
import { fileStem, type SourceStore, type StoreEntry } from './source-store';

/** A store in search order, with how to treat files that do not parse. */
export interface CatalogStore {
  store: SourceStore;
  /** Files that are not valid sources are skipped silently (the project directory itself). */
  quietInvalid?: boolean;
  /**
   * Who writes the store: the operator (configured stores, `ERRAND_RECIPE_PATH`), a tenant or its model
   * (project folders under a working directory), or the worker's user (user-level folders). Shadowing
   * across groups is reported with the group named.
   */
  group?: StoreGroup;
}

/** Who writes a store (see {@link CatalogStore.group}). */
export type StoreGroup = 'operator' | 'project' | 'user';

/** A source hidden by an earlier source of the same name. */
export interface ShadowedSource {
  source: CatalogSource;
  /** The source that wins. */
  by: CatalogSource;
}

/** One valid source found in a store. */
export interface CatalogSource {
  name: string;
  kind: 'recipe' | 'agent';
  description?: string;
  requiredParameters: string[];
  store: SourceStore;
  /** The group of the store (absent for stores given without one). */
  group?: StoreGroup;
  path: string;
  version: string;
  content: string;
  contentHash: string;
  definition: { type: 'recipe'; recipe: RecipeDefinition } | { type: 'agent'; agent: AgentDefinition };
  warnings: string[];
}

/** How a store answered the last listing. */
export interface StoreStatus {
  id: string;
  description: string;
  /** True when the listing shown is an older one because the store failed now. */
  stale: boolean;
  /** The failure, when the store failed (reported, never swallowed). */
  error?: string;
  /** Clock time of the listing shown. */
  listedAt?: number;
}

/** The merged listing: first name wins in store order. */
export interface CatalogListing {
  sources: CatalogSource[];
  /** Sources hidden by an earlier source of the same name, with the source that wins. */
  shadowed: ShadowedSource[];
  /** Files refused or invalid, worded for people. */
  problems: string[];
  stores: StoreStatus[];
}

interface StoreState {
  sources: CatalogSource[];
  problems: string[];
  listedAt: number;
  /** A file could not be read: the next lookup lists again instead of serving this listing for the TTL. */
  readFailed: boolean;
}

/** Options of a {@link SourceCatalog}. */
export interface SourceCatalogOptions {
  /** Model alias table for agent files (`sonnet` → a real model). */
  aliases: ModelAliasTable;
  /** Clock (injectable for tests). */
  now?: () => number;
  /** Listing cache lifetime per store. Default {@link sourceListingTtlMs}. */
  ttlMs?: number;
}

/**
 * Lists and caches the sources of an ordered set of stores. Each store's listing is cached for the TTL;
 * `refresh` (a discovery call) lists again. A store that fails keeps its last good listing, marked stale,
 * with the error in its status.
 */
export class SourceCatalog {
  /** Listings in progress, by store (and whether they refresh), shared by overlapping callers. */
  private readonly listing = new Map<string, Promise<StoreState | undefined>>();
  private readonly stores: CatalogStore[];
  private readonly options: SourceCatalogOptions;
  private readonly states = new Map<string, StoreState>();
  private readonly statuses = new Map<string, StoreStatus>();
  /**
   * Parses by store, then by `path\nversion`: a store's map is replaced at each listing by one that holds
   * only the entries listed then, so old versions and removed files are dropped.
   */
  private readonly parsed = new Map<string, Map<string, CatalogSource | { problem?: string }>>();

  constructor(stores: CatalogStore[], options: SourceCatalogOptions) {
    this.stores = stores;
    this.options = options;
  }

  /** The stores in search order. */
  get storeList(): readonly SourceStore[] {
    return this.stores.map((entry) => entry.store);
  }

  /** How many parsed files are kept (only those of the latest listings: tests check it stays bounded). */
  get cachedParses(): number {
    let count = 0;
    for (const parses of this.parsed.values()) count += parses.size;
    return count;
  }

  /** Lists all stores (from cache when fresh) and merges them, first name wins. */
  async list(options: { refresh?: boolean } = {}): Promise<CatalogListing> {
    const states = await Promise.all(this.stores.map((entry) => this.storeState(entry, options.refresh ?? false)));
    const sources: CatalogSource[] = [];
    const problems: string[] = [];
    for (const [index, state] of states.entries()) {
      const store = this.stores[index]?.store;
      if (!store) continue;
      const status = this.statuses.get(store.id);
      if (status?.error) problems.push(status.stale ? `${status.error} (showing the listing from before the failure)` : status.error);
      sources.push(...(state?.sources ?? []));
      problems.push(...(state?.problems ?? []));
    }
    const stores = this.stores.map(({ store }) => this.statuses.get(store.id) ?? { id: store.id, description: store.describe(), stale: false });
    return { ...firstNameWins(sources), problems, stores };
  }

  /**
   * One store's listing, from the cache while it is fresh. Overlapping calls for one store share one
   * listing (several delegations planned at once must not list, or sync a git checkout, side by side).
   */
  private storeState(entry: CatalogStore, refresh: boolean): Promise<StoreState | undefined> {
    const key = `${entry.store.id}\u0000${refresh ? 'refresh' : ''}`;
    let listing = this.listing.get(key);
    if (!listing) {
      listing = this.listStore(entry, refresh).finally(() => this.listing.delete(key));
      this.listing.set(key, listing);
    }
    return listing;
  }

  private async listStore(entry: CatalogStore, refresh: boolean): Promise<StoreState | undefined> {
    const { store } = entry;
    const now = (this.options.now ?? Date.now)();
    const cached = this.states.get(store.id);
    const ttl = this.options.ttlMs ?? sourceListingTtlMs;
    if (!refresh && cached && !cached.readFailed && now - cached.listedAt < ttl) return cached;
    try {
      const listing = await store.list({ refresh });
      const sources: CatalogSource[] = [];
      const problems = [...listing.problems];
      const known = this.parsed.get(store.id);
      const kept = new Map<string, CatalogSource | { problem?: string }>();
      let readFailed = false;
      for (const item of listing.entries) {
        const result = await this.parseEntry(entry, item, known, kept);
        if ('name' in result) sources.push(result);
        else {
          readFailed ||= 'readFailed' in result;
          if (result.problem && !entry.quietInvalid) problems.push(result.problem);
        }
      }
      this.parsed.set(store.id, kept);
      problems.push(...sameNameProblems(store, sources));
      const state = { sources, problems, listedAt: now, readFailed };
      this.states.set(store.id, state);
      this.statuses.set(store.id, { id: store.id, description: store.describe(), stale: false, listedAt: now });
      return state;
    } catch (error) {
      const message = messageOf(error);
      this.statuses.set(store.id, {
        id: store.id,
        description: store.describe(),
        stale: cached !== undefined,
        error: message,
        ...(cached ? { listedAt: cached.listedAt } : {}),
      });
      return cached;
    }
  }

  /**
   * Parses one listed file, reusing the parse of the same path and version. Local files carry an mtime
   * version, so a cached parse is reused only while the file is unchanged. Only what the content decides
   * is kept (a source, or a problem with the file's text); a read that failed (an S3 timeout, a file
   * swapped during a git checkout) is reported now and tried again at the next listing.
   */
  private async parseEntry(
    entry: CatalogStore,
    item: StoreEntry,
    known: ReadonlyMap<string, CatalogSource | { problem?: string }> | undefined,
    kept: Map<string, CatalogSource | { problem?: string }>,
  ): Promise<CatalogSource | { problem?: string } | { problem: string; readFailed: true }> {
    const key = `${item.path}\n${item.version}`;
    const cached = known?.get(key);
    if (cached) {
      kept.set(key, cached);
      return cached;
    }
    let content: string;
    let version: string;
    try {
      ({ content, version } = await entry.store.read(item.path));
    } catch (error) {
      return { problem: messageOf(error), readFailed: true };
    }
    const parsed = parseSource(entry.store, item.path, item.kind, content, version, this.options.aliases);
    const result = 'name' in parsed && entry.group ? { ...parsed, group: entry.group } : parsed;
    kept.set(key, result);
    return result;
  }
}

/** Merges sources in search order: the first of a name wins, later ones are shadowed by it. */
export function firstNameWins(ordered: readonly CatalogSource[]): { sources: CatalogSource[]; shadowed: ShadowedSource[] } {
  const winners = new Map<string, CatalogSource>();
  const shadowed: ShadowedSource[] = [];
  for (const source of ordered) {
    const by = winners.get(source.name);
    if (by) shadowed.push({ source, by });
    else winners.set(source.name, source);
  }
  return { sources: [...winners.values()], shadowed };
}

/**
 * Two files of one store with one name (agents are named by their `name`, in any subfolder of an agent
 * folder): the first found is used and each other one is reported, for the author to rename. An earlier
 * store hiding a later one is the search order at work, not reported here.
 */
function sameNameProblems(store: SourceStore, sources: readonly CatalogSource[]): string[] {
  const first = new Map<string, CatalogSource>();
  const problems: string[] = [];
  for (const source of sources) {
    const earlier = first.get(source.name);
    if (earlier === undefined) first.set(source.name, source);
    else problems.push(`${store.describe()}: ${source.path}: ${source.kind} name "${source.name}" is also the name of ${earlier.path}, which is used (the first found); rename one of them`);
  }
  return problems;
}

/** Parses one file into a catalog source, or a problem naming the file. */
export function parseSource(
  store: SourceStore,
  path: string,
  kind: 'recipe' | 'agent',
  content: string,
  version: string,
  aliases: ModelAliasTable,
): CatalogSource | { problem: string } {
  const file = `${store.describe()}: ${path}`;
  const contentHash = `sha256:${createHash('sha256').update(content).digest('hex')}`;
  if (kind === 'agent') {
    const result = readAgentText(content, file, aliases);
    if (!result.agent) return { problem: result.errors.join('; ') };
    return {
      name: result.agent.name,
      kind,
      ...(result.agent.description ? { description: result.agent.description } : {}),
      requiredParameters: [],
      store,
      path,
      version,
      content,
      contentHash,
      definition: { type: 'agent', agent: result.agent },
      warnings: result.warnings,
    };
  }
  const result = readRecipeText(content, file);
  if (!result.recipe) return { problem: result.errors.join('; ') };
  return {
    name: fileStem(path),
    kind,
    description: result.recipe.description,
    requiredParameters: requiredParameterKeys(result.recipe.parameters ?? []),
    store,
    path,
    version,
    content,
    contentHash,
    definition: { type: 'recipe', recipe: result.recipe },
    warnings: result.warnings,
  };
}

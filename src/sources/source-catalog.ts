import { createHash } from 'node:crypto';
import { sourceListingTtlMs } from '../contracts/limits';
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
}

/** One valid source found in a store. */
export interface CatalogSource {
  name: string;
  kind: 'recipe' | 'agent';
  description?: string;
  requiredParameters: string[];
  store: SourceStore;
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
  /** Sources hidden by an earlier source of the same name. */
  shadowed: CatalogSource[];
  /** Files refused or invalid, worded for people. */
  problems: string[];
  stores: StoreStatus[];
}

interface StoreState {
  sources: CatalogSource[];
  problems: string[];
  listedAt: number;
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
  private readonly parsed = new Map<string, CatalogSource | { problem?: string }>();

  constructor(stores: CatalogStore[], options: SourceCatalogOptions) {
    this.stores = stores;
    this.options = options;
  }

  /** The stores in search order. */
  get storeList(): readonly SourceStore[] {
    return this.stores.map((entry) => entry.store);
  }

  /** Lists all stores (from cache when fresh) and merges them, first name wins. */
  async list(options: { refresh?: boolean } = {}): Promise<CatalogListing> {
    const states = await Promise.all(this.stores.map((entry) => this.storeState(entry, options.refresh ?? false)));
    const sources: CatalogSource[] = [];
    const shadowed: CatalogSource[] = [];
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const [index, state] of states.entries()) {
      const store = this.stores[index]?.store;
      if (!store) continue;
      const status = this.statuses.get(store.id);
      if (status?.error) problems.push(status.stale ? `${status.error} (showing the listing from before the failure)` : status.error);
      for (const source of state?.sources ?? []) {
        if (seen.has(source.name)) shadowed.push(source);
        else {
          seen.add(source.name);
          sources.push(source);
        }
      }
      problems.push(...(state?.problems ?? []));
    }
    const stores = this.stores.map(({ store }) => this.statuses.get(store.id) ?? { id: store.id, description: store.describe(), stale: false });
    return { sources, shadowed, problems, stores };
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
    if (!refresh && cached && now - cached.listedAt < ttl) return cached;
    try {
      const listing = await store.list({ refresh });
      const sources: CatalogSource[] = [];
      const problems = [...listing.problems];
      for (const item of listing.entries) {
        const result = await this.parseEntry(store, item);
        if ('name' in result) sources.push(result);
        else if (result.problem && !entry.quietInvalid) problems.push(result.problem);
      }
      problems.push(...sameNameProblems(store, sources));
      const state = { sources, problems, listedAt: now };
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

  private async parseEntry(store: SourceStore, item: StoreEntry): Promise<CatalogSource | { problem?: string }> {
    const key = `${store.id}\n${item.path}\n${item.version}`;
    const known = this.parsed.get(key);
    // Local files carry an mtime version, so a cached parse is reused only while the file is unchanged.
    if (known) return known;
    let result: CatalogSource | { problem?: string };
    try {
      const { content, version } = await store.read(item.path);
      result = parseSource(store, item.path, item.kind, content, version, this.options.aliases);
    } catch (error) {
      result = { problem: messageOf(error) };
    }
    this.parsed.set(key, result);
    return result;
  }
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

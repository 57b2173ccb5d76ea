import { isAbsolute, posix, relative } from 'node:path';
import { type SourceSnapshot } from '../contracts/source';
import { type ModelAliasTable } from '../contracts/agent-definition';
import { formatSourceListing, formatSourceNotFound, type BackgroundTaskSummary, type SourceListingItem } from '../domain/load-texts';
import { suggestNames } from '../domain/name-suggestions';
import { requiredParameterKeys, templateValuesOf } from '../domain/recipe-parameters';
import { type SubRecipe } from '../contracts/recipe-schema';
import { DirectoryStore, messageOf } from './directory-store';
import { redactServerPaths } from '../domain/redact-paths';
import { firstNameWins, parseSource, SourceCatalog, type CatalogListing, type CatalogSource, type CatalogStore, type StoreStatus } from './source-catalog';
import { type SourceStore } from './source-store';
import { type SkillPlace } from './skill-sources';
import { renderTemplate } from './template-engine';

/** Options of a {@link SourceResolver}. */
export interface SourceResolverOptions {
  /** Stores in search order (see createSearchStores), listed by a catalog of this resolver's own. */
  stores?: CatalogStore[];
  /**
   * Catalogs in search order, searched after `stores`' catalog: a worker shares the catalog of its
   * operator's and user-level stores between the resolvers of every working directory (shared-sources.ts).
   */
  catalogs?: readonly SourceCatalog[];
  aliases: ModelAliasTable;
  /** Where an agent's `skills` are looked for, in search order (skill-sources.ts); none when absent. */
  skillPlaces?: readonly SkillPlace[];
  now?: () => number;
  ttlMs?: number;
}

/** The session a lookup happens in: its recipe (for `sub_recipes`) and the values it was rendered with. */
export interface SessionContext {
  sessionRecipe?: SourceSnapshot;
  /** Parameter values of the session recipe (used to render templated sub-recipe `values`). */
  sessionValues?: Readonly<Record<string, string>>;
}

/** What `load()` lists: sources in order plus store health. */
export interface SourceListingResult {
  items: SourceListingItem[];
  /** Problems worded for people: failed stores (stale or not), refused or invalid files, bad sub-recipes. */
  problems: string[];
  /** Sources hidden by an earlier one of the same name, worded for people (which one wins, and why). */
  shadowed: string[];
  stores: StoreStatus[];
  /** Places searched, for the "nothing found" answer. */
  searched: string[];
}

/** Result of resolving a name. */
export type ResolveResult =
  | { ok: true; snapshot: SourceSnapshot; warnings: string[]; shadowing?: string }
  | { ok: false; reason: 'not_found'; message: string; suggestions: string[] }
  | { ok: false; reason: 'invalid'; message: string };

/**
 * Resolves source names to JSON snapshots (SEMANTICS §1). Search order: the session recipe's
 * `sub_recipes`, then the stores in order; the first name found wins.
 */
export class SourceResolver {
  private readonly catalogs: readonly SourceCatalog[];
  private readonly options: SourceResolverOptions;

  constructor(options: SourceResolverOptions) {
    this.options = options;
    const own = options.stores
      ? [new SourceCatalog(options.stores, { aliases: options.aliases, ...(options.now ? { now: options.now } : {}), ...(options.ttlMs ? { ttlMs: options.ttlMs } : {}) })]
      : [];
    this.catalogs = [...own, ...(options.catalogs ?? [])];
  }

  /** The stores in search order. */
  get storeList(): readonly SourceStore[] {
    return this.catalogs.flatMap((catalog) => catalog.storeList);
  }

  /** Where an agent's `skills` are looked for, in search order. */
  get skillPlaces(): readonly SkillPlace[] {
    return this.options.skillPlaces ?? [];
  }

  /** Every catalog listed (from cache when fresh) and merged: the first source of a name wins. */
  private async merged(refresh: boolean): Promise<CatalogListing> {
    const listings = await Promise.all(this.catalogs.map((catalog) => catalog.list({ refresh })));
    const merged = firstNameWins(listings.flatMap((listing) => listing.sources));
    return {
      ...merged,
      // Shadowing inside one catalog is found there; across catalogs, here (each counted once).
      shadowed: [...listings.flatMap((listing) => listing.shadowed), ...merged.shadowed],
      problems: listings.flatMap((listing) => listing.problems),
      stores: listings.flatMap((listing) => listing.stores),
    };
  }

  /** Lists loadable sources. `refresh` (a discovery call) bypasses the listing cache. */
  async list(options: SessionContext & { refresh?: boolean } = {}): Promise<SourceListingResult> {
    const listing = await this.merged(options.refresh ?? false);
    const items: SourceListingItem[] = [];
    const problems: string[] = [];
    const names = new Set<string>();
    for (const declared of subRecipesOf(options.sessionRecipe)) {
      const result = await this.resolveSubRecipe(options, declared);
      names.add(declared.name);
      if (!result.ok) {
        problems.push(result.message);
        items.push({ name: declared.name, kind: 'subrecipe', ...(declared.description ? { description: declared.description } : {}), requiredParameters: [] });
        continue;
      }
      const snapshot = result.snapshot;
      const description = declared.description ?? (snapshot.definition.type === 'recipe' ? snapshot.definition.recipe.description : undefined);
      const open = snapshot.parameters.filter((parameter) => snapshot.fixedValues[parameter.key] === undefined);
      items.push({ name: declared.name, kind: 'subrecipe', ...(description ? { description } : {}), requiredParameters: requiredParameterKeys(open) });
    }
    for (const source of listing.sources) {
      if (names.has(source.name)) continue;
      items.push({ name: source.name, kind: source.kind, ...(source.description ? { description: source.description } : {}), requiredParameters: source.requiredParameters });
    }
    const searched = [
      ...(options.sessionRecipe ? [`sub_recipes of the session recipe ${options.sessionRecipe.name}`] : []),
      ...this.storeList.map((store) => redactServerPaths(store.describe())),
    ];
    const shadowed = [
      ...listing.sources.filter((source) => names.has(source.name)).map((source) => shadowingText(source, { name: source.name, place: `the sub_recipes of ${options.sessionRecipe?.name ?? 'the session recipe'}` })),
      ...listing.shadowed.filter(({ by }) => !names.has(by.name)).map(({ source, by }) => shadowingText(source, by)),
    ];
    return {
      items,
      problems: [...problems, ...listing.problems].map(redactServerPaths),
      shadowed,
      stores: listing.stores.map((store) => ({ ...store, id: publicStoreId(store.id, store.description), description: redactServerPaths(store.description), ...(store.error ? { error: redactServerPaths(store.error) } : {}) })),
      searched,
    };
  }

  /** The `load()` listing text, with the session's background tasks. */
  async listingText(options: SessionContext & { tasks?: readonly BackgroundTaskSummary[] } = {}): Promise<string> {
    const listing = await this.list({ ...options, refresh: true });
    return formatSourceListing({ sources: listing.items, tasks: options.tasks ?? [], searched: listing.searched, problems: listing.problems, shadowed: listing.shadowed });
  }

  /** Resolves a name to a snapshot, or says it is unknown (with suggestions) or invalid. */
  async resolve(name: string, options: SessionContext = {}): Promise<ResolveResult> {
    const declared = subRecipesOf(options.sessionRecipe).find((subRecipe) => subRecipe.name === name);
    if (declared) return this.resolveSubRecipe(options, declared);
    const listing = await this.merged(false);
    const found = listing.sources.find((source) => source.name === name);
    if (found) {
      const hidden = listing.shadowed.filter((entry) => entry.by === found).map(({ source }) => shadowingText(source, found));
      const shadowing = hidden.length > 0 ? hidden.join('\n') : undefined;
      return { ok: true, snapshot: snapshotOf(found, found.kind), warnings: [...found.warnings, ...hidden], ...(shadowing ? { shadowing } : {}) };
    }
    const known = [...subRecipesOf(options.sessionRecipe).map((subRecipe) => subRecipe.name), ...listing.sources.map((source) => source.name)];
    const suggestions = suggestNames(name, known);
    // A file of that name that cannot be used (a template error, a schema error) says why, without the
    // store's description (which can name a server folder).
    const why = listing.problems.flatMap((problem) => {
      const at = problem.search(new RegExp(`(^|[/ ])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(ya?ml|json|md): `));
      return at < 0 ? [] : [problem.slice(at).trimStart().replace(/^\//, '')];
    });
    const message = formatSourceNotFound(name, suggestions) + (why.length > 0 ? `\nA file of that name cannot be used:\n- ${why.join('\n- ')}` : '');
    return { ok: false, reason: 'not_found', message, suggestions };
  }

  private async resolveSubRecipe(session: SessionContext, declared: SubRecipe): Promise<ResolveResult> {
    const parent = session.sessionRecipe;
    if (!parent) return { ok: false, reason: 'invalid', message: `sub-recipe ${declared.name}: no session recipe` };
    const where = `${parent.store.description}: ${parent.path}: sub_recipes "${declared.name}"`;
    const store = this.storeFor(parent);
    if (!store) return { ok: false, reason: 'invalid', message: `${where}: the store ${parent.store.id} that holds the session recipe is not configured here` };
    const path = subRecipePath(store, parent.path, declared.path);
    if (!path.ok) return { ok: false, reason: 'invalid', message: `${where}: path ${declared.path}: ${path.error}` };
    try {
      const { content, version } = await store.read(path.path);
      const parsed = parseSource(store, path.path, 'recipe', content, version, this.options.aliases);
      if (!('name' in parsed)) return { ok: false, reason: 'invalid', message: `${where}: ${parsed.problem}` };
      const snapshot = snapshotOf(parsed, 'subrecipe');
      snapshot.name = declared.name;
      // Values may reference the parent's parameters (`target: "{{ target }}"`): goose renders the whole
      // parent file, so they are rendered with the values the session recipe ran with.
      const context = templateValuesOf(parent.parameters, { ...(session.sessionValues ?? {}), recipe_dir: parent.recipeDir });
      for (const [key, raw] of Object.entries(declared.values ?? {})) {
        const value = renderTemplate(raw, context, `${parent.path}: sub_recipes "${declared.name}" values.${key}`);
        if (!value.ok) return { ok: false, reason: 'invalid', message: `${value.error} (the session recipe's parameter values are needed to render it)` };
        snapshot.fixedValues[key] = value.text;
      }
      snapshot.subRecipe = {
        parent: parent.name,
        ...(declared.description ? { description: declared.description } : {}),
        sequentialWhenRepeated: declared.sequential_when_repeated ?? false,
      };
      const undeclared = Object.keys(snapshot.fixedValues).filter((key) => !snapshot.parameters.some((parameter) => parameter.key === key));
      if (undeclared.length > 0) {
        return { ok: false, reason: 'invalid', message: `${where}: values ${undeclared.join(', ')} are not parameters of ${path.path}; valid: ${snapshot.parameters.map((parameter) => parameter.key).join(', ') || '(none)'}` };
      }
      return { ok: true, snapshot, warnings: parsed.warnings };
    } catch (error) {
      return { ok: false, reason: 'invalid', message: `${where}: ${redactServerPaths(messageOf(error))}` };
    }
  }

  private storeFor(snapshot: SourceSnapshot): SourceStore | undefined {
    const known = this.storeList.find((store) => store.id === snapshot.store.id);
    if (known) return known;
    // A session recipe started from a file outside every store is snapshotted with a `dir:` store id.
    if (snapshot.store.id.startsWith('dir:')) return new DirectoryStore(snapshot.store.id.slice(4), { description: snapshot.store.description });
    return undefined;
  }
}

/**
 * Says which source of a name wins over which, by store label (never a server path): in the listing, to
 * the model that loads the name, and in API answers. A project folder hidden by an operator's store is
 * named as such, since that is the case a repository's file tried to replace the operator's.
 */
export function shadowingText(hidden: CatalogSource, by: CatalogSource | { name: string; place: string }): string {
  const where = `${hidden.store.describe()}: ${hidden.path} ("${hidden.name}")`;
  if ('place' in by) return redactServerPaths(`${where} is hidden by the sub-recipe of the same name in ${by.place}`);
  const why = hidden.group === 'project' && by.group === 'operator'
    ? "the operator's stores win over project folders"
    : hidden.group === 'user' && by.group === 'project' ? 'project folders win over user-level folders' : 'the first store in search order wins';
  return redactServerPaths(`${where} is hidden by ${by.store.describe()}: ${by.path} — ${why}`);
}

/** A store id fit for an answer: a local folder's id holds its server path, so its label stands in. */
export function publicStoreId(id: string, description: string): string {
  return id.startsWith('dir:') ? `dir:${redactServerPaths(description)}` : redactServerPaths(id);
}

function subRecipesOf(snapshot: SourceSnapshot | undefined): SubRecipe[] {
  if (!snapshot || snapshot.definition.type !== 'recipe') return [];
  return snapshot.definition.recipe.sub_recipes ?? [];
}

/**
 * A sub-recipe path, resolved relative to the parent recipe's folder inside the same store. goose writes
 * `{{ recipe_dir }}/sub.yaml` as well as `./sub.yaml`; both mean the parent's folder.
 */
export function subRecipePath(store: SourceStore, parentPath: string, declaredPath: string): { ok: true; path: string } | { ok: false; error: string } {
  const rendered = renderTemplate(declaredPath, { recipe_dir: '.' }, parentPath);
  if (!rendered.ok) return { ok: false, error: rendered.error };
  let target = rendered.text;
  if (isAbsolute(target)) {
    if (!(store instanceof DirectoryStore)) return { ok: false, error: 'absolute paths are only allowed in local directory stores' };
    const inside = relative(store.root, target);
    if (inside.startsWith('..') || isAbsolute(inside)) return { ok: false, error: `is outside the store (${store.root})` };
    target = inside.split('\\').join('/');
  } else {
    target = posix.join(posix.dirname(parentPath), target);
  }
  const normalized = posix.normalize(target);
  if (normalized === '..' || normalized.startsWith('../')) return { ok: false, error: `leaves the store ${store.describe()}` };
  return { ok: true, path: normalized };
}

/** Builds the JSON snapshot of a catalog source. */
export function snapshotOf(source: CatalogSource, kind: SourceSnapshot['kind']): SourceSnapshot {
  return {
    kind,
    name: source.name,
    store: { id: source.store.id, description: source.store.describe() },
    path: source.path,
    recipeDir: source.store.folderOf(source.path),
    version: source.version,
    contentHash: source.contentHash,
    content: source.content,
    definition: source.definition,
    parameters: source.definition.type === 'recipe' ? [...(source.definition.recipe.parameters ?? [])] : [],
    fixedValues: {},
  };
}

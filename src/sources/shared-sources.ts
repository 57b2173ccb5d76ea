import { maxCachedSourceDirectories } from '../contracts/limits/sources';
import { type ModelAliasTable } from '../contracts/agent-definition';
import { SourceCatalog } from './source-catalog';
import { SourceResolver } from './source-resolver';
import { createOperatorStores, createProjectStores, createUserStores, type StoreConfig } from './store-config';
import { operatorSkillPlace, projectSkillPlace, userSkillPlace, type SkillPlace } from './skill-sources';
import { operatorWorkflowPlace, projectWorkflowPlace, userWorkflowPlace, type WorkflowPlace } from './workflow-sources';

/** Options of {@link SharedSources}. */
export interface SharedSourcesOptions {
  /** Configured stores (`ERRAND_STORES` / the configuration file), in configured order. */
  configured?: readonly StoreConfig[];
  /** `ERRAND_RECIPE_PATH`. */
  recipePath?: string;
  /** The working root: where relative configured folders start. */
  workingRoot: string;
  /** Where git stores keep their checkouts. */
  gitCacheDirectory?: string;
  /** Home directory of the user-level folders (default: the process's). */
  homeDirectory?: string;
  aliases: ModelAliasTable;
  /**
   * Whether project folders under a working directory are searched. False where the working directories
   * are not on this machine's disk (the API in a Lambda): only the shared stores are searched there.
   */
  projectFolders?: () => boolean;
  /** Working directories whose resolvers are kept (default {@link maxCachedSourceDirectories}). */
  maxDirectories?: number;
}

/**
 * The sources of one worker (or API process): the operator's stores and the user-level folders are built
 * once and listed by two shared catalogs, so every working directory uses the same git checkout state,
 * S3 client and parse cache (one fetch, not one per directory). Only the project folders are per working
 * directory; their resolvers live in a least-recently-used map bounded by `maxDirectories`, since working
 * directories come and go (a worktree per delegation).
 */
export class SharedSources {
  private readonly operator: SourceCatalog;
  private readonly user: SourceCatalog;
  private readonly options: SharedSourcesOptions;
  /** Map order is use order: the first key is the least recently used. */
  private readonly resolvers = new Map<string, SourceResolver>();
  private shared: SourceResolver | undefined;

  constructor(options: SharedSourcesOptions) {
    this.options = options;
    const catalogOptions = { aliases: options.aliases };
    this.operator = new SourceCatalog(
      createOperatorStores({
        baseDirectory: options.workingRoot,
        workingRoot: options.workingRoot,
        ...(options.configured ? { configured: options.configured } : {}),
        ...(options.recipePath ? { recipePath: options.recipePath } : {}),
        ...(options.gitCacheDirectory ? { gitCacheDirectory: options.gitCacheDirectory } : {}),
      }),
      catalogOptions,
    );
    this.user = new SourceCatalog(createUserStores(options.homeDirectory), catalogOptions);
  }

  /**
   * The resolver of a working directory: the operator's stores, then the directory's project folders,
   * then the user-level folders (SEMANTICS §1).
   */
  resolverFor(workingDirectory: string): SourceResolver {
    if (this.options.projectFolders && !this.options.projectFolders()) {
      this.shared ??= new SourceResolver({ catalogs: [this.operator, this.user], aliases: this.options.aliases, skillPlaces: [...this.operatorSkills(), this.userSkills()] });
      return this.shared;
    }
    let resolver = this.resolvers.get(workingDirectory);
    if (resolver) {
      this.resolvers.delete(workingDirectory);
    } else {
      const project = new SourceCatalog(createProjectStores(workingDirectory, this.options.workingRoot), { aliases: this.options.aliases });
      resolver = new SourceResolver({
        catalogs: [this.operator, project, this.user],
        aliases: this.options.aliases,
        skillPlaces: [...this.operatorSkills(), projectSkillPlace(workingDirectory, this.options.workingRoot), this.userSkills()],
      });
    }
    this.resolvers.set(workingDirectory, resolver);
    const limit = this.options.maxDirectories ?? maxCachedSourceDirectories;
    while (this.resolvers.size > limit) {
      const oldest = this.resolvers.keys().next().value;
      if (oldest === undefined) break;
      this.resolvers.delete(oldest);
    }
    return resolver;
  }

  /**
   * Where workflow scripts of a working directory are found (SEMANTICS §7): `.claude/workflows` of the
   * operator's stores, then of the project (where project folders are searched), then of the user.
   */
  workflowPlacesFor(workingDirectory: string): WorkflowPlace[] {
    const project = this.options.projectFolders && !this.options.projectFolders() ? [] : [projectWorkflowPlace(workingDirectory, this.options.workingRoot)];
    return [...this.operator.storeList.map(operatorWorkflowPlace), ...project, userWorkflowPlace(this.options.homeDirectory)];
  }

  /** Skills in the operator's stores (`.claude/skills/<name>/SKILL.md` in each, in store order). */
  private operatorSkills(): SkillPlace[] {
    return this.operator.storeList.map(operatorSkillPlace);
  }

  /** Skills of the worker's user (`~/.claude/skills`). */
  private userSkills(): SkillPlace {
    return userSkillPlace(this.options.homeDirectory);
  }

  /** How many working directories have a resolver now (bounded by the limit). */
  get cachedDirectories(): number {
    return this.resolvers.size;
  }
}

/**
 * The settings {@link createSharedSources} reads: the configured stores and the working root (the fields of
 * the same names in errand's configuration, src/settings/config.ts).
 */
export interface SharedSourcesSettings {
  workingDir: string;
  sources: { stores: readonly StoreConfig[]; recipePath: string | undefined; gitCacheDir: string; modelAliases: Record<string, string> };
}

/**
 * The {@link SharedSources} of a worker or an API process, from configuration. The API passes
 * `projectFolders` (whether the working root is on its disk); a worker always has its disk.
 */
export function createSharedSources(config: SharedSourcesSettings, homeDirectory?: string, projectFolders?: () => boolean): SharedSources {
  return new SharedSources({
    configured: config.sources.stores,
    ...(config.sources.recipePath ? { recipePath: config.sources.recipePath } : {}),
    workingRoot: config.workingDir,
    gitCacheDirectory: config.sources.gitCacheDir,
    ...(homeDirectory ? { homeDirectory } : {}),
    aliases: config.sources.modelAliases,
    ...(projectFolders ? { projectFolders } : {}),
  });
}

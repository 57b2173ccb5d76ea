import { createBlobStore } from '../activities/blob-store-factory';
import { loadConfig, type ErrandConfig } from '../config';
import { SourceResolver } from '../sources/source-resolver';
import { createSearchStores } from '../sources/store-config';
import { loadApiConfig, type ApiConfig, type LoadApiConfigOptions } from './api-config';
import type { ApiDependencies, SourceLookup } from './api-dependencies';
import { DelegationService } from './delegation-service';
import { lazyTemporalClient, type TemporalClientProvider } from './temporal-client-provider';
import { apiPlanner } from './plan-api-delegation';
import { SessionService } from './session-service';
import { tenantWorkingDir } from './tenant-working-dir';
import { TemporalHttpStarter } from './temporal-http-start';
import { temporalHttpHeaders } from '../temporal-http-url';

/**
 * Wires the API from configuration: one lazily connected Temporal client per process, the source
 * resolver over the working root (the operator's project folders and configured stores), the planner
 * shared with the `delegate` tool, and each tenant's working directory (`<working root>/<tenant>`).
 */

/** Options of {@link createApiDependencies}. */
export interface ApiDependencyOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  config?: ErrandConfig;
  api?: ApiConfig;
  apiOptions?: LoadApiConfigOptions;
  temporal?: TemporalClientProvider;
  sources?: SourceLookup;
  /** Shown in each workflow's static details. */
  startedBy?: string;
}

/**
 * The source resolver the API uses: the same search stores as the worker (configuration) under the API's
 * working directory (`ERRAND_WORKING_DIR`). Built here rather than taken from src/worker.ts so the API (and its Lambda bundle)
 * does not load the Temporal worker runtime.
 */
export function createApiSourceLookup(config: ErrandConfig, homeDirectory?: string): SourceResolver {
  return new SourceResolver({
    stores: createSearchStores({
      workingDirectory: config.workingDir,
      configured: config.sources.stores,
      ...(config.sources.recipePath ? { recipePath: config.sources.recipePath } : {}),
      gitCacheDirectory: config.sources.gitCacheDir,
      ...(homeDirectory ? { homeDirectory } : {}),
    }),
    aliases: config.sources.modelAliases,
  });
}

/** Builds the API's dependencies from the environment (or the given parts). */
export function createApiDependencies(options: ApiDependencyOptions = {}): ApiDependencies & { temporal: TemporalClientProvider } {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const config = options.config ?? loadConfig(env, cwd);
  const api = options.api ?? loadApiConfig(env, cwd, options.apiOptions);
  const temporal = options.temporal ?? lazyTemporalClient({ connection: config.temporal.connection, namespace: config.temporal.namespace });
  // Long messages go by reference through the workers' blob store (in a deployment, its inbound/ prefix).
  const blobs = createBlobStore(config);
  // With Temporal's HTTP API known, plain starts go through it: one HTTP/1.1 request instead of a gRPC call (decision 0019).
  const { httpUrl } = config.temporal;
  const httpStarter = httpUrl === undefined
    ? undefined
    : new TemporalHttpStarter({ baseUrl: httpUrl, namespace: config.temporal.namespace, headers: temporalHttpHeaders(config.temporal.connection) });
  const delegations = new DelegationService({
    temporal,
    blobs,
    ...(httpStarter ? { httpStarter } : {}),
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    startedBy: options.startedBy ?? 'errand HTTP API',
  });
  const resolver = createApiSourceLookup(config);
  const workingDirFor = (tenant: string) => tenantWorkingDir(config.workingDir, api.auth, tenant);
  const planner = apiPlanner(config, resolver);
  return {
    config,
    api,
    delegations,
    temporal,
    sources: options.sources ?? resolver,
    plan: (request, caller) => planner(request, caller, workingDirFor(caller.tenant)),
    sessions: new SessionService(temporal, config, workingDirFor, blobs, httpStarter),
  };
}

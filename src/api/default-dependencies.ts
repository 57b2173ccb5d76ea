import { loadConfig, type ErrandConfig } from '../config';
import { createResolverCache } from '../worker';
import { loadApiConfig, type ApiConfig, type LoadApiConfigOptions } from './api-config';
import type { ApiDependencies, SourceLookup } from './api-dependencies';
import { DelegationService } from './delegation-service';
import { lazyTemporalClient, type TemporalClientProvider } from './temporal-client-provider';
import { temporaryPlanDelegation } from './temporary-plan-delegation';

/**
 * Wires the API from configuration: one lazily connected Temporal client per process, the source
 * resolver over the API's working directory, and the planner. The one place to change when the real
 * planner (`src/delegation/plan-delegation.ts`) lands.
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

/** The source resolver the API uses: the worker's search stores (configuration) under the API's working directory. */
export function createApiSourceLookup(config: ErrandConfig, api: ApiConfig): SourceLookup {
  return createResolverCache(config)(api.workingDir);
}

/** Builds the API's dependencies from the environment (or the given parts). */
export function createApiDependencies(options: ApiDependencyOptions = {}): ApiDependencies & { temporal: TemporalClientProvider } {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const config = options.config ?? loadConfig(env, cwd);
  const api = options.api ?? loadApiConfig(env, cwd, options.apiOptions);
  const temporal = options.temporal ?? lazyTemporalClient({ address: config.temporal.address, namespace: config.temporal.namespace });
  const delegations = new DelegationService({
    temporal,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    startedBy: options.startedBy ?? 'errand HTTP API',
  });
  return {
    config,
    api,
    delegations,
    temporal,
    sources: options.sources ?? createApiSourceLookup(config, api),
    // TEMPORARY planner: replace with planDelegation(request, { config, resolver, workingDir, caller }) from src/delegation.
    plan: (request, caller) => temporaryPlanDelegation(request, { config, workingDir: api.workingDir, caller: { depth: 0, tenant: caller.tenant } }),
  };
}

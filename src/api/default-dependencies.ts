import { readTenantSpend } from '../activities/tenant-spend-book';
import { createBlobStore } from '../activities/blob-store-factory';
import { loadConfig, type ErrandConfig } from '../config';
import { existsSync } from 'node:fs';
import { createSharedSources, type SharedSources } from '../sources/shared-sources';
import { loadApiConfig, type ApiConfig, type LoadApiConfigOptions } from './api-config';
import type { ApiDependencies } from './api-dependencies';
import { DelegationService } from './delegation-service';
import { lazyTemporalClient, type TemporalClientProvider } from './temporal-client-provider';
import { apiPlanner } from './plan-api-delegation';
import { SessionService } from './session-service';
import { tenantWorkingDir } from './tenant-working-dir';
import { TemporalHttpStarter } from './temporal-http-start';
import { temporalHttpHeaders } from '../temporal-http-url';

/**
 * Wires the API from configuration: one lazily connected Temporal client per process, the sources of each
 * tenant's working directory (the same stores, in the same order, as the worker's `delegate`), the planner
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
  sources?: Pick<SharedSources, 'resolverFor'>;
  /** Shown in each workflow's static details. */
  startedBy?: string;
}

/**
 * The sources the API uses (decision 0023): the worker's stores in the worker's order, resolved in the
 * tenant's working directory, so `POST /v1/delegations` and `GET /v1/sources` find what a session's
 * `delegate` finds. Project folders are read where the working root is on the API's disk (the API beside
 * its workers, `errand dev`); where it is not (a Lambda), only the operator's and user-level stores are
 * searched, and a tenant's own project recipes are delegated from a session.
 */
export function createApiSourceLookup(config: ErrandConfig, homeDirectory?: string): SharedSources {
  // Looked at per lookup, not once: `errand dev` may create the working root after the API starts.
  return createSharedSources(config, homeDirectory, () => existsSync(config.workingDir));
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
  const sources = options.sources ?? createApiSourceLookup(config);
  const workingDirFor = (tenant: string) => tenantWorkingDir(config.workingDir, api.auth, tenant);
  const planner = apiPlanner(config, sources, blobs);
  return {
    config,
    api,
    delegations,
    temporal,
    sourcesFor: (tenant) => sources.resolverFor(workingDirFor(tenant)),
    plan: (request, caller) => planner(request, caller, workingDirFor(caller.tenant)),
    sessions: new SessionService(temporal, config, workingDirFor, blobs, httpStarter),
    ...(config.caps.tenantDailyCostMicroUsd !== undefined ? { tenantSpend: async (tenant: string, now: number) => readTenantSpend(await temporal.get(), tenant, now) } : {}),
  };
}

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
import { createTemporalGateway } from './temporal-gateway-factory';
import type { TemporalGateway } from './temporal-gateway';
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
  /** Temporal's gateway; default: over its HTTP API when `temporal.httpUrl` is set, else the SDK's client over `temporal`. */
  gateway?: TemporalGateway;
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
export function createApiDependencies(options: ApiDependencyOptions = {}): ApiDependencies & { temporal: TemporalClientProvider; gateway: TemporalGateway } {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const config = options.config ?? loadConfig(env, cwd);
  const api = options.api ?? loadApiConfig(env, cwd, options.apiOptions);
  const temporal = options.temporal ?? lazyTemporalClient({ connection: config.temporal.connection, namespace: config.temporal.namespace });
  // Long messages go by reference through the workers' blob store (in a deployment, its inbound/ prefix).
  const blobs = createBlobStore(config);
  // With Temporal's HTTP API known, everything goes through it: plain HTTP/1.1 requests, no SDK loaded (decisions 0019, 0026).
  const { httpUrl, namespace } = config.temporal;
  const gateway =
    options.gateway ??
    createTemporalGateway({
      http: httpUrl === undefined ? undefined : { baseUrl: httpUrl, namespace, headers: temporalHttpHeaders(config.temporal.connection) },
      namespace,
      temporal,
    });
  const delegations = new DelegationService({
    gateway,
    blobs,
    taskQueue: config.temporal.taskQueue,
    startedBy: options.startedBy ?? 'errand HTTP API',
  });
  const sources = options.sources ?? createApiSourceLookup(config);
  const workingDirFor = (tenant: string) => tenantWorkingDir(config.workingDir, api.auth, tenant);
  const planner = apiPlanner(config, sources);
  return {
    config,
    api,
    delegations,
    temporal,
    gateway,
    sourcesFor: (tenant) => sources.resolverFor(workingDirFor(tenant)),
    plan: (request, caller) => planner(request, caller, workingDirFor(caller.tenant)),
    sessions: new SessionService(gateway, config, workingDirFor, blobs),
  };
}

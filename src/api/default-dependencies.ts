import { createBlobStore } from '../activities/blob-store-factory';
import { loadConfig, type ErrandConfig } from '../settings/config';
import type { SharedSources } from '../sources/shared-sources';
import type * as PlanningParts from './api-planning-parts';
import { loadApiConfig, type ApiConfig, type LoadApiConfigOptions } from './api-config';
import type { ApiDependencies } from './api-dependencies';
import { DelegationService } from './delegation-service';
import { WorkflowRunService } from './workflow-run-service';
import { lazyTemporalClient, type TemporalClientProvider } from './temporal-client-provider';
import { SessionService } from './session-service';
import { tenantWorkingDir } from './tenant-working-dir';
import { createTemporalGateway } from './temporal-gateway-factory';
import { dailyCostCap } from './daily-cost-cap';
import { gatewaySpendDesk } from './tenant-spend-reader';
import type { TemporalGateway } from './temporal-gateway';
import { temporalHttpHeaders } from '../temporal/temporal-http-url';

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
  sources?: Pick<SharedSources, 'resolverFor'> & Partial<Pick<SharedSources, 'workflowPlacesFor'>>;
  /** Shown in each workflow's static details. */
  startedBy?: string;
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
  const dailyCap = dailyCostCap(config, gatewaySpendDesk(gateway, config.temporal.taskQueue));
  const delegations = new DelegationService({
    gateway,
    blobs,
    ...(dailyCap ? { dailyCap } : {}),
    taskQueue: config.temporal.taskQueue,
    startedBy: options.startedBy ?? 'errand HTTP API',
  });
  // Sources and the planner (YAML, JSON Schema validation, the tool registry) load with the first request
  // that needs them, not with the process (decision 0026); api-source-lookup.ts says which sources they are.
  let parts: Promise<typeof PlanningParts> | undefined;
  const planningParts = () => (parts ??= import('./api-planning-parts.js'));
  let sourcesLoaded: Promise<Pick<SharedSources, 'resolverFor'> & Partial<Pick<SharedSources, 'workflowPlacesFor'>>> | undefined;
  const sources = () => (sourcesLoaded ??= options.sources ? Promise.resolve(options.sources) : planningParts().then((loaded) => loaded.createApiSourceLookup(config)));
  let plannerLoaded: Promise<ReturnType<typeof PlanningParts.apiPlanner>> | undefined;
  const planner = () => (plannerLoaded ??= Promise.all([planningParts(), sources()]).then(([loaded, lookup]) => loaded.apiPlanner(config, lookup, blobs)));
  const workingDirFor = (tenant: string) => tenantWorkingDir(config.workingDir, api.auth, tenant);
  return {
    config,
    api,
    delegations,
    temporal,
    gateway,
    sourcesFor: (tenant) => ({
      list: async (listOptions) => (await sources()).resolverFor(workingDirFor(tenant)).list(listOptions),
      resolve: async (name) => (await sources()).resolverFor(workingDirFor(tenant)).resolve(name),
    }),
    plan: async (request, caller) => (await planner())(request, caller, workingDirFor(caller.tenant)),
    sessions: new SessionService(gateway, config, workingDirFor, blobs, dailyCap),
    workflows: {
      service: new WorkflowRunService({ gateway, blobs, ...(dailyCap ? { dailyCap } : {}), taskQueue: config.temporal.taskQueue, startedBy: options.startedBy ?? 'errand HTTP API' }),
      placesFor: async (tenant) => {
        const workingDir = workingDirFor(tenant);
        return { workingDir, places: (await sources()).workflowPlacesFor?.(workingDir) ?? [] };
      },
    },
  };
}

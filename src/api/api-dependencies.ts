import type { ErrandConfig } from '../settings/config';
import type { ResolveResult, SourceListingResult } from '../sources/source-resolver';
import type { ApiConfig } from './api-config';
import type { DelegationService } from './delegation-service';
import type { SessionService } from './session-service';
import type { PlanDelegationFunction } from './planning-types';
import type { WorkflowPlace } from '../sources/workflow-sources';
import type { WorkflowRunService } from './workflow-run-service';

export type { ApiCaller, PlanDelegationFunction } from './planning-types';


/** Source listing and lookup in one working directory (a `SourceResolver` fits). */
export interface SourceLookup {
  list(options?: { refresh?: boolean }): Promise<SourceListingResult>;
  resolve(name: string): Promise<ResolveResult>;
}

/** Everything the API app needs; entry points build it once per process. */
export interface ApiDependencies {
  config: ErrandConfig;
  api: ApiConfig;
  delegations: DelegationService;
  plan: PlanDelegationFunction;
  /** Parent sessions and approvals. */
  sessions?: SessionService;
  /**
   * The sources a tenant's delegations load: those of its working directory. Absent when no source stores
   * are wired: the sources routes answer 404 for every name.
   */
  sourcesFor?: (tenant: string) => SourceLookup;
  /**
   * Workflow runs (SEMANTICS §7): the service, and where a tenant's workflow sources are found (its working
   * directory and the places searched). Absent: the `/v1/workflows` routes answer 501.
   */
  workflows?: { service: WorkflowRunService; placesFor(tenant: string): Promise<{ workingDir: string; places: WorkflowPlace[] }> };
}

import type { ErrandConfig } from '../config';
import type { DelegateRequest } from '../contracts/delegation';
import type { ResolveResult, SourceListingResult } from '../sources/source-resolver';
import type { ApiConfig } from './api-config';
import type { DelegationService } from './delegation-service';
import type { SessionService } from './session-service';
import type { PlanResult } from './plan-api-delegation';

/** The caller of an API-started delegation: a tenant at depth 0, with no parent. */
export interface ApiCaller {
  tenant: string;
}

/** Turns a validated request into a subagent input (the planner, bound to config, sources and working dir). */
export type PlanDelegationFunction = (request: DelegateRequest, caller: ApiCaller) => Promise<PlanResult>;

/** Source listing and lookup (a `SourceResolver` fits). */
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
  /** Absent when no source stores are wired: the sources routes answer 404 for every name. */
  sources?: SourceLookup;
}

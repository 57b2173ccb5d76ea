import type { DelegateRequest } from '../contracts/delegation';
import type { PlanningFailure } from '../contracts/planning-failure';
import type { SourceSummary, SubagentInput } from '../contracts/subagent';

/** The caller of an API-started delegation: a tenant at depth 0, with no parent. */
export interface ApiCaller {
  tenant: string;
}

/** Outcome of planning an API-started delegation. */
export type PlanResult =
  | { ok: true; input: SubagentInput; source?: SourceSummary; warnings: string[] }
  | { ok: false; failure: PlanningFailure };

/** Turns a validated request into a subagent input (the planner, bound to config, sources and working dir). */
export type PlanDelegationFunction = (request: DelegateRequest, caller: ApiCaller) => Promise<PlanResult>;

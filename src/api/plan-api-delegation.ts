import { existsSync } from 'node:fs';
import type { ErrandConfig } from '../settings/config';
import type { DelegationParent } from '../contracts/activities';
import { approversFor } from '../tools/tool-policy';
import type { DelegateRequest } from '../contracts/delegation';
import { refuse } from '../contracts/planning-failure';
import { planDelegation, type PlanContext } from '../activities/plan-delegation';
import { configuredPlanning } from '../activities/plan-context';
import { developerToolsetName } from '../tools/developer-toolset-name';
import type { SourceResolver } from '../sources/source-resolver';
import type { BlobStore } from '../activities/blob-store';
import { redactServerPaths } from '../domain/redact-paths';
import type { ApiCaller, PlanResult } from './planning-types';
import { joinRequestedWorkingDir } from './tenant-working-dir';

export type { PlanResult } from './planning-types';

/** Plans one API delegation in a tenant's working directory (tenant-working-dir.ts). */
export type ApiPlanner = (request: DelegateRequest, caller: ApiCaller, tenantDir: string) => Promise<PlanResult>;

/**
 * The planner of delegations started through the API: the same planner the `delegate` tool uses, with the
 * tenant's working directory, the configured toolsets and models, and no parent (depth 1, nothing to
 * notify). What depends only on the configuration is worked out once, not per request (a start should
 * cost little more than Temporal's own: bench figure api-start-latency). `working_dir` is joined onto the
 * tenant's folder by name only: the API does not look at the workers' disk (it may run where that disk is
 * not), and the worker confines and creates the folder.
 */
export function apiPlanner(config: ErrandConfig, sources: { resolverFor(workingDirectory: string): SourceResolver }, memoryStore?: BlobStore): ApiPlanner {
  const toolsets = [developerToolsetName, ...config.tools.mcpServers.map((server) => server.name)];
  const route = config.defaultModel ?? { provider: config.providers[0]?.name ?? '(none)', model: '(none)' };
  const approvers = approversFor(config.toolPolicy);
  const context: Omit<PlanContext, 'resolver'> = {
    // Agents' memory folders live in the workers' blob store, which the API shares.
    ...configuredPlanning(config, memoryStore),
    // The API lists sources over the working root: the worker resolves a recipe's servers there again.
    resolveDir: config.workingDir,
    // Present when the API runs beside its workers, absent in a Lambda; looked at only by checks that need
    // the working directory's disk (isolation "worktree"), not by every start.
    workersDiskIsLocal: () => existsSync(config.workingDir),
    availableToolsets: toolsets,
  };
  return async (request, caller, tenantDir) => {
    let workingDir = tenantDir;
    if (request.working_dir !== undefined) {
      const joined = joinRequestedWorkingDir(tenantDir, request.working_dir);
      if (!joined.ok) return refuse('working-dir-invalid', 'working_dir', joined.message);
      workingDir = joined.path;
    }
    const { working_dir: _requested, ...planned } = request;
    const parent: DelegationParent = {
      workflowId: 'api',
      taskId: 'api',
      childDepth: 1,
      maxDepth: config.subagent.maxDepth,
      workingDir,
      route,
      toolsets,
      tenant: caller.tenant,
      activity: config.subagent.activity,
      approvers,
    };
    // The sources of the folder the delegation runs in, as the worker's `delegate` would find them there.
    const resolver = sources.resolverFor(workingDir);
    const plan = await planDelegation(planned, parent, { ...context, resolver });
    if (!plan.ok) {
      // A planner message may quote a file system error; the caller is a tenant, who gets no server path.
      return { ok: false, failure: { ...plan.failure, message: redactServerPaths(plan.failure.message) } };
    }
    // A top-level delegation has no parent to report to.
    const { parent: _parent, ...input } = plan.input;
    return { ok: true, input, ...(plan.source ? { source: plan.source } : {}), warnings: plan.warnings };
  };
}

import { existsSync } from 'node:fs';
import type { ErrandConfig } from '../settings/config';
import type { DelegationParent } from '../contracts/activities';
import { approversFor } from '../tools/tool-policy';
import type { DelegateRequest } from '../contracts/delegation';
import { planDelegation, type PlanContext } from '../activities/plan-delegation';
import { providerChoices } from '../llm/provider-config';
import { developerToolsetName } from '../tools/developer-toolset-name';
import type { SourceResolver } from '../sources/source-resolver';
import type { BlobStore } from '../activities/blob-store';
import { redactServerPaths } from '../domain/redact-paths';
import type { ApiCaller, PlanResult } from './planning-types';
import { joinRequestedWorkingDir } from './tenant-working-dir';

export type { PlanResult } from './planning-types';

/** The request field a planner message is about, for the problem document's field path. */
function fieldOf(message: string, request: DelegateRequest): string {
  if (/^time_budget/.test(message)) return 'time_budget';
  if (/^cost_budget_usd|^a cost cap/.test(message)) return 'cost_budget_usd';
  if (/^the subagent's first prompt/.test(message)) return 'context';
  if (/^output_schema/.test(message)) return 'output_schema';
  if (/^fork/.test(message)) return 'fork';
  if (/^reasoning_effort/.test(message)) return 'reasoning_effort';
  if (/^isolation/.test(message)) return request.isolation ? 'isolation' : 'source';
  if (/^No source named|source "/.test(message)) return 'source';
  if (/working_dir/.test(message)) return 'working_dir';
  if (/^provider |no usable provider/.test(message)) return 'provider';
  if (/model/.test(message)) return 'model';
  if (/parameter/.test(message)) return 'parameters';
  if (/depth/.test(message)) return 'depth';
  return request.source ? 'source' : 'instructions';
}

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
    providers: providerChoices(config.providers),
    configuredDefault: config.defaultModel,
    override: {
      ...(config.subagent.providerOverride ? { provider: config.subagent.providerOverride } : {}),
      ...(config.subagent.modelOverride ? { model: config.subagent.modelOverride } : {}),
    },
    configuredMaxTurns: config.subagent.maxTurns,
    configuredMaxOutputTokens: config.model.maxOutputTokens,
    caps: config.caps,
    // The API lists sources over the working root: the worker resolves a recipe's servers there again.
    resolveDir: config.workingDir,
    // Present when the API runs beside its workers, absent in a Lambda; looked at only by checks that need
    // the working directory's disk (isolation "worktree"), not by every start.
    workersDiskIsLocal: () => existsSync(config.workingDir),
    availableToolsets: toolsets,
    tasks: config.tasks,
    approvalTimeoutMs: config.approvalTimeoutMs,
    allowBypassPermissions: config.allowBypassPermissions,
    // Agents' memory folders live in the workers' blob store, which the API shares.
    ...(memoryStore ? { memoryStore } : {}),
    mcp: {
      allowRecipeServers: config.tools.settings.allowRecipeServers ?? false,
      ...(config.tools.settings.recipeEnvKeys ? { recipeEnvKeys: config.tools.settings.recipeEnvKeys } : {}),
      workingRoot: config.workingDir,
      ...(config.tools.settings.trustedRecipeDirs ? { trustedRecipeDirs: config.tools.settings.trustedRecipeDirs } : {}),
    },
  };
  return async (request, caller, tenantDir) => {
    let workingDir = tenantDir;
    if (request.working_dir !== undefined) {
      const joined = joinRequestedWorkingDir(tenantDir, request.working_dir);
      if (!joined.ok) return { ok: false, errors: [{ field: 'working_dir', message: joined.message }] };
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
      let suggestions: string[] | undefined;
      if (request.source && plan.message.startsWith('No source named')) {
        const resolved = await resolver.resolve(request.source);
        if (!resolved.ok && resolved.reason === 'not_found') suggestions = resolved.suggestions;
      }
      // A planner message may quote a file system error; the caller is a tenant, who gets no server path.
      const message = redactServerPaths(plan.message);
      return { ok: false, errors: [{ field: fieldOf(message, request), message }], ...(suggestions ? { suggestions } : {}) };
    }
    // A top-level delegation has no parent to report to.
    const { parent: _parent, ...input } = plan.input;
    return { ok: true, input, ...(plan.source ? { source: plan.source } : {}), warnings: plan.warnings };
  };
}

import { existsSync } from 'node:fs';
import type { ErrandConfig } from '../config';
import type { DelegationParent } from '../contracts/activities';
import { approversFor } from '../tools/tool-policy';
import type { DelegateRequest } from '../contracts/delegation';
import { planDelegation } from '../activities/plan-delegation';
import { providerChoices } from '../llm/provider-config';
import { developerToolsetName } from '../tools/developer-toolset';
import type { SourceResolver } from '../sources/source-resolver';
import type { ApiCaller, PlanResult } from './planning-types';
import { joinRequestedWorkingDir } from './tenant-working-dir';

export type { PlanResult } from './planning-types';

/** The request field a planner message is about, for the problem document's field path. */
function fieldOf(message: string, request: DelegateRequest): string {
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

/**
 * Plans a delegation started through the API: the same planner the `delegate` tool uses, with the
 * tenant's working directory, the configured toolsets and models, and no parent (depth 1, nothing to
 * notify). `tenantDir` is the tenant's working directory (tenant-working-dir.ts). `working_dir` is joined onto the tenant's folder by name only: the API does not look at the
 * workers' disk (it may run where that disk is not), and the worker confines and creates the folder.
 */
export async function planApiDelegation(
  request: DelegateRequest,
  caller: ApiCaller,
  config: ErrandConfig,
  resolver: SourceResolver,
  tenantDir: string,
): Promise<PlanResult> {
  let workingDir = tenantDir;
  if (request.working_dir !== undefined) {
    const joined = joinRequestedWorkingDir(tenantDir, request.working_dir);
    if (!joined.ok) return { ok: false, errors: [{ field: 'working_dir', message: joined.message }] };
    workingDir = joined.path;
  }
  const { working_dir: _requested, ...planned } = request;
  const toolsets = [developerToolsetName, ...config.tools.mcpServers.map((server) => server.name)];
  const parent: DelegationParent = {
    workflowId: 'api',
    taskId: 'api',
    childDepth: 1,
    maxDepth: config.subagent.maxDepth,
    workingDir,
    route: config.defaultModel ?? { provider: config.providers[0]?.name ?? '(none)', model: '(none)' },
    toolsets,
    tenant: caller.tenant,
    activity: config.subagent.activity,
    approvers: approversFor(config.toolPolicy),
  };
  const plan = await planDelegation(planned, parent, {
    resolver,
    providers: providerChoices(config.providers),
    configuredDefault: config.defaultModel,
    override: {
      ...(config.subagent.providerOverride ? { provider: config.subagent.providerOverride } : {}),
      ...(config.subagent.modelOverride ? { model: config.subagent.modelOverride } : {}),
    },
    configuredMaxTurns: config.subagent.maxTurns,
    // One stat of the configured root: present when the API runs beside its workers, absent in a Lambda.
    workersDiskIsLocal: existsSync(config.workingDir),
    availableToolsets: toolsets,
    tasks: config.tasks,
    approvalTimeoutMs: config.approvalTimeoutMs,
    allowBypassPermissions: config.allowBypassPermissions,
    mcp: {
      allowRecipeServers: config.tools.settings.allowRecipeServers ?? false,
      ...(config.tools.settings.recipeEnvKeys ? { recipeEnvKeys: config.tools.settings.recipeEnvKeys } : {}),
    },
  });
  if (!plan.ok) {
    let suggestions: string[] | undefined;
    if (request.source && plan.message.startsWith('No source named')) {
      const resolved = await resolver.resolve(request.source);
      if (!resolved.ok && resolved.reason === 'not_found') suggestions = resolved.suggestions;
    }
    return { ok: false, errors: [{ field: fieldOf(plan.message, request), message: plan.message }], ...(suggestions ? { suggestions } : {}) };
  }
  // A top-level delegation has no parent to report to.
  const { parent: _parent, ...input } = plan.input;
  return { ok: true, input, ...(plan.source ? { source: plan.source } : {}), warnings: plan.warnings };
}

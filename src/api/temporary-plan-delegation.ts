import type { ErrandConfig } from '../config';
import type { DelegateRequest } from '../contracts/delegation';
import type { SourceSummary, SubagentInput } from '../contracts/subagent';

/**
 * TEMPORARY — stands in for `src/delegation/plan-delegation.ts` (the lead's) until it exists. It builds an
 * ad-hoc input only: instructions, the configured default model (or the requested one, when allowed),
 * the `developer` toolset, and the API's working directory. Sources, parameters, working_dir and model
 * precedence are the real planner's job. Replace the import in `src/api/default-dependencies.ts` and
 * delete this file.
 */

/** Outcome of planning a delegation (the signature the real planner exports). */
export type PlanResult =
  | { ok: true; input: SubagentInput; source?: SourceSummary }
  | { ok: false; errors: { field: string; message: string }[]; suggestions?: string[] };

/** What the temporary planner needs (a subset of the real planner's PlanContext). */
export interface TemporaryPlanContext {
  config: ErrandConfig;
  workingDir: string;
  caller: { depth: 0; tenant: string };
}

/** Plans an ad-hoc delegation. TEMPORARY: see the file comment. */
export async function temporaryPlanDelegation(request: DelegateRequest, context: TemporaryPlanContext): Promise<PlanResult> {
  const errors: { field: string; message: string }[] = [];
  if (request.source !== undefined) errors.push({ field: 'source', message: 'sources are not supported by this build yet; send instructions only' });
  if (request.instructions === undefined) errors.push({ field: 'instructions', message: 'instructions are required (a source is not supported yet)' });
  if (request.parameters !== undefined) errors.push({ field: 'parameters', message: 'parameters are only allowed with a source' });

  const { config } = context;
  let route = config.defaultModel;
  if (request.model !== undefined || request.provider !== undefined) {
    const providerName = request.provider ?? config.defaultModel?.provider;
    const provider = config.providers.find((candidate) => candidate.name === providerName);
    const model = request.model ?? provider?.defaultModel ?? provider?.models[0];
    if (!provider) {
      errors.push({ field: 'provider', message: `provider "${providerName ?? ''}" is not configured; configured: ${config.providers.map((p) => p.name).join(', ') || '(none)'}` });
    } else if (model === undefined || !provider.models.includes(model)) {
      errors.push({ field: 'model', message: `model "${model ?? ''}" is not allowed for provider "${provider.name}"; allowed: ${provider.models.join(', ')}` });
    } else {
      route = { provider: provider.name, model };
    }
  }
  if (!route && errors.length === 0) errors.push({ field: 'model', message: 'no model is configured: set ERRAND_DEFAULT_MODEL ("<provider>/<model>") or configure providers' });
  if (errors.length > 0 || !route || request.instructions === undefined) return { ok: false, errors };

  const instructions = request.instructions;
  const input: SubagentInput = {
    label: request.description ?? instructions.split(/\s+/).slice(0, 8).join(' '),
    prompt: instructions,
    system: request.context === undefined ? {} : { context: request.context },
    route: { ...route, ...(request.temperature === undefined ? {} : { temperature: request.temperature }) },
    toolsets: ['developer'],
    maxTurns: request.max_turns ?? config.subagent.maxTurns,
    workingDir: context.workingDir,
    depth: 1,
    maxDepth: config.subagent.maxDepth,
    ...(request.continuable ? { continuable: true } : {}),
    tenant: context.caller.tenant,
    ...(request.token_budget === undefined ? {} : { tokenBudget: request.token_budget }),
    activity: config.subagent.activity,
  };
  return { ok: true, input };
}

import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { AgentHooksWire } from '../contracts/agent-hooks';
import type { DelegationParent, PlannedDelegation } from '../contracts/activities';
import type { DelegateRequest } from '../contracts/delegation';
import { refuse, type PlanningRefusal } from '../contracts/planning-failure';
import type { SourceSnapshot } from '../contracts/source';
import type { SourceSummary, SubagentInput } from '../contracts/subagent';
import { forkRefusal } from '../domain/fork-rules';
import { preview } from '../domain/subagent-prompt';
import { isInside } from '../tools/confine-path';
import type { PlanContext } from './plan-context';
import { planLimits } from './plan-limits';
import { planRunOptions } from './plan-run-options';
import { definitionFileOf, planSource } from './plan-source';
import { planTools } from './plan-tools';

export type { PlanContext } from './plan-context';
export { agentDefaultPrompt } from './plan-source';

/**
 * Confines `working_dir` to the parent's working directory after resolving symlinks. Messages name only
 * what was asked for: they reach API clients and models, which have no business knowing server paths.
 */
async function confineWorkingDir(parentDir: string, requested: string | undefined): Promise<{ ok: true; path: string } | PlanningRefusal> {
  if (requested === undefined) return { ok: true, path: parentDir };
  const root = await realpath(parentDir).catch(() => undefined);
  if (root === undefined) return refuse('working-dir-invalid', 'working_dir', `working_dir "${requested}" does not exist (the working directory itself has not been created yet)`);
  const candidate = resolve(root, requested);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch {
    return refuse('working-dir-invalid', 'working_dir', `working_dir "${requested}" does not exist (it must be an existing directory inside the working directory)`);
  }
  if (!isInside(root, real)) {
    return refuse('working-dir-invalid', 'working_dir', `working_dir "${requested}" is outside the working directory (directly or through a symbolic link); use a directory inside it`);
  }
  if (!(await stat(real)).isDirectory()) return refuse('working-dir-invalid', 'working_dir', `working_dir "${requested}" is not a directory`);
  return { ok: true, path: real };
}

function labelOf(request: DelegateRequest, snapshot: SourceSnapshot | undefined): string {
  if (request.description) return request.description;
  const words = request.instructions ? preview(request.instructions.replace(/\s+/g, ' ').trim(), 60) : '';
  if (snapshot) return words ? `${snapshot.name}: ${words}` : snapshot.name;
  return words || 'delegation';
}

/**
 * Turns a `delegate` request into a fully resolved child input (SEMANTICS §2-§3): the source resolved
 * and rendered (plan-source.ts), parameters validated, working directory confined, tools chosen
 * (plan-tools.ts), model / temperature / max_turns precedence and caps applied (plan-limits.ts). Nothing is
 * started; every problem is a typed failure for the caller to render (decision 0041).
 */
export async function planDelegation(request: DelegateRequest, parent: DelegationParent, context: PlanContext): Promise<PlannedDelegation | PlanningRefusal> {
  if (!request.instructions && !request.source) return refuse('nothing-to-delegate', 'instructions', 'give `instructions`, a `source`, or both');
  if (request.parameters && !request.source) return refuse('parameters-without-source', 'parameters', '`parameters` are only valid together with `source`');
  if (parent.childDepth > parent.maxDepth) {
    return refuse('depth-limit', 'depth', `the child would be at depth ${parent.childDepth} but the depth limit is ${parent.maxDepth}`);
  }
  if (request.fork) {
    const refused = forkRefusal(request, { hasConversation: parent.conversation !== undefined, parentRoute: parent.route, override: context.override });
    if (refused) return refuse('fork-refused', 'fork', refused);
  }
  const workingDir = await confineWorkingDir(parent.workingDir, request.working_dir);
  if (!workingDir.ok) return workingDir;
  const planned = await planSource(request, parent, context, workingDir.path);
  if (!planned.ok) return planned;
  const source = planned.source;
  const warnings = [...source.warnings];
  const tools = await planTools(request, parent, context, source, workingDir.path);
  if (!tools.ok) return tools;
  warnings.push(...tools.selection.warnings);
  const { snapshot } = source;
  const run = await planRunOptions({ request, agentRun: source.agentRun, recipeOutputSchema: source.recipeOutputSchema, toolsets: tools.selection.toolsets, workingDir: workingDir.path, workersDiskIsLocal: context.workersDiskIsLocal ?? true, allowBypass: context.allowBypassPermissions, recipeFile: snapshot ? definitionFileOf(snapshot) : undefined });
  if (!run.ok) return run;
  warnings.push(...run.warnings);
  const limits = planLimits(request, parent, context, source);
  if (!limits.ok) return limits;
  warnings.push(...limits.warnings);

  const summary: SourceSummary | undefined = snapshot
    ? { kind: snapshot.kind, name: snapshot.name, store: snapshot.store.id, version: snapshot.version, path: snapshot.path }
    : undefined;
  const toolPolicy = [...tools.selection.toolPolicy, ...(run.policyLayer ? [run.policyLayer] : [])];
  const { recipeServers } = tools;
  const { toolFilter } = tools.selection;
  const { memory } = source;
  const input: SubagentInput = {
    label: labelOf(request, snapshot),
    prompt: source.prompt ?? '',
    system: {
      ...(source.instructions ? { instructions: source.instructions } : {}),
      ...(request.context ? { context: request.context } : {}),
      ...(request.persona ? { persona: request.persona } : {}),
      ...(source.skills ? { skills: source.skills } : {}),
      ...(memory ? { memory: memory.prompt } : {}),
    },
    ...(memory ? { memory: memory.location } : {}),
    route: limits.route,
    ...(request.fork && parent.conversation ? { fork: parent.conversation } : {}),
    toolsets: tools.selection.toolsets,
    ...(toolFilter ? { toolFilter } : {}),
    maxTurns: limits.maxTurns,
    workingDir: workingDir.path,
    depth: parent.childDepth,
    maxDepth: parent.maxDepth,
    ...(summary ? { source: summary } : {}),
    parent: { workflowId: parent.workflowId, taskId: parent.taskId },
    ...(request.continuable ? { continuable: true } : {}),
    ...(parent.tenant ? { tenant: parent.tenant } : {}),
    ...(limits.tokenBudget !== undefined ? { tokenBudget: limits.tokenBudget } : {}),
    ...(limits.timeBudgetMs !== undefined ? { timeBudgetMs: limits.timeBudgetMs } : {}),
    ...(limits.costBudgetMicroUsd !== undefined ? { costBudgetMicroUsd: limits.costBudgetMicroUsd } : {}),
    ...(request.max_output_tokens !== undefined ? { maxOutputTokens: request.max_output_tokens } : limits.definitionMaxOutputTokens !== undefined ? { maxOutputTokens: limits.definitionMaxOutputTokens } : {}),
    ...(request.continuable && context.tasks.continuableIdleTimeoutMs !== undefined ? { idleTimeoutMs: context.tasks.continuableIdleTimeoutMs } : {}),
    // `permissionMode: auto`: a person decides what asks, whatever the parent's approvers (tools/permission-mode.ts).
    ...(run.approvers ? { approvers: run.approvers } : parent.approvers ? { approvers: parent.approvers } : {}),
    activity: parent.activity,
    tasks: context.tasks,
    ...(source.childRecipe ? { recipe: source.childRecipe } : {}),
    ...(toolPolicy.length > 0 ? { toolPolicy } : {}),
    ...(recipeServers.length > 0 ? { recipeServers: recipeServers.map((server) => ({ declaredName: server.declaredName, config: { ...server.config }, ...(server.origin ? { origin: server.origin } : {}) })) } : {}),
    approvalTimeoutMs: context.approvalTimeoutMs,
    ...(limits.retry ? { retry: limits.retry } : {}),
    ...(run.outputSchema ? { outputSchema: run.outputSchema } : {}),
    ...(run.isolation ? { isolation: run.isolation } : {}),
    ...(source.agentHooks ? { hooks: withServerNames(source.agentHooks, recipeServers) } : {}),
  };
  return { ok: true, input, ...(summary ? { source: summary } : {}), warnings, ...(source.agentRun?.background ? { forceBackground: true } : {}), ...(limits.firstPrompt ? { firstPrompt: limits.firstPrompt } : {}) };
}

/** The hooks with the declared name of each server the delegation runs (hooks match `mcp__<declared>__<tool>`). */
function withServerNames(hooks: AgentHooksWire, servers: ReadonlyArray<{ declaredName: string; config: { name: string } }>): AgentHooksWire {
  if (servers.length === 0) return hooks;
  return { ...hooks, serverNames: Object.fromEntries(servers.map((server) => [server.config.name, server.declaredName])) };
}

import type { AgentHooksWire } from '../contracts/agent-hooks';
import { orchestrationToolsMatched } from './agent-hook-matching';
import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DelegationParent, PlannedDelegation, RecipeServerWire, RunningRecipe } from '../contracts/activities';
import { refuse, type PlanningRefusal } from '../contracts/planning-failure';
import { isInside, type PathRules } from '../tools/confine-path';
import { mcpServerConfigSchema, type RecipeServer } from '../tools/mcp-config';
import type { DelegateRequest } from '../contracts/delegation';
import { runCommandMaxTimeoutMs } from '../contracts/limits';
import type { SourceSnapshot } from '../contracts/source';
import type { SourceSummary, SubagentInput, TaskLimits } from '../contracts/subagent';
import { forkRefusal, forkRoute } from '../domain/fork-rules';
import { capDefinitionLimit } from '../domain/definition-limits';
import { childCap, chooseCaps, firstPromptRefusal } from '../domain/run-caps';
import { estimateMessageTokens } from '../domain/token-estimate';
import { chooseMaxTurns, chooseModel, type ProviderChoice } from '../domain/model-precedence';
import { recipeRetryPolicy } from '../domain/recipe-retry';
import type { RecipeExtension } from '../contracts/recipe-schema';
import { preview } from '../domain/subagent-prompt';
import { agentToolsRefusal, selectTools } from '../tools/tool-selection';
import { renderSource } from '../sources/render-source';
import { recipeFolderTrusted, untrustedRecipeMessage } from '../sources/recipe-server-trust';
import type { SourceResolver } from '../sources/source-resolver';
import { planRunOptions, type AgentRunFields } from './plan-run-options';
import { AgentMemory, isAgentMemoryError, memoryLocationFor } from './agent-memory';
import type { BlobStore } from './blob-store';
import type { AgentMemoryLocation, MemoryPromptPart, PreloadedSkill } from '../contracts/subagent';
import { findSkills } from '../sources/skill-sources';

/** What planning needs besides the request and the parent. */
export interface PlanContext {
  resolver: SourceResolver;
  providers: readonly ProviderChoice[];
  configuredDefault: { provider: string; model: string } | undefined;
  override: { provider?: string; model?: string };
  /** ERRAND_SUBAGENT_MAX_TURNS (or the default 25). */
  configuredMaxTurns: number;
  /**
   * ERRAND_MAX_OUTPUT_TOKENS: the output-token limit a recipe's `settings.max_output_tokens` may not raise
   * (a model entry's own `maxOutputTokens` wins for that model). No cap from it when absent.
   */
  configuredMaxOutputTokens?: number;
  /** Toolsets the operator has registered (names a delegation may ask for). */
  availableToolsets: readonly string[];
  tasks: TaskLimits;
  /** How long a tool call under `ask` waits for a decision (ms). */
  approvalTimeoutMs: number;
  /**
   * Whether recipe-declared MCP servers may run, which worker environment variables they may get, and
   * where they may come from: the working root (tenant folders) and the folders under it the operator
   * trusts (`ERRAND_TRUSTED_RECIPE_DIRS`). Without `workingRoot` no recipe's servers are planned.
   */
  mcp: { allowRecipeServers: boolean; recipeEnvKeys?: string[]; workingRoot?: string; trustedRecipeDirs?: readonly string[] };
  /** The working directory whose sources `resolver` lists (recorded so the worker can resolve a recipe again). */
  resolveDir?: string;
  /** The worker's path rules, applied to `file` parameters like to tool paths (absent in the API). */
  paths?: PathRules;
  /**
   * Whether the workers' disk is this machine's: true on a worker; for the API, whether the configured
   * working root exists here (beside its workers) or not (a serverless function). Checks that look at the
   * working directory (is it in a git repository?) run only where it is true. Default true. A function is
   * asked only when such a check comes up (the API's answer is a file-system call, kept off plain starts).
   */
  workersDiskIsLocal?: boolean | (() => boolean);
  /**
   * The operator's caps of a delegation (`ERRAND_MAX_TIME_BUDGET_SECS`, `ERRAND_MAX_COST_BUDGET_USD`): a
   * request may ask for less, never more; a delegation that asks for none runs under them.
   */
  caps?: { timeBudgetMs?: number; costBudgetMicroUsd?: number };
  /** Whether an agent's `permissionMode: bypassPermissions` may be used (`ERRAND_ALLOW_BYPASS_PERMISSIONS`; default no). */
  allowBypassPermissions?: boolean;
  /** errand's blob store, where agents' memory folders live (an agent with `memory` is refused without it). */
  memoryStore?: BlobStore;
}

/** A recipe server carried in a workflow input, re-validated before use (nothing starts on a forged config). */
function toRecipeServer(wire: RecipeServerWire): RecipeServer[] {
  const parsed = mcpServerConfigSchema.safeParse(wire.config);
  return parsed.success ? [{ declaredName: wire.declaredName, config: parsed.data, ...(wire.origin ? { origin: wire.origin } : {}) }] : [];
}

/** The prompt an agent gets when it is delegated with no task of its own (SEMANTICS §2). */
export const agentDefaultPrompt =
  'Proceed with your expertise: carry out the work your instructions describe, then give your final answer.';

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
 * and rendered, parameters validated, working directory confined, model / temperature / max_turns
 * precedence applied, toolsets chosen. Nothing is started; every problem is a typed failure for the caller
 * to render (decision 0041).
 */
export async function planDelegation(request: DelegateRequest, parent: DelegationParent, context: PlanContext): Promise<PlannedDelegation | PlanningRefusal> {
  const warnings: string[] = [];
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

  let snapshot: SourceSnapshot | undefined;
  let instructions: string | undefined;
  let prompt: string | undefined;
  let recipeSettings: { provider?: string; model?: string; temperature?: number; maxTurns?: number; maxOutputTokens?: number; reasoningEffort?: string; timeBudgetSecs?: number; costBudgetUsd?: number } = {};
  // An agent file's `effort` (Claude Code's level): ranks where a recipe's reasoning_effort does.
  let agentEffort: string | undefined;
  let childRecipe: RunningRecipe | undefined;
  let agentTools: { tools?: string[]; disallowedTools?: string[]; mcpServerNames?: string[]; mcpServers?: RecipeExtension[] } | undefined;
  // Claude Code agent fields that shape the run (SEMANTICS §5): see planRunOptions.
  let agentRun: AgentRunFields | undefined;
  let retry: SubagentInput['retry'];
  let recipeOutputSchema: unknown;
  let recipeExtensions: RecipeExtension[] | null | undefined;
  let recipeToolPolicy: unknown;
  // An agent file's `skills` and `memory` (decision 0031): read now, put into the system prompt at start.
  let skills: PreloadedSkill[] | undefined;
  let memory: { location: AgentMemoryLocation; prompt: MemoryPromptPart } | undefined;
  let agentHooks: AgentHooksWire | undefined;

  if (request.source) {
    const resolved = await context.resolver.resolve(request.source, {
      ...(parent.recipe ? { sessionRecipe: parent.recipe.snapshot, sessionValues: parent.recipe.values } : {}),
    });
    if (!resolved.ok) {
      return resolved.reason === 'not_found' ? refuse('source-not-found', 'source', resolved.message, resolved.suggestions) : refuse('source-invalid', 'source', resolved.message);
    }
    snapshot = resolved.snapshot;
    warnings.push(...resolved.warnings);
    if (snapshot.subRecipe?.sequentialWhenRepeated) {
      warnings.push(`sub-recipe ${snapshot.name} asks for sequential_when_repeated, which errand does not honour: several delegate calls in one turn run in parallel; make them in separate turns to run them one after another`);
    }
    const rendered = await renderSource(snapshot, request.parameters ?? {}, { workingDirectory: workingDir.path, ...(context.paths ? { paths: context.paths } : {}) });
    if (!rendered.ok) return refuse('parameters-invalid', 'parameters', `source "${snapshot.name}" cannot run with these parameters:\n- ${rendered.errors.join('\n- ')}`);
    warnings.push(...(rendered.warnings ?? []));
    if (snapshot.definition.type === 'agent') {
      const agent = snapshot.definition.agent;
      instructions = agent.instructions;
      prompt = request.instructions ?? agentDefaultPrompt;
      if (agent.model && !agent.inheritModel) recipeSettings.model = agent.model;
      // An agent's maxTurns ranks where a recipe's settings.max_turns does.
      if (agent.maxTurns !== undefined) recipeSettings.maxTurns = agent.maxTurns;
      agentEffort = agent.effort;
      agentTools = {
        ...(agent.tools ? { tools: agent.tools } : {}),
        ...(agent.disallowedTools ? { disallowedTools: agent.disallowedTools } : {}),
        ...(agent.mcpServerNames ? { mcpServerNames: agent.mcpServerNames } : {}),
        ...(agent.mcpServers ? { mcpServers: agent.mcpServers } : {}),
      };
      const agentFile = `${snapshot.store.description}: ${snapshot.path}`;
      if (agent.skills && agent.skills.length > 0) {
        const found = await findSkills(agent.skills, context.resolver.skillPlaces, agentFile);
        if (!found.ok) return refuse('skills-unavailable', 'source', found.message);
        skills = found.skills;
      }
      if (agent.memory) {
        const loaded = await loadMemory(agent.memory, agent.name, agentFile, workingDir.path, parent.tenant, context);
        if (!loaded.ok) return loaded;
        memory = loaded.memory;
      }
      if (agent.hooks) {
        // The workflow runs orchestration tools itself: which of them have tool hooks is found here, with RE2.
        const orchestrationTools = orchestrationToolsMatched(agent.hooks);
        agentHooks = {
          ...agent.hooks,
          agentName: agent.name,
          file: `${snapshot.store.description}: ${snapshot.path}`,
          ...(agent.permissionMode ? { permissionMode: agent.permissionMode } : {}),
          ...(orchestrationTools ? { orchestrationTools } : {}),
        };
      }
      agentRun = {
        file: `${snapshot.store.description}: ${snapshot.path}`,
        ...(agent.permissionMode ? { permissionMode: agent.permissionMode } : {}),
        ...(agent.background ? { background: true } : {}),
        ...(agent.isolation ? { isolation: agent.isolation } : {}),
      };
    } else {
      const recipe = rendered.recipe;
      instructions = rendered.instructions ?? undefined;
      const sourcePrompt = rendered.prompt ?? undefined;
      prompt = [sourcePrompt, request.instructions].filter((part): part is string => Boolean(part && part.trim())).join('\n\n') || 'Carry out your instructions, then give your final answer.';
      const settings = recipe?.settings ?? undefined;
      recipeSettings = {
        ...(settings?.goose_provider ? { provider: settings.goose_provider } : {}),
        ...(settings?.goose_model ? { model: settings.goose_model } : {}),
        ...(typeof settings?.temperature === 'number' ? { temperature: settings.temperature } : {}),
        ...(typeof settings?.max_turns === 'number' ? { maxTurns: settings.max_turns } : {}),
        ...(typeof settings?.max_output_tokens === 'number' ? { maxOutputTokens: settings.max_output_tokens } : {}),
        ...(typeof settings?.reasoning_effort === 'string' ? { reasoningEffort: settings.reasoning_effort } : {}),
        ...(typeof settings?.time_budget === 'number' ? { timeBudgetSecs: settings.time_budget } : {}),
        ...(typeof settings?.cost_budget_usd === 'number' ? { costBudgetUsd: settings.cost_budget_usd } : {}),
      };
      // A recipe's own extensions are honoured within what the operator allows (goose issue 9949): see selectTools.
      recipeExtensions = recipe?.extensions;
      recipeToolPolicy = recipe?.['tool_policy'];
      if (recipe) {
        childRecipe = { snapshot, values: rendered.values };
        retry = recipeRetryPolicy(recipe);
        recipeOutputSchema = recipe.response?.json_schema;
      }
    }
  } else {
    prompt = request.instructions;
  }

  // Tools: parent ∩ `extensions` ∩ the recipe's extensions ∩ the agent's tools − disallowedTools (unknown names reported, not fatal).
  const select = (agent: typeof agentTools) => selectTools({
    parent: {
      toolsets: parent.toolsets,
      ...(parent.toolFilter ? { toolFilter: parent.toolFilter } : {}),
      ...(parent.toolPolicy ? { toolPolicy: parent.toolPolicy } : {}),
      ...(parent.recipeServers ? { recipeServers: parent.recipeServers.flatMap(toRecipeServer) } : {}),
    },
    ...(request.extensions !== undefined ? { requested: request.extensions } : {}),
    ...(recipeExtensions !== undefined ? { recipeExtensions } : {}),
    ...(recipeToolPolicy !== undefined ? { recipeToolPolicy } : {}),
    ...(agent ? { agent } : {}),
    operator: context.mcp,
  });
  const selection = select(agentTools);
  if (agentTools && snapshot && selection.toolsets.length === 0) {
    // An agent whose lists match nothing here would run with no tool at all: refused, naming the fields (SEMANTICS §6).
    const { tools: _tools, disallowedTools: _disallowed, ...servers } = agentTools;
    const refusal = agentToolsRefusal(agentTools, selection, select(servers), `${snapshot.store.description}: ${snapshot.path}`);
    if (refusal) return refuse('no-tools-left', 'source', refusal);
  }
  warnings.push(...selection.warnings);
  // Servers the delegated definition declares itself: the worker checks them against it before they start.
  const ownServers = selection.recipeServers.filter((server) => server.origin === undefined);
  let recipeServers = selection.recipeServers;
  if (ownServers.length > 0 && snapshot) {
    const trust = { workingRoot: context.mcp.workingRoot ?? '/', trustedDirs: context.mcp.trustedRecipeDirs ?? [] };
    const resolveDir = context.resolveDir ?? parent.workingDir;
    if (!(await recipeFolderTrusted(snapshot.recipeDir, trust, resolveDir))) return refuse('recipe-untrusted', 'source', untrustedRecipeMessage(`${snapshot.store.description}: ${snapshot.path}`));
    const origin = { source: snapshot.name, resolveDir, workingDir: workingDir.path, values: childRecipe?.values ?? {} };
    recipeServers = selection.recipeServers.map((server) => (server.origin === undefined ? { ...server, origin } : server));
  }
  const toolsets = selection.toolsets;
  const toolFilter = selection.toolFilter;
  const run = await planRunOptions({ request, agentRun, recipeOutputSchema, toolsets, workingDir: workingDir.path, workersDiskIsLocal: context.workersDiskIsLocal ?? true, allowBypass: context.allowBypassPermissions, recipeFile: snapshot ? `${snapshot.store.description}: ${snapshot.path}` : undefined });
  if (!run.ok) return run;
  warnings.push(...run.warnings);
  const toolPolicy = [...selection.toolPolicy, ...(run.policyLayer ? [run.policyLayer] : [])];

  // A fork keeps the parent's route as it is (forkRefusal turned away anything that would change it).
  const route = request.fork && parent.route
    ? { ok: true as const, route: forkRoute(parent.route, request.temperature), warnings: [] }
    : chooseModel({
        providers: context.providers,
        override: context.override,
        request: {
          ...(request.provider ? { provider: request.provider } : {}),
          ...(request.model ? { model: request.model } : {}),
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
          ...(request.reasoning_effort !== undefined ? { reasoningEffort: request.reasoning_effort } : {}),
        },
        recipe: {
          ...(recipeSettings.provider ? { provider: recipeSettings.provider } : {}),
          ...(recipeSettings.model && snapshot?.definition.type !== 'agent' ? { model: recipeSettings.model } : {}),
          ...(recipeSettings.temperature !== undefined ? { temperature: recipeSettings.temperature } : {}),
          ...(recipeSettings.reasoningEffort !== undefined ? { reasoningEffort: recipeSettings.reasoningEffort } : {}),
        },
        ...(snapshot?.definition.type === 'agent' && recipeSettings.model ? { agentModel: recipeSettings.model } : {}),
        ...(agentEffort !== undefined ? { agentEffort } : {}),
        ...(context.configuredDefault ? { configuredDefault: context.configuredDefault } : {}),
        ...(parent.route ? { parent: parent.route } : {}),
      });
  if (!route.ok) return route;
  warnings.push(...route.warnings);

  // A request lowers the operator's limit, never raises it (SEMANTICS §5 "Tenants and secrets"): a model asks like the API does.
  if (request.max_turns !== undefined && request.max_turns > context.configuredMaxTurns) {
    return refuse('max-turns-over-limit', 'max_turns', `max_turns ${request.max_turns} is above this server's limit of ${context.configuredMaxTurns} turns per subagent (ERRAND_SUBAGENT_MAX_TURNS); ask for at most ${context.configuredMaxTurns}, or leave max_turns out.`);
  }
  const parentRecipeMaxTurns = parent.recipe?.snapshot.definition.type === 'recipe' ? parent.recipe.snapshot.definition.recipe.settings?.max_turns ?? undefined : undefined;
  let maxTurns = chooseMaxTurns(request.max_turns, recipeSettings.maxTurns, parentRecipeMaxTurns, context.configuredMaxTurns);
  const definitionFile = snapshot ? `${snapshot.store.description}: ${snapshot.path}` : undefined;
  // A definition (recipe, agent file, or the session's recipe) lowers the operator's limits, never raises them (SEMANTICS §6).
  if (request.max_turns === undefined && (recipeSettings.maxTurns ?? parentRecipeMaxTurns) !== undefined) {
    const own = recipeSettings.maxTurns !== undefined;
    const field = own ? (snapshot?.definition.type === 'agent' ? 'maxTurns' : 'settings.max_turns') : "the session recipe's settings.max_turns";
    const file = own ? definitionFile : parent.recipe ? `${parent.recipe.snapshot.store.description}: ${parent.recipe.snapshot.path}` : undefined;
    const capped = capDefinitionLimit({ field, ...(file ? { file } : {}), asked: maxTurns, limit: context.configuredMaxTurns, setting: 'ERRAND_SUBAGENT_MAX_TURNS', unit: 'turns' });
    maxTurns = capped.value;
    if (capped.warning) warnings.push(capped.warning);
  }
  let recipeMaxOutputTokens = recipeSettings.maxOutputTokens;
  const outputLimit = context.providers.find((choice) => choice.name === route.route.provider)?.maxOutputTokens?.[route.route.model] ?? context.configuredMaxOutputTokens;
  if (request.max_output_tokens === undefined && recipeMaxOutputTokens !== undefined && outputLimit !== undefined) {
    const setting = context.configuredMaxOutputTokens === outputLimit ? 'ERRAND_MAX_OUTPUT_TOKENS' : `maxOutputTokens of model ${route.route.model} in the provider configuration`;
    const capped = capDefinitionLimit({ field: 'settings.max_output_tokens', ...(definitionFile ? { file: definitionFile } : {}), asked: recipeMaxOutputTokens, limit: outputLimit, setting, unit: 'tokens' });
    recipeMaxOutputTokens = capped.value;
    if (capped.warning) warnings.push(capped.warning);
  }
  if (retry) {
    // A check is a shell command like run_command: its time limit is run_command's at most.
    for (const [key, field] of [['timeoutSeconds', 'retry.timeout_seconds'], ['onFailureTimeoutSeconds', 'retry.on_failure_timeout_seconds']] as const) {
      const capped = capDefinitionLimit({ field, ...(definitionFile ? { file: definitionFile } : {}), asked: retry[key], limit: Math.floor(runCommandMaxTimeoutMs / 1_000), setting: 'the run_command time limit', unit: 'seconds' });
      retry = { ...retry, [key]: capped.value };
      if (capped.warning) warnings.push(capped.warning);
    }
  }

  // Caps (decision 0027): what the request or the recipe asks for, within the operator's and what the parent has left.
  const modelName = `${route.route.provider}/${route.route.model}`;
  const prices = context.providers.find((choice) => choice.name === route.route.provider)?.prices?.[route.route.model];
  const caps = chooseCaps({
    request: { timeBudgetSecs: request.time_budget, costBudgetUsd: request.cost_budget_usd },
    definition: { timeBudgetSecs: recipeSettings.timeBudgetSecs, costBudgetUsd: recipeSettings.costBudgetUsd, file: definitionFile },
    parent: { timeMs: parent.remainingTimeMs, costMicroUsd: parent.remainingCostMicroUsd },
    operator: context.caps ?? {},
    model: modelName,
    prices,
  });
  if (!caps.ok) return caps;
  warnings.push(...caps.warnings);
  const tokenBudget = childCap(request.token_budget, parent.remainingBudget);
  let firstPrompt: { tokens: number; costMicroUsd?: number; fork: boolean } | undefined;
  if (request.fork || request.context !== undefined) {
    // A fork repeats the parent's whole conversation, a context sits in every prompt: estimated before it starts (SEMANTICS §6).
    const ownTokens = [instructions, request.context, request.persona, prompt].reduce((sum, part) => sum + (part ? estimateMessageTokens({ role: 'user', content: part }) : 0), 0);
    const forkTokens = request.fork ? parent.conversationTokens : undefined;
    const refused = firstPromptRefusal(
      { ownTokens, forkTokens, fork: request.fork === true },
      { tokens: tokenBudget, costMicroUsd: caps.costBudgetMicroUsd },
      { name: modelName, prices },
    );
    // A fork's prompt is its conversation; another's grows with `context`.
    if (refused) return refuse('first-prompt-too-large', request.fork ? 'fork' : 'context', refused);
    const tokens = ownTokens + (forkTokens ?? 0);
    firstPrompt = { tokens, ...(prices ? { costMicroUsd: Math.round(tokens * prices.input) } : {}), fork: request.fork === true };
  }

  const source: SourceSummary | undefined = snapshot
    ? { kind: snapshot.kind, name: snapshot.name, store: snapshot.store.id, version: snapshot.version, path: snapshot.path }
    : undefined;
  const input: SubagentInput = {
    label: labelOf(request, snapshot),
    prompt: prompt ?? '',
    system: {
      ...(instructions ? { instructions } : {}),
      ...(request.context ? { context: request.context } : {}),
      ...(request.persona ? { persona: request.persona } : {}),
      ...(skills ? { skills } : {}),
      ...(memory ? { memory: memory.prompt } : {}),
    },
    ...(memory ? { memory: memory.location } : {}),
    route: route.route,
    ...(request.fork && parent.conversation ? { fork: parent.conversation } : {}),
    toolsets,
    ...(toolFilter ? { toolFilter } : {}),
    maxTurns,
    workingDir: workingDir.path,
    depth: parent.childDepth,
    maxDepth: parent.maxDepth,
    ...(source ? { source } : {}),
    parent: { workflowId: parent.workflowId, taskId: parent.taskId },
    ...(request.continuable ? { continuable: true } : {}),
    ...(parent.tenant ? { tenant: parent.tenant } : {}),
    ...(tokenBudget !== undefined ? { tokenBudget } : {}),
    ...(caps.timeBudgetMs !== undefined ? { timeBudgetMs: caps.timeBudgetMs } : {}),
    ...(caps.costBudgetMicroUsd !== undefined ? { costBudgetMicroUsd: caps.costBudgetMicroUsd } : {}),
    ...(request.max_output_tokens !== undefined ? { maxOutputTokens: request.max_output_tokens } : recipeMaxOutputTokens !== undefined ? { maxOutputTokens: recipeMaxOutputTokens } : {}),
    ...(request.continuable && context.tasks.continuableIdleTimeoutMs !== undefined ? { idleTimeoutMs: context.tasks.continuableIdleTimeoutMs } : {}),
    // `permissionMode: auto`: a person decides what asks, whatever the parent's approvers (tools/permission-mode.ts).
    ...(run.approvers ? { approvers: run.approvers } : parent.approvers ? { approvers: parent.approvers } : {}),
    activity: parent.activity,
    tasks: context.tasks,
    ...(childRecipe ? { recipe: childRecipe } : {}),
    ...(toolPolicy.length > 0 ? { toolPolicy } : {}),
    ...(recipeServers.length > 0 ? { recipeServers: recipeServers.map((server) => ({ declaredName: server.declaredName, config: { ...server.config }, ...(server.origin ? { origin: server.origin } : {}) })) } : {}),
    approvalTimeoutMs: context.approvalTimeoutMs,
    ...(retry ? { retry } : {}),
    ...(run.outputSchema ? { outputSchema: run.outputSchema } : {}),
    ...(run.isolation ? { isolation: run.isolation } : {}),
    ...(agentHooks ? { hooks: withServerNames(agentHooks, recipeServers) } : {}),
  };
  return { ok: true, input, ...(source ? { source } : {}), warnings, ...(agentRun?.background ? { forceBackground: true } : {}), ...(firstPrompt ? { firstPrompt } : {}) };
}

/**
 * The memory folder of an agent with `memory`, and the start of its MEMORY.md. The project of `project` and
 * `local` is the working directory below the working root, taken from the configured root or its real path
 * (a worker's working directories are real paths; the API joins names onto the configured root).
 */
async function loadMemory(
  scope: string,
  agent: string,
  file: string,
  workingDir: string,
  tenant: string | undefined,
  context: PlanContext,
): Promise<{ ok: true; memory: { location: AgentMemoryLocation; prompt: MemoryPromptPart } } | PlanningRefusal> {
  if (!context.memoryStore) return refuse('memory-unavailable', 'source', `${file}: memory: this server has no data store for agent memory; remove memory from the agent file`);
  const configuredRoot = context.mcp.workingRoot;
  const realRoot = configuredRoot === undefined ? undefined : await realpath(configuredRoot).catch(() => configuredRoot);
  const root = realRoot !== undefined && isInside(realRoot, workingDir) ? realRoot : configuredRoot;
  try {
    const location = memoryLocationFor({ tenant, scope, agent, workingDir, ...(root !== undefined ? { workingRoot: root } : {}), file });
    const excerpt = await new AgentMemory(context.memoryStore, location).promptExcerpt();
    return { ok: true, memory: { location, prompt: { scope: location.scope, excerpt: excerpt?.text ?? '', truncated: excerpt?.truncated ?? false } } };
  } catch (error) {
    if (isAgentMemoryError(error)) return refuse('memory-unavailable', 'source', error.message);
    throw error;
  }
}

/** The hooks with the declared name of each server the delegation runs (hooks match `mcp__<declared>__<tool>`). */
function withServerNames(hooks: AgentHooksWire, servers: ReadonlyArray<{ declaredName: string; config: { name: string } }>): AgentHooksWire {
  if (servers.length === 0) return hooks;
  return { ...hooks, serverNames: Object.fromEntries(servers.map((server) => [server.config.name, server.declaredName])) };
}

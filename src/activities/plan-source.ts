import { realpath } from 'node:fs/promises';
import type { AgentHooksWire } from '../contracts/agent-hooks';
import type { DelegationParent, RunningRecipe } from '../contracts/activities';
import type { DelegateRequest } from '../contracts/delegation';
import { refuse, type PlanningRefusal } from '../contracts/planning-failure';
import type { RecipeExtension } from '../contracts/recipe-schema';
import type { SourceSnapshot } from '../contracts/source';
import type { AgentMemoryLocation, MemoryPromptPart, PreloadedSkill, SubagentInput } from '../contracts/subagent';
import { recipeRetryPolicy } from '../domain/recipe-retry';
import { renderSource } from '../sources/render-source';
import { findSkills } from '../sources/skill-sources';
import { isInside } from '../tools/confine-path';
import { orchestrationToolsMatched } from './agent-hook-matching';
import { AgentMemory, isAgentMemoryError, memoryLocationFor } from './agent-memory';
import type { PlanContext } from './plan-context';
import type { AgentRunFields } from './plan-run-options';

/** The prompt an agent gets when it is delegated with no task of its own (SEMANTICS §2). */
export const agentDefaultPrompt =
  'Proceed with your expertise: carry out the work your instructions describe, then give your final answer.';

/** What a recipe's settings or an agent file ask of the run (each ranks where SEMANTICS §3 puts it). */
export interface DefinitionSettings {
  provider?: string;
  model?: string;
  temperature?: number;
  maxTurns?: number;
  maxOutputTokens?: number;
  reasoningEffort?: string;
  timeBudgetSecs?: number;
  costBudgetUsd?: number;
}

/** The tool lists of an agent file (they narrow the tools the child gets, see selectTools). */
export interface AgentToolLists {
  tools?: string[];
  disallowedTools?: string[];
  mcpServerNames?: string[];
  mcpServers?: RecipeExtension[];
}

/** What the delegated source (a recipe, a sub-recipe or an agent file), rendered, gives the child. */
export interface PlannedSource {
  snapshot?: SourceSnapshot;
  instructions?: string;
  prompt?: string;
  settings: DefinitionSettings;
  /** An agent file's `effort` (Claude Code's level): ranks where a recipe's reasoning_effort does. */
  agentEffort?: string;
  childRecipe?: RunningRecipe;
  agentTools?: AgentToolLists;
  /** Claude Code agent fields that shape the run (SEMANTICS §5): see planRunOptions. */
  agentRun?: AgentRunFields;
  retry?: SubagentInput['retry'];
  recipeOutputSchema?: unknown;
  recipeExtensions?: RecipeExtension[] | null;
  recipeToolPolicy?: unknown;
  /** An agent file's `skills` and `memory` (decision 0031): read now, put into the system prompt at start. */
  skills?: PreloadedSkill[];
  memory?: { location: AgentMemoryLocation; prompt: MemoryPromptPart };
  agentHooks?: AgentHooksWire;
  warnings: string[];
}

/** `<store>: <path>` of a source, as messages and hooks name its file. */
export function definitionFileOf(snapshot: SourceSnapshot): string {
  return `${snapshot.store.description}: ${snapshot.path}`;
}

/**
 * Resolves and renders the request's source, if it names one, and reads what it gives the child: its
 * instructions and prompt, its settings, its tool lists, an agent file's skills, memory and hooks. Without
 * a source the request's instructions are the prompt.
 */
export async function planSource(request: DelegateRequest, parent: DelegationParent, context: PlanContext, workingDir: string): Promise<{ ok: true; source: PlannedSource } | PlanningRefusal> {
  if (!request.source) return { ok: true, source: { prompt: request.instructions, settings: {}, warnings: [] } };
  const resolved = await context.resolver.resolve(request.source, {
    ...(parent.recipe ? { sessionRecipe: parent.recipe.snapshot, sessionValues: parent.recipe.values } : {}),
  });
  if (!resolved.ok) {
    return resolved.reason === 'not_found' ? refuse('source-not-found', 'source', resolved.message, resolved.suggestions) : refuse('source-invalid', 'source', resolved.message);
  }
  const snapshot = resolved.snapshot;
  const warnings = [...resolved.warnings];
  if (snapshot.subRecipe?.sequentialWhenRepeated) {
    warnings.push(`sub-recipe ${snapshot.name} asks for sequential_when_repeated, which errand does not honour: several delegate calls in one turn run in parallel; make them in separate turns to run them one after another`);
  }
  const rendered = await renderSource(snapshot, request.parameters ?? {}, { workingDirectory: workingDir, ...(context.paths ? { paths: context.paths } : {}) });
  if (!rendered.ok) return refuse('parameters-invalid', 'parameters', `source "${snapshot.name}" cannot run with these parameters:\n- ${rendered.errors.join('\n- ')}`);
  warnings.push(...(rendered.warnings ?? []));
  if (snapshot.definition.type === 'agent') return planAgent(snapshot, snapshot.definition.agent, request, parent, context, workingDir, warnings);
  const recipe = rendered.recipe;
  const sourcePrompt = rendered.prompt ?? undefined;
  const settings = recipe?.settings ?? undefined;
  return {
    ok: true,
    source: {
      snapshot,
      instructions: rendered.instructions ?? undefined,
      prompt: [sourcePrompt, request.instructions].filter((part): part is string => Boolean(part && part.trim())).join('\n\n') || 'Carry out your instructions, then give your final answer.',
      settings: {
        ...(settings?.goose_provider ? { provider: settings.goose_provider } : {}),
        ...(settings?.goose_model ? { model: settings.goose_model } : {}),
        ...(typeof settings?.temperature === 'number' ? { temperature: settings.temperature } : {}),
        ...(typeof settings?.max_turns === 'number' ? { maxTurns: settings.max_turns } : {}),
        ...(typeof settings?.max_output_tokens === 'number' ? { maxOutputTokens: settings.max_output_tokens } : {}),
        ...(typeof settings?.reasoning_effort === 'string' ? { reasoningEffort: settings.reasoning_effort } : {}),
        ...(typeof settings?.time_budget === 'number' ? { timeBudgetSecs: settings.time_budget } : {}),
        ...(typeof settings?.cost_budget_usd === 'number' ? { costBudgetUsd: settings.cost_budget_usd } : {}),
      },
      // A recipe's own extensions are honoured within what the operator allows (goose issue 9949): see selectTools.
      recipeExtensions: recipe?.extensions,
      recipeToolPolicy: recipe?.['tool_policy'],
      ...(recipe ? { childRecipe: { snapshot, values: rendered.values }, retry: recipeRetryPolicy(recipe), recipeOutputSchema: recipe.response?.json_schema } : {}),
      warnings,
    },
  };
}

type AgentDefinition = Extract<SourceSnapshot['definition'], { type: 'agent' }>['agent'];

/** An agent file (Claude Code's format): its instructions, settings, tool lists, skills, memory and hooks. */
async function planAgent(
  snapshot: SourceSnapshot,
  agent: AgentDefinition,
  request: DelegateRequest,
  parent: DelegationParent,
  context: PlanContext,
  workingDir: string,
  warnings: string[],
): Promise<{ ok: true; source: PlannedSource } | PlanningRefusal> {
  const agentFile = definitionFileOf(snapshot);
  let skills: PreloadedSkill[] | undefined;
  if (agent.skills && agent.skills.length > 0) {
    const found = await findSkills(agent.skills, context.resolver.skillPlaces, agentFile);
    if (!found.ok) return refuse('skills-unavailable', 'source', found.message);
    skills = found.skills;
  }
  let memory: PlannedSource['memory'];
  if (agent.memory) {
    const loaded = await loadMemory(agent.memory, agent.name, agentFile, workingDir, parent.tenant, context);
    if (!loaded.ok) return loaded;
    memory = loaded.memory;
  }
  // The workflow runs orchestration tools itself: which of them have tool hooks is found here, with RE2.
  const orchestrationTools = agent.hooks ? orchestrationToolsMatched(agent.hooks) : undefined;
  const agentHooks: AgentHooksWire | undefined = agent.hooks
    ? {
        ...agent.hooks,
        agentName: agent.name,
        file: agentFile,
        ...(agent.permissionMode ? { permissionMode: agent.permissionMode } : {}),
        ...(orchestrationTools ? { orchestrationTools } : {}),
      }
    : undefined;
  return {
    ok: true,
    source: {
      snapshot,
      instructions: agent.instructions,
      prompt: request.instructions ?? agentDefaultPrompt,
      settings: {
        ...(agent.model && !agent.inheritModel ? { model: agent.model } : {}),
        // An agent's maxTurns ranks where a recipe's settings.max_turns does.
        ...(agent.maxTurns !== undefined ? { maxTurns: agent.maxTurns } : {}),
      },
      ...(agent.effort !== undefined ? { agentEffort: agent.effort } : {}),
      agentTools: {
        ...(agent.tools ? { tools: agent.tools } : {}),
        ...(agent.disallowedTools ? { disallowedTools: agent.disallowedTools } : {}),
        ...(agent.mcpServerNames ? { mcpServerNames: agent.mcpServerNames } : {}),
        ...(agent.mcpServers ? { mcpServers: agent.mcpServers } : {}),
      },
      agentRun: {
        file: agentFile,
        ...(agent.permissionMode ? { permissionMode: agent.permissionMode } : {}),
        ...(agent.background ? { background: true } : {}),
        ...(agent.isolation ? { isolation: agent.isolation } : {}),
      },
      ...(skills ? { skills } : {}),
      ...(memory ? { memory } : {}),
      ...(agentHooks ? { agentHooks } : {}),
      warnings,
    },
  };
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

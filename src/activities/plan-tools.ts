import type { DelegationParent, RecipeServerWire } from '../contracts/activities';
import type { DelegateRequest } from '../contracts/delegation';
import { refuse, type PlanningRefusal } from '../contracts/planning-failure';
import { mcpServerConfigSchema, type RecipeServer } from '../tools/mcp-config';
import { agentToolsRefusal, selectTools, type ToolSelection } from '../tools/tool-selection';
import { recipeFolderTrusted, untrustedRecipeMessage } from '../sources/recipe-server-trust';
import type { PlanContext } from './plan-context';
import { definitionFileOf, type AgentToolLists, type PlannedSource } from './plan-source';

/** A recipe server carried in a workflow input, re-validated before use (nothing starts on a forged config). */
function toRecipeServer(wire: RecipeServerWire): RecipeServer[] {
  const parsed = mcpServerConfigSchema.safeParse(wire.config);
  return parsed.success ? [{ declaredName: wire.declaredName, config: parsed.data, ...(wire.origin ? { origin: wire.origin } : {}) }] : [];
}

/** The child's tools: the selection, with every server the delegated definition declares given its origin. */
export interface PlannedTools {
  selection: ToolSelection;
  recipeServers: RecipeServer[];
}

/**
 * Tools: parent ∩ `extensions` ∩ the recipe's extensions ∩ the agent's tools − disallowedTools (unknown
 * names reported, not fatal). An agent whose lists match nothing here is refused, naming the fields
 * (SEMANTICS §6); servers the delegated definition declares itself run only from a trusted folder.
 */
export async function planTools(request: DelegateRequest, parent: DelegationParent, context: PlanContext, source: PlannedSource, workingDir: string): Promise<({ ok: true } & PlannedTools) | PlanningRefusal> {
  const { snapshot, agentTools, recipeExtensions, recipeToolPolicy } = source;
  const select = (agent: AgentToolLists | undefined) => selectTools({
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
    const { tools: _tools, disallowedTools: _disallowed, ...servers } = agentTools;
    const refusal = agentToolsRefusal(agentTools, selection, select(servers), definitionFileOf(snapshot));
    if (refusal) return refuse('no-tools-left', 'source', refusal);
  }
  // Servers the delegated definition declares itself: the worker checks them against it before they start.
  const ownServers = selection.recipeServers.filter((server) => server.origin === undefined);
  if (ownServers.length === 0 || !snapshot) return { ok: true, selection, recipeServers: selection.recipeServers };
  const trust = { workingRoot: context.mcp.workingRoot ?? '/', trustedDirs: context.mcp.trustedRecipeDirs ?? [] };
  const resolveDir = context.resolveDir ?? parent.workingDir;
  if (!(await recipeFolderTrusted(snapshot.recipeDir, trust, resolveDir))) return refuse('recipe-untrusted', 'source', untrustedRecipeMessage(definitionFileOf(snapshot)));
  const origin = { source: snapshot.name, resolveDir, workingDir, values: source.childRecipe?.values ?? {} };
  return { ok: true, selection, recipeServers: selection.recipeServers.map((server) => (server.origin === undefined ? { ...server, origin } : server)) };
}

import { z } from 'zod';
import type { ToolSpec } from '../contracts/model';
import { toolNameSeparator } from '../contracts/limits/tools';
import { isOrchestrationTool, OrchestrationTool, type OrchestrationToolName } from '../domain/orchestration-tools';
import { matchesPattern, splitToolName } from './tool-name';

/**
 * Tool policies: per toolset or tool, `allow` (run), `ask` (run after a human approves) or `deny` (never
 * offered). The operator sets a policy; recipes and delegations add narrowings that can only make it
 * stricter. Pure: no I/O.
 *
 * Resolution of one name:
 * - within one layer (the operator's policy, or one narrowing) the most specific matching rule wins: an
 *   exact qualified name beats a pattern, and among patterns the one with more literal characters wins
 *   (a toolset name counts as `<toolset>__*`); ties go to the stricter decision; with no matching rule,
 *   the layer's `default` applies (operator: `allow` unless set; a narrowing without one has no say);
 * - across layers the strictest decision wins (deny > ask > allow), so a narrowing never widens.
 *
 * The orchestration tools (`load`, `delegate`, `send_message`, `list_subagent_models`, `approve`: bare
 * names, no toolset) follow the rules that name or match them, but not a layer's `default`: a policy such as
 * `{"default": "deny", "rules": {"developer": "allow"}}` is about toolsets and must not take `load` away.
 * Who may decide an `ask` is `approvers`: a person (`human`, the default) or also the delegating model.
 */

/** The decisions, strictest last. */
export const ToolPolicyDecision = { allow: 'allow', ask: 'ask', deny: 'deny' } as const;
/** One decision. */
export type ToolPolicyDecision = (typeof ToolPolicyDecision)[keyof typeof ToolPolicyDecision];

const strictness: Record<ToolPolicyDecision, number> = { allow: 0, ask: 1, deny: 2 };

/** A decision in configuration. */
export const toolPolicyDecisionSchema = z.enum(['allow', 'ask', 'deny'], { error: 'expected allow, ask or deny' });

/** A rule key: a toolset name, a qualified tool name, or a pattern with `*`. */
const ruleKeySchema = z.string().regex(/^[A-Za-z0-9_*-]+$/, { error: 'expected a toolset name, a qualified tool name (toolset__tool) or a pattern with *' });

/** Who may decide a tool call under `ask`. */
export const Approvers = {
  /** Only a person (API, CLI): "ask" means ask a human. The default. */
  human: 'human',
  /** A person, or the model of the delegating parent (its `approve` tool). */
  humanOrParent: 'human-or-parent',
} as const;
/** One of {@link Approvers}. */
export type Approvers = (typeof Approvers)[keyof typeof Approvers];

/**
 * The operator's policy (`toolPolicy` in the configuration file), e.g.
 * `{ "default": "allow", "rules": { "developer__run_command": "ask", "github": "ask", "github__get_*": "allow" }, "approvers": "human" }`.
 */
export const toolPolicyConfigSchema = z.strictObject({
  default: toolPolicyDecisionSchema.default('allow'),
  rules: z.record(ruleKeySchema, toolPolicyDecisionSchema).default({}),
  approvers: z.enum([Approvers.human, Approvers.humanOrParent], { error: 'expected "human" (only a person decides, the default) or "human-or-parent" (the delegating model may decide too)' }).default(Approvers.human),
});
/** The operator's parsed policy. */
export type ToolPolicyConfig = z.output<typeof toolPolicyConfigSchema>;

/**
 * A narrowing from a recipe (`tool_policy` key) or a delegation (`tool_policy` argument): same shape,
 * `default` optional. It can only make the result stricter. JSON: it travels in the workflow input.
 */
export const toolPolicyNarrowingSchema = z.strictObject({
  default: toolPolicyDecisionSchema.optional(),
  rules: z.record(ruleKeySchema, toolPolicyDecisionSchema).optional(),
});
/**
 * What an agent file's `permissionMode` adds to a layer (src/domain/permission-mode.ts). Never read from
 * a recipe or a request (their schema above does not accept these keys): only planning sets them.
 */
export interface PermissionModeEffects {
  /** `dontAsk`: a tool whose result would be `ask` is denied instead (nobody is there to answer). */
  askBecomes?: 'deny';
  /**
   * `acceptEdits` / `bypassPermissions`: rule keys (names or patterns) of tools that run without asking
   * where the operator's policy asks only through its `default`. An explicit operator rule still stands.
   */
  allowOverDefaultAsk?: string[];
}

/** A parsed narrowing, with the effects of a permission mode when planning added one. */
export type ToolPolicyNarrowing = z.output<typeof toolPolicyNarrowingSchema> & PermissionModeEffects;

/** The strictest of the decisions (allow for none). */
export function strictest(decisions: readonly ToolPolicyDecision[]): ToolPolicyDecision {
  let result: ToolPolicyDecision = 'allow';
  for (const decision of decisions) if (strictness[decision] > strictness[result]) result = decision;
  return result;
}

/** Specificity of `key` for `qualifiedName`, or undefined when it does not match. */
function specificity(key: string, qualifiedName: string): number | undefined {
  if (key === qualifiedName) return Number.MAX_SAFE_INTEGER;
  const toolsetName = splitToolName(qualifiedName)?.toolsetName;
  const pattern = !key.includes('*') && !key.includes(toolNameSeparator) ? `${key}${toolNameSeparator}*` : key;
  if (key === toolsetName || (pattern.includes('*') && matchesPattern(pattern, qualifiedName))) {
    return pattern.replace(/\*/g, '').length;
  }
  return undefined;
}

/** The decision of the most specific rule of one layer that matches, or undefined when none does. */
function ruleDecision(layer: ToolPolicyNarrowing | ToolPolicyConfig, qualifiedName: string): ToolPolicyDecision | undefined {
  let best: { rank: number; decision: ToolPolicyDecision } | undefined;
  for (const [key, decision] of Object.entries(layer.rules ?? {})) {
    const rank = specificity(key, qualifiedName);
    if (rank === undefined) continue;
    if (!best || rank > best.rank || (rank === best.rank && strictness[decision] > strictness[best.decision])) best = { rank, decision };
  }
  return best?.decision;
}

/**
 * The decision of one layer, or undefined when it has no matching rule and no default. An orchestration
 * tool gets only what a rule says (see the module comment).
 */
export function layerDecision(layer: ToolPolicyNarrowing | ToolPolicyConfig, qualifiedName: string): ToolPolicyDecision | undefined {
  const byRule = ruleDecision(layer, qualifiedName);
  return isOrchestrationTool(qualifiedName) ? byRule : byRule ?? layer.default;
}

/**
 * The policy of one tool: the operator's decision, made stricter by each narrowing (deny > ask > allow).
 * No operator policy means `allow` before narrowings. Permission-mode effects apply around that: an
 * operator `ask` that comes only from its `default` becomes `allow` for the tools a layer lists in
 * `allowOverDefaultAsk`; and with `askBecomes: deny` in any layer, a final `ask` is a `deny`.
 */
export function resolvePolicy(
  operator: ToolPolicyConfig | undefined,
  narrowings: readonly ToolPolicyNarrowing[],
  qualifiedToolName: string,
): ToolPolicyDecision {
  const byRule = operator ? ruleDecision(operator, qualifiedToolName) : undefined;
  // An orchestration tool follows only rules that name or match it, never a default meant for toolsets.
  let operatorDecision: ToolPolicyDecision = byRule ?? (isOrchestrationTool(qualifiedToolName) ? 'allow' : operator?.default ?? 'allow');
  const relaxed = narrowings.some((layer) => (layer.allowOverDefaultAsk ?? []).some((key) => specificity(key, qualifiedToolName) !== undefined));
  if (byRule === undefined && operatorDecision === 'ask' && relaxed) operatorDecision = 'allow';
  const decisions: ToolPolicyDecision[] = [operatorDecision];
  for (const narrowing of narrowings) {
    const decision = layerDecision(narrowing, qualifiedToolName);
    if (decision !== undefined) decisions.push(decision);
  }
  const result = strictest(decisions);
  return result === 'ask' && narrowings.some((layer) => layer.askBecomes === 'deny') ? 'deny' : result;
}

/** Tool specs split by policy: what the model is offered, and which of those need an approval per call. */
export interface PolicedSpecs {
  /** Specs without the denied tools (a denied tool is never offered). */
  offered: ToolSpec[];
  /** Qualified names of offered tools whose calls need a human approval (`ask`). */
  needsApproval: string[];
}

/** Applies a policy to qualified tool specs (as `ToolsetRegistry.specsFor` returns them). */
export function applyToolPolicy(specs: readonly ToolSpec[], operator: ToolPolicyConfig | undefined, narrowings: readonly ToolPolicyNarrowing[]): PolicedSpecs {
  const offered: ToolSpec[] = [];
  const needsApproval: string[] = [];
  for (const spec of specs) {
    const decision = resolvePolicy(operator, narrowings, spec.name);
    if (decision === 'deny') continue;
    offered.push(spec);
    if (decision === 'ask') needsApproval.push(spec.name);
  }
  return { offered, needsApproval };
}

/** Whether a call of this tool needs a human approval before it runs. */
export function needsApproval(operator: ToolPolicyConfig | undefined, narrowings: readonly ToolPolicyNarrowing[], qualifiedToolName: string): boolean {
  return resolvePolicy(operator, narrowings, qualifiedToolName) === 'ask';
}

/**
 * What runTool should do with a call, checked again at run time (the policy may have changed since the
 * model was offered the tool, and a model may call a tool it was not offered): run it, refuse it, or
 * refuse it for want of an approval. `approved` is true when the workflow passes a granted approval.
 */
export function checkToolCall(
  operator: ToolPolicyConfig | undefined,
  narrowings: readonly ToolPolicyNarrowing[],
  qualifiedToolName: string,
  approved: boolean,
): { run: true } | { run: false; message: string } {
  const decision = resolvePolicy(operator, narrowings, qualifiedToolName);
  if (decision === 'deny') return { run: false, message: `The tool ${qualifiedToolName} is not allowed by policy.` };
  if (decision === 'ask' && !approved) {
    return { run: false, message: `The tool ${qualifiedToolName} needs a human approval before each call, and this call was not approved.` };
  }
  return { run: true };
}

/** What the policy makes of the orchestration tools a workflow wants to offer its model. */
export interface OrchestrationToolPolicy {
  /** The tools to offer, in the order asked for: not denied, and `approve` only where the parent may approve. */
  offered: OrchestrationToolName[];
  /** Offered tools whose calls wait for a human approval (`ask`), like any other tool under `ask`. */
  needsApproval: OrchestrationToolName[];
  /** Asked-for tools that are not offered, and whose calls must be refused if a model makes them anyway. */
  refused: OrchestrationToolName[];
  /** Whether this workflow's model may decide its tasks' approvals (see {@link parentMayApprove}). */
  parentMayApprove: boolean;
}

/**
 * Whether the delegating model may approve or deny its tasks' tool calls under `ask`: only when the
 * operator chose `approvers: "human-or-parent"` and no rule makes `approve` stricter than `allow`. With
 * the default (`human`), the parent gets no approval notices and no `approve` tool, and a decision that
 * comes from a parent must be refused: "ask" then means a person.
 */
export function parentMayApprove(operator: ToolPolicyConfig | undefined, narrowings: readonly ToolPolicyNarrowing[]): boolean {
  if ((operator?.approvers ?? Approvers.human) !== Approvers.humanOrParent) return false;
  return resolvePolicy(operator, narrowings, OrchestrationTool.approve) === 'allow';
}

/**
 * Applies the policy to the orchestration tools a workflow would offer (`requested`, e.g. `load`,
 * `delegate`, `send_message`, `list_subagent_models`, `approve`). Names that are not orchestration tools
 * are ignored. Pure, so workflow code may call it with the operator policy it was given.
 */
export function applyOrchestrationPolicy(
  operator: ToolPolicyConfig | undefined,
  narrowings: readonly ToolPolicyNarrowing[],
  requested: readonly string[],
): OrchestrationToolPolicy {
  const mayApprove = parentMayApprove(operator, narrowings);
  const offered: OrchestrationToolName[] = [];
  const needsApprovalNames: OrchestrationToolName[] = [];
  const refused: OrchestrationToolName[] = [];
  for (const name of requested) {
    if (!isOrchestrationTool(name) || offered.includes(name) || refused.includes(name)) continue;
    const decision = resolvePolicy(operator, narrowings, name);
    if (decision === 'deny' || (name === OrchestrationTool.approve && !mayApprove)) {
      refused.push(name);
      continue;
    }
    offered.push(name);
    if (decision === 'ask') needsApprovalNames.push(name);
  }
  return { offered, needsApproval: needsApprovalNames, refused, parentMayApprove: mayApprove };
}

/**
 * Whether a decision on a pending approval may count, by who made it: a person always (API, CLI, a
 * test), the parent's model only where {@link parentMayApprove}. For the workflow's approval handlers.
 */
export function mayDecideApproval(decider: 'human' | 'parent', parentMayApproveCalls: boolean): boolean {
  return decider === 'human' || parentMayApproveCalls;
}

/** The `approvers` a top-level session or delegation runs with: whether its model may decide its children's calls. */
export function approversFor(operator: ToolPolicyConfig | undefined): Approvers {
  return parentMayApprove(operator, []) ? Approvers.humanOrParent : Approvers.human;
}

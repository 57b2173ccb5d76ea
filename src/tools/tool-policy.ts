import { z } from 'zod';
import type { ToolSpec } from '../contracts/model';
import { toolNameSeparator } from '../contracts/limits';
import { splitToolName } from './tool-name';
import { matchesPattern } from './toolset-registry';

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

/**
 * The operator's policy (`toolPolicy` in the configuration file), e.g.
 * `{ "default": "allow", "rules": { "developer__run_command": "ask", "github": "ask", "github__get_*": "allow" } }`.
 */
export const toolPolicyConfigSchema = z.strictObject({
  default: toolPolicyDecisionSchema.default('allow'),
  rules: z.record(ruleKeySchema, toolPolicyDecisionSchema).default({}),
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

/** The decision of one layer's most specific matching rule, or undefined when no rule matches. */
function ruleDecision(layer: ToolPolicyNarrowing | ToolPolicyConfig, qualifiedName: string): ToolPolicyDecision | undefined {
  let best: { rank: number; decision: ToolPolicyDecision } | undefined;
  for (const [key, decision] of Object.entries(layer.rules ?? {})) {
    const rank = specificity(key, qualifiedName);
    if (rank === undefined) continue;
    if (!best || rank > best.rank || (rank === best.rank && strictness[decision] > strictness[best.decision])) best = { rank, decision };
  }
  return best?.decision;
}

/** The decision of one layer, or undefined when it has no matching rule and no default. */
export function layerDecision(layer: ToolPolicyNarrowing | ToolPolicyConfig, qualifiedName: string): ToolPolicyDecision | undefined {
  return ruleDecision(layer, qualifiedName) ?? layer.default;
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
  let operatorDecision: ToolPolicyDecision = byRule ?? operator?.default ?? 'allow';
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

import type { ToolPolicyNarrowingWire } from '../contracts/activities';
import type { DelegateRequest } from '../contracts/delegation';
import { defaultAllowBypassPermissions } from '../contracts/limits/sources';
import type { SubagentInput } from '../contracts/subagent';
import { refuse, type PlanningRefusal } from '../contracts/planning-failure';
import { permissionModeLayer, type PermissionMode } from '../tools/permission-mode';
import { checkOutputSchema } from '../tools/output-schema';
import { findGitWorkTree } from './git-work-tree';

/** The fields of a Claude Code agent file that shape how its delegation runs (SEMANTICS §5). */
export interface AgentRunFields {
  /** The file, for messages (`<store>: <path>`). */
  file: string;
  permissionMode?: PermissionMode;
  background?: boolean;
  isolation?: 'worktree';
}

/** What {@link planRunOptions} needs. */
export interface RunOptionsInput {
  request: DelegateRequest;
  agentRun: AgentRunFields | undefined;
  /** The delegated recipe's `response.json_schema` as written, if any. */
  recipeOutputSchema: unknown;
  /** The recipe file, for messages. */
  recipeFile: string | undefined;
  /** The delegation's toolsets after selection. */
  toolsets: readonly string[];
  /** The confined working directory. */
  workingDir: string;
  /** Whether the working directory's disk is this machine's (see {@link PlanContext.workersDiskIsLocal}). */
  workersDiskIsLocal: boolean | (() => boolean);
  allowBypass: boolean | undefined;
}

/** The run options of a delegation, or why it cannot start. */
export type RunOptions =
  | { ok: true; policyLayer?: ToolPolicyNarrowingWire; approvers?: 'human'; outputSchema?: SubagentInput['outputSchema']; isolation?: 'worktree'; warnings: string[] }
  | PlanningRefusal;

/** Whether the working directory's disk is this machine's (a function is asked only when needed). */
function diskIsLocal(local: boolean | (() => boolean)): boolean {
  return typeof local === 'function' ? local() : local;
}

/**
 * The parts of a plan that come from the agent's permission mode and isolation and from output schemas:
 * - `permissionMode` → one tool-policy layer (src/tools/permission-mode.ts), and for `auto` approvals by a
 *   person only; `bypassPermissions` without the operator's consent is an error;
 * - `output_schema` of the request, else the recipe's `response.json_schema`, checked as a JSON Schema
 *   of an object;
 * - `isolation: worktree` (request, else agent) needs the working directory to be inside a git work tree.
 */
export async function planRunOptions(input: RunOptionsInput): Promise<RunOptions> {
  const warnings: string[] = [];
  let policyLayer: ToolPolicyNarrowingWire | undefined;
  let approvers: 'human' | undefined;
  if (input.agentRun?.permissionMode) {
    const mode = permissionModeLayer(input.agentRun.permissionMode, {
      toolsets: input.toolsets,
      allowBypass: input.allowBypass ?? defaultAllowBypassPermissions,
      where: input.agentRun.file,
    });
    if (!mode.ok) return refuse('permission-mode-refused', 'source', mode.message);
    policyLayer = mode.layer;
    approvers = mode.approvers;
    warnings.push(...mode.warnings);
  }

  let outputSchema: SubagentInput['outputSchema'];
  if (input.request.output_schema !== undefined) {
    const checked = checkOutputSchema(input.request.output_schema, 'output_schema');
    if (!checked.ok) return refuse('output-schema-invalid', 'output_schema', checked.errors.join('; '));
    outputSchema = checked.schema;
    if (input.recipeOutputSchema !== undefined) warnings.push("output_schema of this delegation replaces the recipe's response.json_schema");
  } else if (input.recipeOutputSchema !== undefined) {
    const checked = checkOutputSchema(input.recipeOutputSchema, `${input.recipeFile ? `${input.recipeFile}: ` : ''}response.json_schema`);
    // The recipe's schema came with `source`.
    if (!checked.ok) return refuse('output-schema-invalid', 'source', checked.errors.join('; '));
    outputSchema = checked.schema;
  }

  const isolation = input.request.isolation ?? input.agentRun?.isolation;
  // Checked where the workers' disk is this one (a worker, or an API beside its workers); an API elsewhere
  // (a serverless function) leaves it to the worker's worktree step, which reports the same.
  if (isolation === 'worktree' && diskIsLocal(input.workersDiskIsLocal) && (await findGitWorkTree(input.workingDir)) === undefined) {
    // The request's isolation, else the agent file's (which came with `source`).
    return refuse('isolation-unavailable', input.request.isolation ? 'isolation' : 'source', 'isolation "worktree" needs a git repository, and the working directory is not inside one');
  }
  return {
    ok: true,
    ...(policyLayer ? { policyLayer } : {}),
    ...(approvers ? { approvers } : {}),
    ...(outputSchema ? { outputSchema } : {}),
    ...(isolation ? { isolation } : {}),
    warnings,
  };
}

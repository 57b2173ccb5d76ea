import { z } from 'zod';
import type { JsonValue } from './json';
import { maxSourceFileBytes } from './limits';
import type { WorkflowRunView } from './workflow-run';

/**
 * Bodies and answers of the `/v1/workflows` routes (SEMANTICS §7): a workflow run started from an inline
 * script or a workflow source, its projection, its view and the controls. The wire types the workflow speaks
 * are in workflow-run.ts; these schemas are what the API validates and the OpenAPI document shows.
 */

/**
 * Any JSON value. A request body is JSON already, so nothing more is checked; typed as JsonValue for the
 * handlers (a recursive schema would put a reference the OpenAPI document cannot resolve).
 */
const jsonValueSchema = z.unknown().describe('Any JSON value.') as unknown as z.ZodType<JsonValue>;

/** Why a script or run ended failed (workflow-script.ts's WorkflowScriptDiagnostic). */
const diagnosticSchema = z.object({ kind: z.enum(['syntax', 'unsupported', 'steps', 'time', 'memory', 'error', 'stalled', 'budget', 'agents']), message: z.string(), line: z.number().int().nullable() });

/** Path parameter `{id}`: a workflow run's id. */
export const workflowPathSchema = z.strictObject({
  id: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9._~-]+$/, { error: 'expected a workflow run id such as errand-wf-3f9c2a7b1d4e5f60' })
    .describe('The workflow run id (its Temporal workflow id).'),
});

/** Path parameters of `POST /v1/workflows/{id}/agents/{key}/restart`. */
export const workflowAgentPathSchema = workflowPathSchema.extend({
  key: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9._:~-]+$/, { error: 'expected an agent key as the view lists it' })
    .describe("The agent's key, as `GET /v1/workflows/{id}` lists it under `agents`."),
});

const workflowScriptText = z.string().min(1, { error: 'expected the text of a workflow script' }).max(maxSourceFileBytes, { error: `a workflow script is at most ${maxSourceFileBytes} characters` });

/** What a start takes besides its script. */
const startWorkflowFields = {
  args: jsonValueSchema.optional().describe('The value the script reads as `args`.'),
  tokenBudget: z.number().int().positive().optional().describe('Tokens every agent of the run may use together. The agents running at once share it: each starts with an equal part of what is left (raise it or lower concurrency when agents end budget).'),
  timeBudget: z.number().int().positive().optional().describe('Seconds the whole run may take.'),
  costBudgetUsd: z.number().positive().optional().describe('US dollars every agent of the run may cost together; a projection over it refuses the start. The agents running at once share it: each starts with an equal part of what is left (raise it or lower concurrency when agents end budget).'),
  concurrency: z.number().int().min(1).max(1_000).optional().describe('Agents running at once (default and most: ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS, 16 unless the operator set it).'),
  maxAgents: z.number().int().min(1).max(100_000).optional().describe('agent() calls the run may make (default and most: ERRAND_WORKFLOW_MAX_AGENTS, 1000 unless the operator set it).'),
  dryRun: z.boolean().optional().describe('Answer the projection without starting the run.'),
};

/**
 * Body of `POST /v1/workflows`: exactly one of `script` (inline, as Claude Code writes it: agent(),
 * parallel(), pipeline(), args) or `name` (a workflow source: `.claude/workflows/<name>.js`). A union of two
 * closed objects, so the OpenAPI document says so too (a body with both or neither matches neither).
 */
export const startWorkflowBodySchema = z.union(
  [
    z.strictObject({
      script: workflowScriptText.describe('The workflow script, inline.'),
      scriptName: z.string().min(1).max(128).optional().describe("What the run's view and messages call the inline script (the CLI sends its file's name); `inline script` when absent."),
      ...startWorkflowFields,
    }),
    z.strictObject({ name: z.string().min(1).max(128).describe("A workflow source: `.claude/workflows/<name>.js` in the operator's stores, the project or the user's home."), ...startWorkflowFields }),
  ],
  { error: 'give exactly one of script (the text) or name (a workflow source), with the run\'s args and caps (args, tokenBudget, timeBudget, costBudgetUsd, concurrency, maxAgents, dryRun)' },
);
/** Body of `POST /v1/workflows`, either form. */
export type StartWorkflowBody = z.infer<typeof startWorkflowBodySchema> & { script?: string; scriptName?: string; name?: string };

/** What a projection counted for one model. */
export const workflowProjectionModelSchema = z.object({
  model: z.string(),
  agents: z.number().int(),
  tokensPerAgent: z.number().int(),
  /** Null when the model has no prices. */
  costMicroUsdPerAgent: z.number().int().nullable(),
});

/** A run's projected agents, tokens and cost (src/workflow-scripts/project-workflow-run.ts, decision 0039). */
export const workflowProjectionSchema = z.object({
  /** agent() calls the script made when every agent was answered by a placeholder. */
  agents: z.number().int(),
  /** False when the projection stopped before the script's end (at maxAgents or its round limit). */
  complete: z.boolean(),
  rounds: z.number().int(),
  tokens: z.number().int(),
  /** Null when an agent's model has no prices (its cost is unknown). */
  costMicroUsd: z.number().int().nullable(),
  costUsd: z.number().nullable(),
  unpricedAgents: z.number().int(),
  models: z.array(workflowProjectionModelSchema),
  /** Why the script stopped under the projection, if it did (placeholders may cause it: see notes). */
  diagnostic: z.object({ kind: z.string(), message: z.string(), line: z.number().int().nullable() }).optional(),
  /** What the figures rest on, for people. */
  notes: z.array(z.string()),
});
/** A run's projection. */
export type WorkflowProjection = z.infer<typeof workflowProjectionSchema>;

/** Links of a workflow run. */
export const workflowLinksSchema = z.object({ self: z.string(), events: z.string() });

const agentViewSchema = z.object({
  key: z.string(),
  label: z.string().nullable(),
  phase: z.string().nullable(),
  state: z.enum(['waiting', 'running', 'done', 'failed', 'cancelled']),
  delegationId: z.string().nullable(),
  tokens: z.number(),
  costMicroUsd: z.number(),
  fromJournal: z.boolean(),
  elapsedMs: z.number().nullable(),
  failure: z.object({ type: z.string(), message: z.string() }).nullable(),
});

/** The view of a run (workflow-run.ts's {@link WorkflowRunView}), as the API answers it. */
export const workflowViewSchema = z.object({
  id: z.string(),
  scriptName: z.string(),
  status: z.enum(['running', 'paused', 'completed', 'failed', 'cancelled', 'budget']),
  phase: z.string().nullable(),
  labels: z.array(z.object({ label: z.string(), waiting: z.number(), running: z.number(), done: z.number(), failed: z.number(), tokens: z.number(), costMicroUsd: z.number() })),
  agents: z.array(agentViewSchema),
  agentsOmitted: z.number(),
  tokens: z.number(),
  costMicroUsd: z.number(),
  elapsedMs: z.number(),
  result: jsonValueSchema.optional(),
  diagnostic: diagnosticSchema.optional(),
  logs: z.array(z.string()),
}) satisfies z.ZodType<WorkflowRunView, unknown>;

/** The result of an ended run (workflow-run.ts's WorkflowRunResult). */
export const workflowResultSchema = z.object({
  status: z.enum(['completed', 'failed', 'cancelled', 'budget']),
  result: jsonValueSchema.optional(),
  diagnostic: diagnosticSchema.optional(),
  tokens: z.number(),
  costMicroUsd: z.number(),
  agents: z.object({ done: z.number(), failed: z.number(), fromJournal: z.number() }),
  journalRef: z.string(),
  /** A result too large for the run's history: the API reads it from errand's store into `result`. */
  resultRef: z.string().optional(),
});

/** Answer of a dry run. */
export const workflowDryRunResponseSchema = z.object({ dryRun: z.literal(true), scriptName: z.string(), projection: workflowProjectionSchema });

/** Answer of a start. */
export const startWorkflowResponseSchema = z.object({
  id: z.string(),
  runId: z.string(),
  created: z.boolean(),
  scriptName: z.string(),
  /** Present for a start that made the run (an Idempotency-Key repeat answers the existing run without one). */
  projection: workflowProjectionSchema.optional(),
  /** With `?wait=`: the result when the run ended in time. */
  result: workflowResultSchema.optional(),
  links: workflowLinksSchema,
});

/** Answer of `GET /v1/workflows/{id}`. */
export const workflowStatusSchema = z.object({
  id: z.string(),
  /** Temporal's status of the execution (RUNNING, COMPLETED, ...). */
  temporalStatus: z.string(),
  startedAt: z.string(),
  closedAt: z.string().nullable(),
  /** The run's view; null when no worker answered (see viewError). */
  view: workflowViewSchema.nullable(),
  viewError: z.string().optional(),
  /** The run this one resumed, if it was started by a resume of an ended run. */
  resumedFrom: z.string().optional(),
  links: workflowLinksSchema,
});

/** Body of `POST /v1/workflows/{id}/resume`. */
export const resumeWorkflowBodySchema = z.strictObject({
  script: z.string().min(1).max(maxSourceFileBytes).optional().describe('An edited script, for a run that has ended: the new run starts from the ended run\'s journal with it.'),
});

/** Answer of `POST /v1/workflows/{id}/resume`. */
export const resumeWorkflowResponseSchema = z.object({
  id: z.string(),
  /** `signalled`: a running paused run goes on. `started`: the run had ended; a new run starts from its journal. */
  action: z.enum(['signalled', 'started']),
  started: z.object({ id: z.string(), runId: z.string(), links: workflowLinksSchema }).optional(),
  /** The new run's projection: only the agents the ended run's journal does not answer. */
  projection: workflowProjectionSchema.optional(),
});

/** Body of `POST /v1/workflows/{id}/cancel`. */
export const cancelWorkflowBodySchema = z.strictObject({ reason: z.string().max(1000).optional() });

/** Answer of pause and cancel. */
export const workflowControlResponseSchema = z.object({ id: z.string(), requested: z.boolean(), temporalStatus: z.string() });

/** Answer of an agent restart. */
export const restartAgentResponseSchema = z.object({ id: z.string(), key: z.string(), restarted: z.literal(true) });

import { z } from 'zod';
import { maxPersonaChars } from './limits/sources';
import { costBudgetUsdCeiling, costBudgetUsdFloor, maxTurnsCeiling, timeBudgetSecsCeiling } from './limits/workflow';

/**
 * The `delegate` request, shared by the session's `delegate` tool and `POST /v1/delegations`
 * (SEMANTICS §2). Strict: unknown fields are errors that name the field.
 */
export const delegateRequestSchema = z.strictObject({
  instructions: z.string().min(1).optional().describe('The task, ad hoc or added after the source prompt.'),
  source: z.string().min(1).optional().describe('Name of a recipe, agent or subrecipe to run.'),
  parameters: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional().describe('Recipe parameters (only with source).'),
  extensions: z.array(z.string().min(1)).optional().describe('Toolsets: omit to inherit, [] for none, or a subset.'),
  provider: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  reasoning_effort: z
    .string()
    .min(1, 'reasoning_effort must name an effort, e.g. "high"')
    .optional()
    .describe('How hard a reasoning model thinks, e.g. "low" or "high": one of the efforts its provider entry lists (list_subagent_models(provider, model)). Omit: the model\'s default, or the parent\'s effort when the model is the parent\'s.'),
  persona: z
    .string()
    .min(1, 'persona must not be empty')
    .max(maxPersonaChars, `persona must be at most ${maxPersonaChars} characters: a persona says who the subagent is in a few paragraphs; put reference material into context`)
    .optional()
    .describe('Who the subagent is (role, voice, standards): a "# Persona" section of its own system prompt, apart from instructions and context.'),
  fork: z
    .boolean()
    .optional()
    .describe("Start the subagent from the delegating agent's conversation so far (its completed turns, by reference), with instructions as its task. Keeps the parent's provider, model and reasoning effort; one-shot."),
  max_turns: z.number().int().min(1).max(maxTurnsCeiling).optional(),
  context: z.string().optional().describe('Reference material put into the subagent system prompt.'),
  working_dir: z.string().min(1).optional().describe('Working directory, inside the parent working directory.'),
  async: z.boolean().optional().describe('Run in the background and return a task id at once.'),
  continuable: z.boolean().optional().describe('Background, and stays available for send_message after answering.'),
  description: z.string().max(200).optional().describe('Short label for listings and the UI.'),
  token_budget: z.number().int().min(1).optional().describe('Token budget of this delegation and its descendants.'),
  time_budget: z
    .number({ error: 'time_budget must be a whole number of seconds (e.g. 120 for two minutes)' })
    .int('time_budget must be a whole number of seconds')
    .min(1, 'time_budget must be at least 1 second')
    .max(timeBudgetSecsCeiling, `time_budget must be at most ${timeBudgetSecsCeiling} seconds (a year)`)
    .optional()
    .describe("Wall-clock seconds this delegation (with its descendants) may run, from its start; at most the operator's limit (ERRAND_MAX_TIME_BUDGET_SECS). A child gets at most what its parent has left."),
  cost_budget_usd: z
    .number({ error: 'cost_budget_usd must be a number of US dollars (e.g. 0.5)' })
    .min(costBudgetUsdFloor, `cost_budget_usd must be at least ${costBudgetUsdFloor} (one micro-dollar, the unit costs are counted in)`)
    .max(costBudgetUsdCeiling, `cost_budget_usd must be at most ${costBudgetUsdCeiling}`)
    .optional()
    .describe("US dollars this delegation and its descendants may spend on model calls; needs a model with prices; at most the operator's limit (ERRAND_MAX_COST_BUDGET_USD). A child gets at most what its parent has left."),
  max_output_tokens: z.number().int().min(1).max(1_000_000).optional().describe('Output-token limit of each of its model calls.'),
  isolation: z.enum(['worktree'], { error: 'expected "worktree" (the only isolation there is)' }).optional().describe('"worktree": the subagent works in a new git worktree of the working directory, on a branch errand/<task id>.'),
  output_schema: z
    .record(z.string(), z.unknown(), { error: 'expected a JSON Schema object such as {"type": "object", "properties": {…}}' })
    .optional()
    .describe('JSON Schema (type object) of a structured result: the subagent answers through a final_output tool with these arguments.'),
});

/** A validated `delegate` request. */
export type DelegateRequest = z.infer<typeof delegateRequestSchema>;

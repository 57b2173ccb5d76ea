import { z } from 'zod';
import { maxTurnsCeiling } from './limits';

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
  max_turns: z.number().int().min(1).max(maxTurnsCeiling).optional(),
  context: z.string().optional().describe('Reference material put into the subagent system prompt.'),
  working_dir: z.string().min(1).optional().describe('Working directory, inside the parent working directory.'),
  async: z.boolean().optional().describe('Run in the background and return a task id at once.'),
  continuable: z.boolean().optional().describe('Background, and stays available for send_message after answering.'),
  description: z.string().max(200).optional().describe('Short label for listings and the UI.'),
  token_budget: z.number().int().min(1).optional().describe('Token budget of this delegation and its descendants.'),
  max_output_tokens: z.number().int().min(1).max(1_000_000).optional().describe('Output-token limit of each of its model calls.'),
  isolation: z.enum(['worktree'], { error: 'expected "worktree" (the only isolation there is)' }).optional().describe('"worktree": the subagent works in a new git worktree of the working directory, on a branch errand/<task id>.'),
  output_schema: z
    .record(z.string(), z.unknown(), { error: 'expected a JSON Schema object such as {"type": "object", "properties": {…}}' })
    .optional()
    .describe('JSON Schema (type object) of a structured result: the subagent answers through a final_output tool with these arguments.'),
});

/** A validated `delegate` request. */
export type DelegateRequest = z.infer<typeof delegateRequestSchema>;

import { z } from 'zod';
import type { JsonValue } from './json';
import { maxSourceFileBytes } from './limits/sources';
import { costBudgetUsdCeiling, costBudgetUsdFloor, timeBudgetSecsCeiling } from './limits/workflow';

/**
 * The arguments of the `run_workflow` tool (SEMANTICS §7, decision 0045), as a session's model or an MCP
 * client gives them: exactly one of `name` (a workflow source) or `script` (inline), the run's `args` and
 * caps, and `async`. Snake case, like `delegate`'s. The planning activity checks them with this schema;
 * an error names the argument.
 */
export const runWorkflowRequestSchema = z
  .strictObject({
    name: z.string().min(1).max(128).optional(),
    script: z.string().min(1).max(maxSourceFileBytes, { error: `a workflow script is at most ${maxSourceFileBytes} characters` }).optional(),
    args: (z.unknown() as unknown as z.ZodType<JsonValue>).optional(),
    async: z.boolean().optional(),
    description: z.string().max(200).optional(),
    token_budget: z.number().int().positive().optional(),
    time_budget: z.number().int().positive().max(timeBudgetSecsCeiling).optional(),
    cost_budget_usd: z.number().min(costBudgetUsdFloor).max(costBudgetUsdCeiling).optional(),
    concurrency: z.number().int().min(1).max(1_000).optional(),
    max_agents: z.number().int().min(1).max(100_000).optional(),
  })
  .refine((request) => (request.name === undefined) !== (request.script === undefined), {
    error: 'give exactly one of `name` (a workflow source, .claude/workflows/<name>.js) or `script` (the script inline)',
  });

/** `run_workflow`'s arguments, checked. */
export type RunWorkflowRequest = z.infer<typeof runWorkflowRequestSchema>;

import { z } from 'zod';
import { tokenUsageSchema } from './usage-api';
import { costBudgetUsdCeiling, costBudgetUsdFloor, maxDepthCeiling, maxMessageLength, timeBudgetSecsCeiling } from './limits';

/** Request and response bodies of the session and approval routes (`/v1/sessions`, `/v1/approvals`). */

/** Body of `POST /v1/sessions`. */
export const startSessionBodySchema = z.strictObject({
  label: z.string().min(1).max(200).optional().describe('Short label for listings and the Web UI.'),
  instructions: z.string().max(maxMessageLength).optional().describe('System instructions for the session.'),
  context: z.string().max(maxMessageLength).optional().describe('Reference material for the session.'),
  message: z.string().min(1).max(maxMessageLength).optional().describe('A first message, run at once.'),
  maxTurnsPerMessage: z.number().int().min(1).max(1_000).optional().describe("Model calls one message may cause; at most the operator's limit (ERRAND_SESSION_MAX_TURNS), else 422."),
  maxDepth: z.number().int().min(1).max(maxDepthCeiling).optional().describe("Depth limit of its delegations (1: subagents cannot delegate); at most the operator's limit (ERRAND_MAX_DEPTH), else 422."),
  tokenBudget: z.number().int().min(1).optional().describe('Tokens the session and its tasks may use; crossing it ends the session with status budget.'),
  timeBudget: z
    .number()
    .int('timeBudget must be a whole number of seconds')
    .min(1)
    .max(timeBudgetSecsCeiling)
    .optional()
    .describe("Wall-clock seconds the session may run from its start, checked before each model call; then it ends with status budget. At most the operator's limit (ERRAND_MAX_TIME_BUDGET_SECS), else 422; its tasks get at most what is left."),
  costBudgetUsd: z
    .number()
    .min(costBudgetUsdFloor, `costBudgetUsd must be at least ${costBudgetUsdFloor} (one micro-dollar, the unit costs are counted in)`)
    .max(costBudgetUsdCeiling)
    .optional()
    .describe("US dollars the session and its tasks may spend on model calls, checked before each model call; then it ends with status budget. Needs a model with prices. At most the operator's limit (ERRAND_MAX_COST_BUDGET_USD), else 422; its tasks get at most what is left."),
});
export const startSessionResponseSchema = z.object({ id: z.string(), runId: z.string(), created: z.boolean(), links: z.object({ self: z.string(), messages: z.string() }) });
export const transcriptEntrySchema = z.object({ role: z.enum(['user', 'assistant', 'notice', 'event']), text: z.string(), at: z.number() });
export const sessionResponseSchema = z.object({
  id: z.string(),
  running: z.boolean(),
  transcript: z.object({ state: z.string(), entries: z.array(transcriptEntrySchema), queuedMessages: z.number() }),
  /**
   * The session's peek; `partial` is the text its model is writing now, while a model call streams. `usage`
   * is its own model calls' tokens and cost, `totalUsage` with its tasks', and each of `tasks` its own total.
   */
  peek: z.object({ usage: tokenUsageSchema, totalUsage: tokenUsageSchema.optional() }).loose(),
});
export const sessionMessageResponseSchema = z.object({ id: z.string(), accepted: z.literal(true), queuedTurns: z.number() });
export const approvalSchema = z.object({ id: z.string(), workflowId: z.string(), tool: z.string(), argumentsPreview: z.string(), requestedAt: z.number(), expiresAt: z.number() });
export const approvalsResponseSchema = z.object({ approvals: z.array(approvalSchema) });
export const approvalPathSchema = z.strictObject({ id: z.string().min(1).max(1_200).describe('Approval id: `<workflow id>:<message>:<call>`.') });
export const approvalBodySchema = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  reason: z.string().max(2_000).optional().describe('Shown to the subagent with a denial.'),
});
export const approvalResponseSchema = z.object({ id: z.string(), decision: z.enum(['approve', 'deny']) });

export const cancelSessionBodySchema = z.strictObject({ reason: z.string().max(2_000).optional().describe('Why; shown in the session and its tasks.') });
export const cancelSessionResponseSchema = z.object({ id: z.string(), cancelling: z.literal(true) });

import { z } from 'zod';
import { wholeNumberPattern } from './whole-number-pattern';
import { idempotencyKeyMaxLength, maxListPageSize, maxMessageLength } from './limits';
import { tokenUsageSchema } from './usage-api';
import { waitDurationSchema } from './api';

/**
 * Wire schemas of the delegation routes (`/v1/delegations`): a delegation's state, peek and result, its
 * start, wait, cancel, message and listing. Shared pieces (problem, wait duration, path) are in api.ts.
 */

// ---- subagent state, peek and result (mirrors contracts/subagent-result.ts) -----------------------

/** Live or final state of a delegation. */
export const delegationStates = ['running', 'waiting_approval', 'waiting', 'completed', 'truncated', 'max_turns', 'cancelled', 'failed', 'budget', 'declined'] as const;
/** Live or final state of a delegation. */
export const delegationStateSchema = z.enum(delegationStates);

/**
 * The text the model is writing now (the turn in flight), from the heartbeat details of the pending model
 * call: partial, replaced by the turn's answer when it is complete. Added by the API (a query cannot see it).
 */
export const livePartialSchema = z.object({
  /** The end of the text written so far in this model call (at most 4096 characters). */
  text: z.string(),
  /** Characters written so far in this call: more than `text` holds when its start was cut. */
  chars: z.number().int(),
  /** The turn the call belongs to (as `turns` counts). */
  turn: z.number().int(),
  /** The model call's attempt: a stream that broke off is retried, and the retry writes its text from the start. */
  attempt: z.number().int().optional(),
});
/** The text the model is writing now. */
export type LivePartial = z.infer<typeof livePartialSchema>;

/** What peek shows (the `peek` query of the subagent workflow). */
export const peekSchema = z.object({
  workflowId: z.string(),
  label: z.string(),
  state: delegationStateSchema,
  /** Epoch ms when it started. */
  startedAt: z.number(),
  /** Epoch ms of its last model or tool call, or its last message. */
  lastActivityAt: z.number(),
  /** Milliseconds since it started, computed by the API when it answers. */
  elapsedMs: z.number().optional(),
  /** Milliseconds since its last activity, computed by the API when it answers. */
  idleMs: z.number().optional(),
  turns: z.number().int(),
  maxTurns: z.number().int(),
  toolCalls: z.number().int(),
  /** Context compactions so far. */
  compactions: z.number().int().optional(),
  /** A recipe's checks (goose `retry`): which attempt, and what happens now (e.g. `check 1 failed`). */
  retry: z.object({ attempt: z.number().int(), attempts: z.number().int(), state: z.string() }).optional(),
  lastToolCall: z.object({ name: z.string(), argumentsPreview: z.string(), turn: z.number().int() }).nullable(),
  lastAssistantText: z.string().nullable(),
  /** Its own model calls' tokens and cost. */
  usage: tokenUsageSchema,
  /** Tokens and cost with every descendant's. */
  totalUsage: tokenUsageSchema.optional(),
  model: z.string(),
  /** Tasks this subagent delegated, if it may delegate; `usage` is each task's total (with its own descendants). */
  tasks: z.array(z.object({ taskId: z.string(), workflowId: z.string().optional().describe("The task's delegation id (workflow id), as `GET /v1/delegations/{id}` takes it; for a workflow run, its run id (`GET /v1/workflows/{id}`)."), kind: z.literal('workflow').optional().describe('`workflow`: a workflow run started by run_workflow; absent: a delegation.'), state: z.string(), description: z.string(), turns: z.number().int(), usage: tokenUsageSchema.optional() })).optional(),
  /** Messages queued for a continuable subagent. */
  queuedMessages: z.number().int().optional(),
  /** The text the model is writing now, while a model call streams (API answers only; marked partial). */
  partial: livePartialSchema.optional(),
  /** Its tool calls that wait for an approval (decide them with `POST /v1/approvals/{id}`). */
  pendingApprovals: z.array(z.object({
    id: z.string(),
    workflowId: z.string(),
    tool: z.string(),
    argumentsPreview: z.string(),
    requestedAt: z.number(),
    expiresAt: z.number(),
  })).optional(),
});
/** A peek answer. */
export type PeekView = z.infer<typeof peekSchema>;

/** The result of a finished delegation (the subagent workflow's result). */
export const subagentResultSchema = z.object({
  workflowId: z.string(),
  status: z.enum(['completed', 'truncated', 'max_turns', 'cancelled', 'failed', 'budget', 'declined']),
  output: z.string(),
  partialOutput: z.string(),
  /** Where the whole output is stored (the subagent's last assistant message). */
  outputRef: z.object({ conversationId: z.string(), seq: z.number().int() }).optional(),
  outputCut: z.boolean().optional(),
  diagnostic: z.string().optional(),
  /** With status `budget`: which cap stopped it — `tokens` (token_budget), `time` (time_budget) or `cost` (cost_budget_usd); the diagnostic gives the figures. */
  budget: z.enum(['tokens', 'time', 'cost']).optional(),
  /** With an output schema (`output_schema`, a recipe's `response.json_schema`): the validated JSON of its `final_output` call. */
  structured: z.record(z.string(), z.unknown()).optional(),
  /** With `isolation: "worktree"`: its branch, its folder relative to the working directory, and whether it changed anything (if not, both were removed). */
  worktree: z.object({ branch: z.string(), path: z.string(), changed: z.boolean() }).optional(),
  /** A recipe's checks (goose `retry`): attempts that ran, whether the last passed, and the last failure (its output cut to a preview). */
  checks: z.object({
    attempts: z.number().int(),
    passed: z.boolean(),
    lastFailure: z.object({
      /** 1-based check number; 0 for the `on_failure` command. */
      check: z.number().int(),
      command: z.string(),
      exitCode: z.number().int().nullable(),
      reason: z.string(),
      outputPreview: z.string(),
    }).optional(),
  }).optional(),
  turns: z.number().int(),
  toolCalls: z.number().int(),
  /** Its own model calls' tokens and cost. */
  usage: tokenUsageSchema,
  /** Tokens and cost with every descendant's. */
  totalUsage: tokenUsageSchema.optional(),
  durationMs: z.number(),
});
/** A finished delegation's result. */
export type SubagentResultView = z.infer<typeof subagentResultSchema>;

// ---- delegations -----------------------------------------------------------------------------------

/** Query of `POST /v1/delegations`. */
export const startDelegationQuerySchema = z.strictObject({ wait: waitDurationSchema.optional() });

/** Headers of `POST /v1/delegations` that the API reads. */
export const idempotencyKeySchema = z
  .string()
  .min(1)
  .max(idempotencyKeyMaxLength)
  .regex(/^[\x21-\x7e]+$/, { error: 'expected printable ASCII without spaces, e.g. a UUID' })
  .describe('Makes a retried start return the same delegation (per tenant).');

/** A delegation as listed: identity, where it came from, and its state from the search attributes. */
export const delegationSummarySchema = z.object({
  id: z.string(),
  runId: z.string(),
  /** `subagent` or `session`. */
  kind: z.string(),
  state: delegationStateSchema,
  /** Temporal's own execution status (RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT…). */
  temporalStatus: z.string(),
  source: z.string().nullable(),
  parent: z.string().nullable(),
  model: z.string().nullable(),
  turns: z.number().int(),
  startedAt: z.string().describe('ISO 8601 start time.'),
  closedAt: z.string().nullable().describe('ISO 8601 close time, when ended.'),
});
/** A delegation as listed. */
export type DelegationSummary = z.infer<typeof delegationSummarySchema>;

/** `GET /v1/delegations/{id}`: the summary, its one-line label, and a peek. */
export const delegationStatusSchema = delegationSummarySchema.extend({
  summary: z.string().nullable().describe('The static summary shown in the Temporal Web UI.'),
  /** The live peek; null when no worker answered in time (the error says why). */
  peek: peekSchema.nullable(),
  peekError: z.string().optional(),
});
/** `GET /v1/delegations/{id}`. */
export type DelegationStatus = z.infer<typeof delegationStatusSchema>;

/** Answer of `POST /v1/delegations`. */
export const startDelegationResponseSchema = z.object({
  id: z.string(),
  runId: z.string(),
  /** False when an `Idempotency-Key` matched an earlier start: this is that delegation. */
  created: z.boolean(),
  state: delegationStateSchema,
  /** Present when `?wait=` was given and the delegation ended in time. */
  result: subagentResultSchema.optional(),
  links: z.object({ self: z.string(), result: z.string() }),
});
/** Answer of `POST /v1/delegations`. */
export type StartDelegationResponse = z.infer<typeof startDelegationResponseSchema>;

/** Query of `GET /v1/delegations/{id}/result`. */
export const resultQuerySchema = z.strictObject({ wait: waitDurationSchema.optional() });

/** Answer of `GET /v1/delegations/{id}/result`: the result (200), or still running with a peek (202). */
export const resultResponseSchema = z.discriminatedUnion('done', [
  z.object({ id: z.string(), done: z.literal(true), result: subagentResultSchema }),
  z.object({ id: z.string(), done: z.literal(false), state: delegationStateSchema, peek: peekSchema.nullable(), peekError: z.string().optional() }),
]);
/** Answer of `GET /v1/delegations/{id}/result`. */
export type ResultResponse = z.infer<typeof resultResponseSchema>;

/** Body of `POST /v1/delegations/{id}/cancel` (optional). */
export const cancelBodySchema = z.strictObject({
  reason: z.string().min(1).max(1000).optional().describe('Why; shown as the diagnostic of the cancelled run.'),
});
/** Answer of `POST /v1/delegations/{id}/cancel`. */
export const cancelResponseSchema = z.object({
  id: z.string(),
  /** True when the cancel signal was sent; false when the delegation had already ended. */
  cancelRequested: z.boolean(),
  state: delegationStateSchema,
});

/** Body of `POST /v1/delegations/{id}/messages`. */
export const sendMessageBodySchema = z.strictObject({
  message: z.string().min(1).max(maxMessageLength).describe('The next user message for a continuable subagent.'),
});
/** Answer of `POST /v1/delegations/{id}/messages` (202): the workflow accepted the message. */
export const sendMessageResponseSchema = z.object({
  id: z.string(),
  accepted: z.literal(true),
  updateId: z.string(),
  /** Messages waiting for a turn, this one included (0: it started a turn at once); absent if not known yet. */
  queuedTurns: z.number().int().optional(),
});

/** Query of `GET /v1/delegations`. */
export const listDelegationsQuerySchema = z.strictObject({
  status: delegationStateSchema.optional().describe('Only delegations in this state.'),
  source: z
    .string()
    .regex(/^[A-Za-z0-9._:@/-]{1,200}$/, { error: 'expected a source name (letters, digits, . _ : @ / -) or ad-hoc' })
    .optional()
    .describe('Only delegations of this source (`ad-hoc` for instructions only).'),
  parent: z
    .string()
    .regex(/^[A-Za-z0-9._:@/-]{1,1000}$/, { error: 'expected a workflow id' })
    .optional()
    .describe('Only children of this workflow id.'),
  // The pattern alone says which numbers are valid, so the OpenAPI document declares exactly 1 to the maximum.
  pageSize: z
    .string()
    .regex(wholeNumberPattern(maxListPageSize), { error: `expected a whole number from 1 to ${maxListPageSize}` })
    .transform(Number)
    .optional()
    .describe(`Delegations per page, 1 to ${maxListPageSize}.`),
  pageToken: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,4096}$/, { error: 'expected the nextPageToken of a previous page' })
    .optional(),
});

/** Answer of `GET /v1/delegations`. */
export const listDelegationsResponseSchema = z.object({
  items: z.array(delegationSummarySchema),
  /** Pass as `pageToken` for the next page; null on the last page. */
  nextPageToken: z.string().nullable(),
});
/** Answer of `GET /v1/delegations`. */
export type ListDelegationsResponse = z.infer<typeof listDelegationsResponseSchema>;

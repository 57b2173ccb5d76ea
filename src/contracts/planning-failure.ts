/**
 * Why a delegation cannot start, as the planner says it (decision 0041): the request field or setting it is
 * about, a code from a closed list, the sentence a person or a model reads, and "did you mean" names. The
 * API, the CLI and the `delegate` tool render it; nothing reads the sentence to recover the rest.
 */

/**
 * The codes of a planning failure, one per kind of refusal. A code is part of the API's wire (a 422's
 * `errors[].code`): add codes, never rename one.
 */
export const planningFailureCodes = [
  /** The `delegate` arguments do not pass the request schema (the model's call; the API checks its body earlier). */
  'arguments-invalid',
  /** Neither `instructions` nor `source`. */
  'nothing-to-delegate',
  /** `parameters` without a `source`. */
  'parameters-without-source',
  /** The child would be deeper than the depth limit (ERRAND_MAX_DEPTH). */
  'depth-limit',
  /** `fork: true` cannot run as asked (no conversation, or combined with fields a fork cannot take). */
  'fork-refused',
  /** `working_dir` does not exist, is not a directory, or leads outside the working directory. */
  'working-dir-invalid',
  /** No source has that name; `suggestions` holds close names. */
  'source-not-found',
  /** The source exists but cannot be used (a sub-recipe's file, store or values). */
  'source-invalid',
  /** The source's parameters are missing, unknown or of the wrong kind. */
  'parameters-invalid',
  /** An agent file's `skills` names a skill that is missing or cannot be read. */
  'skills-unavailable',
  /** An agent file's `memory` cannot be given (no data store, or a location it may not use). */
  'memory-unavailable',
  /** An agent file's `tools` / `disallowedTools` leave it no tool. */
  'no-tools-left',
  /** A definition in a tenant-writable folder declares MCP servers (ERRAND_TRUSTED_RECIPE_DIRS). */
  'recipe-untrusted',
  /** An agent file's `permissionMode` cannot be honoured here. */
  'permission-mode-refused',
  /** `output_schema` (or the recipe's `response.json_schema`) is not a JSON Schema of an object. */
  'output-schema-invalid',
  /** `isolation: worktree` needs a git repository the working directory is not in. */
  'isolation-unavailable',
  /** `provider` names a provider that is not configured. */
  'provider-not-allowed',
  /** No provider is configured, or the chosen one is not (ERRAND_PROVIDERS, ERRAND_DEFAULT_MODEL). */
  'provider-not-configured',
  /** `model` (or the operator's ERRAND_SUBAGENT_MODEL) is not on the provider's allow-list. */
  'model-not-allowed',
  /** Nothing chooses a model (no default model, no provider default). */
  'no-model',
  /** `reasoning_effort` is not one the chosen model takes. */
  'effort-not-allowed',
  /** `max_turns` is over the operator's limit (ERRAND_SUBAGENT_MAX_TURNS). */
  'max-turns-over-limit',
  /** `time_budget` is over the operator's limit (ERRAND_MAX_TIME_BUDGET_SECS). */
  'time-budget-over-limit',
  /** `cost_budget_usd` is over the operator's limit (ERRAND_MAX_COST_BUDGET_USD). */
  'cost-budget-over-limit',
  /** A cost cap applies, and the chosen model has no prices to keep it with. */
  'cost-cap-needs-prices',
  /** The estimated first prompt (a fork's conversation, a large `context`) does not fit the child's caps. */
  'first-prompt-too-large',
  /** The tenant's spend today reached the operator's daily cap (ERRAND_TENANT_DAILY_COST_USD). */
  'daily-cost-cap',
] as const;

/** One planning failure code. */
export type PlanningFailureCode = (typeof planningFailureCodes)[number];

/** Why a delegation cannot start. JSON: it crosses the planning activity's boundary. */
export interface PlanningFailure {
  /** The request field (`source`, `model`, `parameters`, `working_dir`, ...) or the setting it is about. */
  field: string;
  code: PlanningFailureCode;
  /** What is wrong and what would be valid, for a person or a model. */
  message: string;
  /** Close names, for a name nobody knows ("did you mean"); absent when there are none. */
  suggestions?: string[];
}

/** A planner step's refusal. */
export interface PlanningRefusal {
  ok: false;
  failure: PlanningFailure;
}

/** A refusal with `code`, about `field`, saying `message`; `suggestions` only when there are some. */
export function refuse(code: PlanningFailureCode, field: string, message: string, suggestions?: readonly string[]): PlanningRefusal {
  return { ok: false, failure: { field, code, message, ...(suggestions !== undefined && suggestions.length > 0 ? { suggestions: [...suggestions] } : {}) } };
}

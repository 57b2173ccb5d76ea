/**
 * Stable failure type names (DESIGN.md convention 4). Activities classify an error once, where they end,
 * into an ApplicationFailure with one of these types; workflows and the API match on the type, never on
 * message text or `instanceof`.
 */
export const FailureType = {
  /** The provider said 429: retried after the provider's retry-after. */
  modelRateLimited: 'ModelRateLimited',
  /** 5xx, timeouts, connection failures: retried with backoff. */
  modelUnavailable: 'ModelUnavailable',
  /** Other 4xx (bad request, auth, unknown model): not retried; the run ends `failed`. */
  modelRequestRejected: 'ModelRequestRejected',
  /**
   * The prompt (plus the requested output tokens) does not fit the model's context window: OpenAI's
   * `context_length_exceeded`, Anthropic's `prompt is too long`, llama.cpp's `exceed_context_size_error`.
   * Not retried as is; the workflow compacts the conversation and tries once more.
   */
  modelContextOverflow: 'ModelContextOverflow',
  /** The provider answered something we cannot use (malformed tool call JSON etc.): not retried. */
  modelBadResponse: 'ModelBadResponse',
  /** A model route names a provider that is not configured. */
  modelNotConfigured: 'ModelNotConfigured',
  /** A toolset the run needs is not configured on this worker (e.g. an MCP server removed from config). */
  toolsetUnavailable: 'ToolsetUnavailable',
  /** The scripted model ran out of script: a test bug, never retried. */
  scriptExhausted: 'ScriptExhausted',
  /** A session's or continuable's message queue is full (`ERRAND_MAX_QUEUED_MESSAGES`): the API answers 429. */
  messageQueueFull: 'MessageQueueFull',
  /** Input that a user or a calling model gave is invalid (also an update's input its validator refuses): the API answers 422. */
  invalidInput: 'InvalidInput',
  /** A workflow that has ended (or is ending) refused an update: a message, a tool call. The API answers 409. */
  runEnded: 'RunEnded',
  /**
   * A workflow refused an update it never takes: a message to a subagent that is not continuable or to an
   * MCP session, a tool call to a session that is not one. The API answers 409.
   */
  updateNotTaken: 'UpdateNotTaken',
  /** An approval decision for a call that waits for none (decided, timed out, never asked). The API answers 409. */
  approvalNotPending: 'ApprovalNotPending',
  /** The delegating agent decided an approval that only a person may decide. 409 (the API decides as a person). */
  approvalByPersonOnly: 'ApprovalByPersonOnly',
  /** A blob referenced by a workflow is missing from the blob store. */
  blobMissing: 'BlobMissing',
  /** The git worktree of `isolation: worktree` cannot be made (no commit yet, a setting that puts it in the wrong place). */
  worktreeUnavailable: 'WorktreeUnavailable',
  /**
   * Compaction itself cannot succeed (the history needs more summarising calls than allowed): deterministic,
   * so not retried — a retry would repeat every summarising call only to fail again (review N7).
   */
  compactionFailed: 'CompactionFailed',
  /**
   * The tenant's spend today has reached the operator's daily cost cap (`ERRAND_TENANT_DAILY_COST_USD`):
   * the model call is not made, and the run ends `budget` (cap `cost`) with the cap's words.
   */
  dailyCostCap: 'DailyCostCap',
} as const;

/** One of the failure type names. */
export type FailureTypeName = (typeof FailureType)[keyof typeof FailureType];

/** Failure types that must never be retried. */
export const nonRetryableFailureTypes: readonly FailureTypeName[] = [
  FailureType.modelRequestRejected,
  FailureType.modelContextOverflow,
  FailureType.modelBadResponse,
  FailureType.modelNotConfigured,
  FailureType.toolsetUnavailable,
  FailureType.scriptExhausted,
  FailureType.invalidInput,
  FailureType.runEnded,
  FailureType.updateNotTaken,
  FailureType.approvalNotPending,
  FailureType.approvalByPersonOnly,
  FailureType.blobMissing,
  FailureType.worktreeUnavailable,
  FailureType.compactionFailed,
  FailureType.dailyCostCap,
];

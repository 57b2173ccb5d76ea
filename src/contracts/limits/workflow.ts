/**
 * The limits of the agent loop and its workflows: turns and depth, caps, durable payloads, activity timeouts
 * and the worker, tasks and messages, compaction, approvals. Workflow code reads them, so a change here
 * changes what a replay sees. Part of errand's defaults and limits: src/contracts/limits.ts re-exports every
 * file of this folder.
 */

// ---- subagent loop -------------------------------------------------------------------------------
/** Default turn budget of a subagent (`ERRAND_SUBAGENT_MAX_TURNS`). A turn is one model call. */
export const defaultMaxTurns = 25;
/** Hard ceiling on max_turns accepted from any input. */
export const maxTurnsCeiling = 10_000;
/** Default depth limit: subagents may not delegate (`ERRAND_MAX_DEPTH`). */
export const defaultMaxDepth = 1;
/** Largest depth limit the operator may configure (`ERRAND_MAX_DEPTH`); requests may only go lower than the configured one. */
export const maxDepthCeiling = 10;

// ---- caps: time and money (SEMANTICS §6 "Spend", decision 0027) ------------------------------------
/**
 * Largest `time_budget` (seconds of wall-clock time) any input may ask for: a year. The operator's own
 * ceiling is `ERRAND_MAX_TIME_BUDGET_SECS` (none by default: runs are limited by turns and tokens only).
 */
export const timeBudgetSecsCeiling = 31_536_000;
/** Smallest `cost_budget_usd` any input may ask for: one micro-dollar, the unit costs are counted in (decision 0025); less would round to no budget at all. */
export const costBudgetUsdFloor = 0.000001;
/**
 * Largest `cost_budget_usd` any input may ask for. The operator's own ceiling is
 * `ERRAND_MAX_COST_BUDGET_USD` (none by default).
 */
export const costBudgetUsdCeiling = 1_000_000;
/**
 * Largest per-tenant daily cost cap the operator may set (`ERRAND_TENANT_DAILY_COST_USD`; none by
 * default). The day is the UTC calendar day.
 */
export const tenantDailyCostUsdCeiling = 100_000_000;
/**
 * Spend records a tenant's day keeps to drop a repeated report of the same model call (a retried activity
 * that reuses a stored answer reports it again); older ones are forgotten. Retries come within minutes.
 */
export const tenantSpendRecentCalls = 2_000;
/** How long after the end of its UTC day a tenant's spend workflow stays to answer late reports and reads. */
export const tenantSpendGraceMs = 3_600_000;
/** Deadline of a read of a tenant's spend today (a query answered by a worker). */
export const tenantSpendQueryTimeoutMs = 5_000;
/**
 * Deadline of the API's read or hold of a tenant's spend before a start or a message. Slower than this (no
 * worker answers the day's workflow) and the start goes ahead: the workers' check before each model call
 * holds the cap (docs/security.md), so a slow read never turns a start into a 503.
 */
export const tenantSpendStartWaitMs = 2_000;
/** Deadline of a worker's report of one priced call to the tenant's day (best effort: a failed report is logged). */
export const tenantSpendReportTimeoutMs = 5_000;
/** How long a worker reuses its figure of a tenant's spend today before it reads the day again (ms). */
export const tenantSpendRefreshMs = 3_000;
/**
 * What a start holds back of the tenant's daily cap while it has not spent yet, as a share of the cap
 * (a start with a smaller cost budget holds that): concurrent starts cannot all pass the cap together.
 */
export const tenantStartHoldShare = 0.1;
/** How long a start's hold on the daily cap lasts when its first priced call is never counted (ms). */
export const tenantStartHoldMs = 600_000;
/** Holds a tenant's day keeps at most (the oldest goes first). */
export const tenantStartHoldsMax = 1_000;

// ---- token estimates (src/domain/token-estimate.ts) ------------------------------------------------
/**
 * Characters of ASCII text per estimated token. Real tokenizers give about 4 for English prose and about
 * 3 to 3.5 for code and JSON; 3.5 errs on the side of counting too many, which is the safe side for a
 * context window.
 */
export const estimateCharsPerToken = 3.5;
/** Estimated tokens of a message's framing (role, separators), on top of its text. */
export const estimateMessageOverheadTokens = 4;
/** Estimated tokens of a tool call's or tool spec's framing (id, type, wrapper), on top of its text. */
export const estimateToolOverheadTokens = 8;
/** Estimated tokens every request adds (the reply's priming). */
export const estimateRequestOverheadTokens = 3;

// ---- durable payloads -----------------------------------------------------------------------------
/** Assistant text longer than this travels by reference (conversation store), not through history. */
export const inlineTextLimit = 512;
/**
 * The longest assistant text a workflow's result or an update's answer carries whole (a top-level
 * delegation's answer, a session's reply); a longer one goes as a preview and a reference, and the API
 * reads it back from the conversation store. As JSON a character takes at most 6 bytes, so this stays far
 * under Temporal's payload limit (2 MiB) and its warning threshold (512 KiB) whatever the text holds.
 */
export const resultTextInlineMaxChars = 64 * 1024;
/** Characters of a model call's text-so-far sent with its heartbeats (live output). */
export const liveTextChars = 4_096;
/** Characters of a task's text-so-far that `load(task_id, peek: true)` shows the delegating model (the end of it). */
export const peekLiveTextChars = 1_000;
/** How long the parent's `load(peek)` gives the activity that reads a child's text-so-far; past it, peek shows none. */
export const liveTextReadTimeoutMs = 5_000;
/** Length of argument and output previews shown by peek and kept in history. */
export const previewLength = 400;
/**
 * Least time between two search-attribute upserts of a workflow (ms): status and turns shown by the Web UI
 * and the listings are at most this much behind (a change within the interval is written when it ends).
 */
export const viewsUpsertIntervalMs = 1_000;
/** Default upper bound of one model call (ms). */
export const defaultModelCallTimeoutMs = 10 * 60_000;
/** Default heartbeat timeout of a model call (ms): how soon a dead worker's call is retried elsewhere. */
export const defaultModelHeartbeatTimeoutMs = 10_000;
/** How often sources, planning and child messages heartbeat (ms; their heartbeat timeout is 60 s). */
export const orchestrationHeartbeatIntervalMs = 5_000;
/**
 * Default least time between two heartbeats of a model call that carry new live text (ms;
 * `ERRAND_LIVE_TEXT_INTERVAL_MS`). Each heartbeat that reaches Temporal is a billable action on Temporal
 * Cloud: at 2.5 s a streamed 30 s call costs 13 actions (12 heartbeats and the activity itself), under the
 * target of one per 2 s of streaming (bench figure `actions-per-30s-stream`, decision 0022). Peek, the API
 * and the Web UI show text at most this much behind the model.
 */
export const defaultLiveTextIntervalMs = 2_500;
/** Bounds of `ERRAND_LIVE_TEXT_INTERVAL_MS` (ms): below 250 ms the worker's heartbeat throttle holds heartbeats back anyway. */
export const liveTextIntervalBounds = { min: 250, max: 60_000 } as const;
/**
 * Share of its heartbeat timeout after which a model or tool call with nothing new to say heartbeats anyway
 * (the keep-alive that tells Temporal the worker still runs it): 0.4 of the default 10 s timeout is one
 * heartbeat every 4 s, so one late heartbeat still leaves a margin before Temporal gives the call up.
 */
export const heartbeatKeepAliveShare = 0.4;
/**
 * How often a running call checks whether a heartbeat is due (ms): a local timer, not a server call. It
 * bounds how late a live-text heartbeat is, and how soon a call aborted by its workflow's cancel (the
 * in-flight sink) asks the server for the cancellation that lets it end as cancelled.
 */
export const heartbeatTickMs = 100;
/**
 * Least time between two heartbeats the worker sends to the server (ms; worker options
 * `maxHeartbeatThrottleInterval` and `defaultHeartbeatThrottleInterval`). The activities pace their own
 * heartbeats (live text, keep-alive); this throttle only matters after a call was aborted by its
 * workflow's cancel, when it heartbeats until the server confirms the cancellation. The SDK would
 * otherwise hold those back to 0.8 × the heartbeat timeout.
 */
export const heartbeatThrottleMs = 250;
/**
 * Workflow task timeout of every errand workflow (ms; Temporal's default is 10 s). When a worker dies in
 * the middle of a workflow task, the task goes to another worker only after this; kept under the model
 * heartbeat timeout so a lost worker's workflows are replayed elsewhere before its model calls come back
 * (decisions 0012, 0015). errand's workflow tasks take milliseconds (a replay under load about a second);
 * a local activity longer than this keeps its task alive by heartbeating it (the SDK does that at 80 %).
 */
export const workflowTaskTimeoutMs = 3_000;
/**
 * Workflows a worker keeps in its cache by default (`ERRAND_WORKER_MAX_CACHED_WORKFLOWS`). A cached
 * waiting workflow holds about 0.5 MB; one evicted from the cache is replayed from its history when it
 * wakes (a message, a child's result). 500 keeps a worker's memory well under 1 GB however many
 * subagents wait on it (decision 0012).
 */
export const defaultMaxCachedWorkflows = 500;
/**
 * Threads a worker runs workflow code on by default (`ERRAND_WORKER_WORKFLOW_THREADS`; the SDK's default
 * is 1). errand's workflow tasks are heavier than a bare workflow's (more code per turn; the SDK's record
 * of a stack for every promise is cut short by decision 0018), so one thread was the bottleneck of a
 * burst of delegations; a second one raised throughput by about 7 % on 2 cores and costs about 50 MB
 * (decision 0016).
 */
export const defaultWorkflowThreads = 2;

/**
 * What a versioned worker (Worker Deployment Versioning, decision 0030) uses for a run that declares no
 * behaviour: one whose first workflow task ran before versioning was turned on (runs that start on a
 * versioned worker declare theirs: subagents pinned, sessions and continuables moving up). Such a run moves
 * to the current build, as it did unversioned, guarded by `patched()` and the replay test.
 */
export const defaultWorkerVersioningBehavior = 'AUTO_UPGRADE';

/** Longest worker deployment name or build id (`ERRAND_WORKER_DEPLOYMENT_NAME`, `ERRAND_WORKER_BUILD_ID`): Temporal's limit on both. */
export const workerDeploymentIdMaxChars = 255;
/** Default upper bound of one tool call (ms). */
export const defaultToolCallTimeoutMs = 5 * 60_000;
/**
 * Upper bound of a fast built-in tool call run as a local activity (ms): the workflow task stays open (the
 * SDK heartbeats it) while it runs. File tools take milliseconds; a search of a large tree seconds.
 */
export const localToolCallTimeoutMs = 2 * 60_000;
/** Upper bound of one conversation store read or write (a local activity), ms. */
export const storeCallTimeoutMs = 60_000;
/** Default attempts for retryable model failures. */
export const defaultModelMaximumAttempts = 6;

// ---- parents and background tasks -----------------------------------------------------------------
/** Running background tasks per session (`ERRAND_MAX_BACKGROUND_TASKS`). */
export const defaultMaxBackgroundTasks = 5;
/** How long `load(task_id)` waits for a task (`ERRAND_TASK_WAIT_TIMEOUT_SECS`), ms. */
export const defaultTaskWaitTimeoutMs = 5 * 60_000;
/** How long a finished task's result stays retrievable (`ERRAND_COMPLETED_TASK_TTL_SECS`), ms. */
export const defaultCompletedTaskTtlMs = 600_000;
/** How long a cancel waits for the cancelled task to report what it produced, ms. */
export const cancelSettleWaitMs = 60_000;
/** Entries kept in a session's or continuable subagent's transcript (older ones are in the conversation store). */
export const transcriptEntries = 100;
/** Transcript entries carried across continue-as-new (fewer than are kept, so the new run's input stays small). */
export const carriedTranscriptEntries = 20;
/** Characters of one transcript entry kept in workflow state. */
export const transcriptEntryLength = 4_000;
/** Messages longer than this travel by reference: the caller stores them, history carries the key. */
export const inboundMessageInlineChars = 256;
/** Longest message accepted by sendMessage / a session message, in characters. */
export const maxMessageLength = 100_000;
/** Messages queued for a session or continuable at once; past it sendMessage is refused (`ERRAND_MAX_QUEUED_MESSAGES`). */
export const defaultMaxQueuedMessages = 100;
/** Highest `ERRAND_MAX_QUEUED_MESSAGES`: the queue is carried across continue-as-new, whose input must stay far below 2 MB. */
export const maxQueuedMessagesCeiling = 1_000;
/** Model calls one session message may cause (`ERRAND_SESSION_MAX_TURNS`). */
export const defaultSessionMaxTurns = 50;
/** A session ends after this long without a message or notice (`ERRAND_SESSION_IDLE_TIMEOUT_SECS`), ms. */
export const defaultSessionIdleTimeoutMs = 7 * 24 * 60 * 60_000;
/** A continuable subagent ends after this long without a message (`ERRAND_CONTINUABLE_IDLE_TIMEOUT_SECS`), ms. */
export const defaultContinuableIdleTimeoutMs = 24 * 60 * 60_000;
/** Continuable tasks alive at once per workflow (`ERRAND_MAX_CONTINUABLES`). */
export const defaultMaxContinuables = 20;
/** Task records a workflow keeps; beyond this the oldest settled ones are dropped (read ones first). */
export const maxTaskRecords = 200;
/**
 * How often `errand mcp` (stdio) looks for notices to send as MCP notifications while its client is
 * connected, ms: a query, which adds nothing to the session's history.
 */
export const mcpNoticePollIntervalMs = 5_000;
/**
 * How often a workflow checks on children it no longer watches (started before a continue-as-new) while one
 * of them runs a turn, ms. A waiting continuable is not checked (decision 0021): waiting costs no history.
 */
export const childProbeIntervalMs = 30_000;
/**
 * Least workflow time between two progress signals of a child to its parent, ms. Each signal adds about four
 * events and a peek (1-2 KB) to the parent's history, and a parent waiting on a foreground child cannot continue
 * as new; a report within the interval is dropped and the next one carries newer data (no timer, which
 * would add events of its own). A report whose state, pending approvals or recipe check step differs from
 * the last one sent goes at once, as does the first after a settlement (a signal of its own, always sent).
 * Between those, the parent's record of the child's turns and usage can be this much behind.
 */
export const childProgressIntervalMs = 5_000;
/** The check backs off (doubling from {@link childProbeIntervalMs}) to this while such a child reports nothing, ms. */
export const childProbeMaxIntervalMs = 10 * 60_000;
/** Message ids remembered to drop a retried delivery (carried across continue-as-new). */
export const recentMessageIdCount = 100;
/** Child approvals remembered as announced to the model (each is announced once). */
export const announcedApprovalCount = 200;

// ---- context compaction (defaultContextWindow and defaultMaxOutputTokens are in the llm section) ----
/** Share of the context window at which the conversation is compacted before a model call (`ERRAND_COMPACT_AT`). */
export const defaultCompactAt = 0.8;
/** Share of the context window the verbatim recent turns may take after a compaction. */
export const compactionTailShare = 0.3;
/** Share of the context window one summarising call may read (older turns are folded in several calls above this). */
export const compactionChunkShare = 0.5;
/** Output-token limit of a summarising call (and at most a tenth of the context window). */
export const compactionSummaryMaxTokens = 2_048;
/** Characters of one message kept when it is fed to a summarising call (longer ones are cut in the middle). */
export const compactionMessageMaxChars = 20_000;
/** Summarising calls one compaction may make (bounds the fold over a very long conversation). */
export const compactionMaxCalls = 20;

// ---- approvals ------------------------------------------------------------------------------------
/** How long a tool call under an `ask` policy waits for a decision before it is denied (`ERRAND_APPROVAL_TIMEOUT_SECS`). */
export const defaultApprovalTimeoutMs = 60 * 60_000;
/**
 * Longest time an ending workflow waits for its update handlers still running (an MCP tool call planning
 * a `delegate`), so that a child they start meanwhile is cancelled with the rest (ending-guard.ts).
 */
export const endingHandlersWaitMs = 60_000;

/**
 * Every default and limit of errand in one place (DESIGN.md convention 7). Configuration may override
 * many of them; the names of the settings that do are given next to each value.
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

// ---- sources (owned by src/sources) ---------------------------------------------------------------
// (sources section)
/** Largest source file (recipe or agent) a store will read; bigger files are refused. */
export const maxSourceFileBytes = 1024 * 1024;
/**
 * Work one recipe template may do while it renders (each expression, filter, loop turn and printed piece
 * counts); past it rendering stops with an error naming the file, so a nested loop cannot hold the worker.
 */
export const maxTemplateSteps = 200_000;
/**
 * Characters one template may produce (the rendered recipe, parameter values included); also the most text
 * any one value of a template may stand for (a list counts each item each time it appears, shared or not).
 */
export const maxTemplateOutputChars = 2 * 1024 * 1024;
/** How deeply a value of a template (lists in lists, objects in objects) may nest. */
export const maxTemplateValueDepth = 64;
/**
 * How long one recipe may take to render (in a thread of its own, off the event loop): past it the thread
 * is stopped and rendering ends with a template-limit error. The step and size limits stop every known
 * case far sooner; this holds whatever they miss.
 */
export const templateRenderDeadlineMs = 5_000;
/** Heap (MiB) of a rendering thread: a render that would fill more ends the thread, never the process. */
export const templateThreadHeapMb = 256;
/** Rendering threads one process runs at once; further renders wait for one. */
export const maxTemplateThreads = 4;
/** How deeply a template may nest blocks and expressions (the parser and renderer recurse on them). */
export const maxTemplateNesting = 64;
/** How long a store's listing is served from cache before it is listed again. */
export const sourceListingTtlMs = 60_000;
/**
 * Working directories whose project-folder resolvers a worker (or the API) keeps at once; the least
 * recently used is dropped past it. The operator's and user-level stores are shared, not counted here.
 */
export const maxCachedSourceDirectories = 64;
/** Minimum time between two fetches of a git-synced store (a discovery call fetches regardless). */
export const gitSyncIntervalMs = 60_000;
/** Time limit of one git command (clone, fetch, checkout). */
export const gitCommandTimeoutMs = 120_000;
/** How long a sync waits for another process's lock on the same checkout before it fails. */
export const fileLockWaitMs = 10 * 60_000;
/** A lock file older than this was left by a process that died, and is broken. */
export const fileLockStaleMs = 15 * 60_000;
/** How often a waiting sync looks at the lock again. */
export const fileLockPollMs = 200;
/** Bound on ListObjectsV2 pages read for one S3 listing (1000 keys each). */
export const maxS3ListPages = 100;
/** Bound on entries one store may list. */
export const maxStoreEntries = 10_000;
/** How deep an agent folder (`.claude/agents/team/reviewer.md`) is scanned below its top: folders deeper are not entered. */
export const maxAgentFolderDepth = 5;
/** Length at which descriptions are cut in the `load` listing. */
export const listingDescriptionChars = 160;
/** How many "did you mean" names a not-found answer offers. */
export const maxNameSuggestions = 3;
/** Time limit of one goose `retry` check command when the recipe sets no `timeout_seconds` (goose's default). */
export const defaultRetryCheckTimeoutSeconds = 300;
/** Time limit of a goose `retry` `on_failure` command when the recipe sets no `on_failure_timeout_seconds` (goose's default). */
export const defaultRetryOnFailureTimeoutSeconds = 600;
/** Largest output schema (`output_schema`, `response.json_schema`) accepted, in characters of JSON. */
export const maxOutputSchemaChars = 64 * 1024;
/** Characters of a failed check's output kept in the result's diagnostic (its start and end); the whole output is stored by reference. */
export const checkOutputPreviewChars = 2_000;
/** Time added to a check's own time limit for the activity that runs it (starting the process, storing the outcome), ms. */
export const checkActivityMarginMs = 60_000;
/** Invalid `final_output` calls one run may make before it ends `failed` (SEMANTICS §5). */
export const maxInvalidFinalOutputs = 3;
/** Largest structured result (`final_output` arguments) accepted, in characters of JSON. */
export const maxStructuredOutputChars = 64 * 1024;
/**
 * Where `isolation: worktree` puts a subagent's git worktree when `ERRAND_WORKTREE_DIR` is not set: this
 * folder inside the repository's git directory (outside its work tree, inside the tenant's folder).
 */
export const defaultWorktreeFolderName = 'errand-worktrees';
/**
 * Most entries of a repository's git directory checked, without the sandbox, before the worker runs git
 * there for `isolation: worktree` (every one must be no symbolic link); a larger one is refused.
 */
export const maxGitDirEntriesChecked = 200_000;
/** Largest `.git` file (`gitdir: …`), `commondir` file or repository `config` the worker reads to check a repository. */
export const maxGitMetadataFileBytes = 64 * 1024;
/** Branch names `errand/<name>-<n>` tried when `errand/<name>` is taken in the repository by another delegation. */
export const maxWorktreeBranchSuffix = 100;
/** Whether an agent file's `permissionMode: bypassPermissions` may be used (`ERRAND_ALLOW_BYPASS_PERMISSIONS`). */
export const defaultAllowBypassPermissions = false;
/**
 * Longest `persona` of a delegation, in characters: a persona says who the subagent is (role, voice,
 * standards) in a few paragraphs; reference material belongs in `context`, which has no such limit.
 */
export const maxPersonaChars = 4_000;

// ---- model calls (owned by src/llm) ---------------------------------------------------------------
// (llm section)
/** Default time limit of one HTTP request to a model provider (provider setting `requestTimeoutMs`). */
export const defaultModelRequestTimeoutMs = 300_000;
/** Longest retry-after we honour from a provider; longer hints are capped so a retry still happens. */
export const maxModelRetryAfterMs = 600_000;
/** Largest request body the scripted OpenAI-compatible test server accepts. */
export const scriptedServerMaxBodyBytes = 16 * 1024 * 1024;
/**
 * Default context window of a model, in tokens (model entry `contextWindow` in the provider config): what
 * errand assumes a model accepts as prompt plus answer when its entry does not say.
 */
export const defaultContextWindow = 128_000;
/**
 * Default output-token limit of one model call (`ERRAND_MAX_OUTPUT_TOKENS`; model entry `maxOutputTokens`
 * and the delegation's `max_output_tokens` win). Always sent to the provider.
 */
export const defaultMaxOutputTokens = 8_192;
/**
 * Thinking budget, in tokens, sent to Anthropic for each reasoning effort (the model entry's
 * `reasoningEfforts`). Anthropic's minimum budget is 1024. The budget comes on top of `maxOutputTokens`:
 * the AI SDK sends `max_tokens = maxOutputTokens + budget`, so the answer itself keeps its full limit.
 * OpenAI-compatible providers get the effort itself as `reasoning_effort`.
 */
export const anthropicThinkingBudgets = { low: 1_024, medium: 4_096, high: 16_384 } as const;
/**
 * Most bytes (UTF-8) of one model answer errand reads: its text, thinking and tool-call arguments together
 * (`ERRAND_MODEL_ANSWER_MAX_BYTES`). A provider stream that goes past it is closed and the answer ends
 * `truncated`, like one cut at the output-token limit: a stream that never ends cannot fill the worker's memory.
 */
export const defaultModelAnswerMaxBytes = 4 * 1024 * 1024;
/**
 * Longest time errand reads one model answer, from the first byte of its stream, in milliseconds
 * (`ERRAND_MODEL_ANSWER_MAX_MS`); past it the stream is closed and the answer ends `truncated`. Below the
 * provider's `requestTimeoutMs` (default 300 s), which would end the call as a failure instead.
 */
export const defaultModelAnswerMaxMs = 240_000;

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

// ---- tools (owned by src/tools) -------------------------------------------------------------------
// (tools section)
/** Separator between toolset name and tool name in the qualified names the model sees (`developer__read_file`). */
export const toolNameSeparator = '__';
/** Most characters of tool output returned to the model (read_file, run_command, search_text, list_directory). */
export const toolOutputMaxChars = 50_000;
/** Largest file read_file will open, in bytes (a line range still needs the file to be read). */
export const readFileMaxBytes = 10 * 1024 * 1024;
/** Largest content write_file accepts, in characters. */
export const writeFileMaxChars = 5 * 1024 * 1024;
/** Most entries list_directory returns. */
export const listDirectoryMaxEntries = 500;
/** Default and ceiling of the number of matches search_text returns. */
export const searchTextDefaultMaxMatches = 100;
export const searchTextMaxMatchesCeiling = 1_000;
/** Files larger than this are skipped by search_text (bytes). */
export const searchTextMaxFileBytes = 1024 * 1024;
/** Most files search_text visits before stopping (bounds a search of a huge tree). */
export const searchTextMaxFiles = 20_000;
/** Longest line excerpt of a search_text match, in characters. */
export const searchTextMaxLineChars = 300;
/** Default and ceiling of run_command's timeout, in milliseconds. */
export const runCommandDefaultTimeoutMs = 120_000;
export const runCommandMaxTimeoutMs = 600_000;
/** Grace period between SIGTERM and SIGKILL when run_command stops a process group, in milliseconds. */
export const runCommandKillGraceMs = 2_000;
/**
 * The environment variables a model-run command (`run_command`) gets from the worker, besides the names the
 * operator lists (`ERRAND_COMMAND_ENV`). Nothing else passes: the worker's environment holds credentials.
 */
export const commandBaseEnvironment = ['PATH', 'HOME', 'LANG', 'TMPDIR'] as const;
/**
 * System folders a sandboxed command (`ERRAND_SANDBOX=bwrap`) sees, read-only, when they exist; the
 * working directory is the only writable place, `/tmp` and the home folder are private and empty.
 */
export const sandboxSystemPaths = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'] as const;
/** How long the worker's start-up check of the sandbox may take (it runs `true` inside one), in milliseconds. */
export const sandboxCheckTimeoutMs = 15_000;
/** How long the worker's start-up probe of process containment (a PID namespace per command) may take, in milliseconds. */
export const containmentProbeTimeoutMs = 5_000;
/** Recipe-server configs a worker remembers as checked against their recipe (then the set starts over). */
export const recipeVerifiedCacheEntries = 1_024;
/** Working directories one recipe server config may run a process for at once on a worker (one process each). */
export const maxRecipeServerInstancesPerConfig = 64;
/** How long after a delegation last claimed it an idle recipe server config may be retired to make room for another. */
export const recipeServerRetireAfterMs = 10 * 60_000;
/** Longest search_text pattern, in characters (a regular expression's program grows with its text). */
export const searchTextMaxPatternChars = 1_000;
/**
 * How long one search_text call may spend matching a regular expression, in milliseconds
 * (`ERRAND_SEARCH_TEXT_REGEX_DEADLINE_MS`). Matching runs
 * in a worker thread with a linear-time engine (RE2), so the worker's event loop keeps serving other
 * activities; past this the thread is stopped and the model is told to simplify the pattern.
 */
export const searchTextRegexDeadlineMs = 20_000;
/** Mode of a tenant's working folder, created on first use under the working root (owner and group only). */
export const tenantWorkingDirMode = 0o750;

// ---- blob store and conversations (owned by src/activities) --------------------------------------
/** Longest blob key, in characters. */
export const blobKeyMaxLength = 512;
/** Most keys one blob list returns; a larger listing is an error asking for a narrower prefix. */
export const blobListMaxKeys = 100_000;
/** Messages per conversation chunk blob: a read of n messages needs about n / this many blob reads. */
export const conversationChunkSize = 50;
/** Conversations kept in the in-process LRU cache of read messages (entries are immutable, so caching is safe). */
export const conversationCacheEntries = 1_024;
/** Total characters of messages the conversation cache may hold across all conversations. */
export const conversationCacheMaxChars = 64 * 1024 * 1024;
/** Blob reads a conversation read issues at once. */
export const conversationReadConcurrency = 16;
/**
 * After an S3-compatible server answered 501 to a conditional write (`If-None-Match: *`), puts go without
 * the header for this long, then try it again: one 501 (say, from a proxy) must not turn the guard off for
 * the life of the process.
 */
export const s3ConditionalWriteRetryMs = 10 * 60_000;

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
 * The poll interval errand suggests to an MCP client for a task (the Tasks extension's `pollIntervalMs`): a
 * `tasks/get` is a describe and a query, cheap enough every two seconds per task.
 */
export const mcpTaskPollIntervalMs = 2_000;

/**
 * How often a foreground `delegate` over MCP reports progress (`notifications/progress`: turns, cost, last
 * words) to a client that sent a progress token, ms: one session query and one peek per report.
 */
export const mcpProgressIntervalMs = 5_000;
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

// ---- traces ---------------------------------------------------------------------------------------
/**
 * How long a process that exports traces waits at its end (worker stop, API stop, a CLI command) for the
 * spans it still holds to reach the OTLP endpoint, in milliseconds. A receiver that is down must not hold
 * a stop longer than this.
 */
export const traceFlushTimeoutMs = 5_000;
/** Service name of spans when `OTEL_SERVICE_NAME` is not set: the process's role after this prefix (`errand-api`, `errand-worker`). */
export const traceServiceNamePrefix = 'errand';

// ---- HTTP API and CLI (owned by src/api) -----------------------------------------------------------
/** Default largest request body the API accepts, in bytes (`ERRAND_API_MAX_BODY_BYTES`); larger bodies get 413. */
export const defaultApiMaxBodyBytes = 256 * 1024;
/**
 * Default longest `?wait=` the API honours (`ERRAND_API_MAX_WAIT_MS`). Under API Gateway HTTP APIs' 30 s
 * integration timeout, so a waiting request through Lambda answers before the gateway gives up.
 */
export const defaultApiMaxWaitMs = 25_000;
/** Default and largest page size of `GET /v1/delegations`. */
export const defaultListPageSize = 20;
export const maxListPageSize = 100;
/** How long the API waits for a peek query to be answered (a closed workflow is replayed by a worker). */
export const peekQueryTimeoutMs = 5_000;
/** Largest number of workflows `GET /v1/approvals` queries at once, and how long the whole listing may take (ms). */
export const approvalsQueryParallelism = 8;
export const approvalsListDeadlineMs = 10_000;
/** Most waiting workflows `GET /v1/approvals` looks at (one visibility page: plenty for a person to decide). */
export const approvalsListMaxWorkflows = 200;
/**
 * Starts through Temporal's HTTP API (decision 0019): one attempt's longest wait (ms), and the deadline of
 * all attempts together (ms), under API Gateway HTTP APIs' 30 s integration timeout. The retries between
 * them follow the SDK's gRPC client (`@temporalio/client` grpc-retry): up to 10 attempts, waits growing
 * 1.7× from 100 ms (1 s after RESOURCE_EXHAUSTED) to at most 5 s, ±20 % jitter.
 */
export const temporalHttpAttemptTimeoutMs = 10_000;
export const temporalHttpStartDeadlineMs = 20_000;
export const temporalHttpRetry = { maxAttempts: 10, factor: 1.7, initialIntervalMs: 100, resourceExhaustedInitialIntervalMs: 1_000, maxIntervalMs: 5_000, maxJitter: 0.2 } as const;
/** `Retry-After` (seconds) of the API's 429 when Temporal still refused with RESOURCE_EXHAUSTED after the retries. */
export const rateLimitedRetryAfterSeconds = 5;
/** Largest answer body the plain HTTP client (src/http/plain-http.ts) keeps, in bytes; Temporal's own messages stay under 4 MiB. */
export const plainHttpMaxAnswerBytes = 8 * 1024 * 1024;
/** Longest `Idempotency-Key` header accepted, in characters. */
export const idempotencyKeyMaxLength = 255;
/** Words of the instructions shown in a workflow's static summary. */
export const summaryInstructionWords = 12;
/** Longest static summary of a workflow, in characters (the Web UI shows it on one line). */
export const staticSummaryMaxChars = 200;
/** Default port of the local API server (`ERRAND_API_PORT`). */
export const defaultApiPort = 8787;
/**
 * How long one poll of the CLI's live view (`errand delegate`, `errand peek --follow`) waits for the result,
 * in milliseconds: the text-so-far reaches the server with heartbeats about once a second, so polling a
 * little faster shows each piece soon after it arrives, and a result that arrives ends the wait at once.
 */
export const cliProgressPollMs = 400;
/** Lines of the model's text-so-far the CLI's live view shows under its progress line on a terminal (the last ones). */
export const cliLiveTextLines = 6;
/**
 * Most tasks `errand usage` reads below its root (one API request each). A parent keeps at most
 * `maxTaskRecords` task records, but a deep tree holds many more across its levels: the walk stops here,
 * and the output says so.
 */
export const usageTreeMaxNodes = 500;
/** How often the event stream (`GET /v1/delegations/{id}/events`) looks at the delegation, in milliseconds. */
export const eventStreamPollMs = 400;
/** How often the event stream sends a comment line when nothing happens, so proxies keep the connection open (ms). */
export const eventStreamKeepAliveMs = 15_000;
/** The reconnect delay the event stream asks clients to use (the SSE `retry:` field), in milliseconds. */
export const eventStreamRetryMs = 1_000;
/**
 * Shortest life of one event stream connection, in milliseconds. A stream lives as long as the API's
 * longest wait (`ERRAND_API_MAX_WAIT_MS`), but at least this, so a wait of 0 does not make clients reconnect
 * after every look.
 */
export const eventStreamMinLifetimeMs = 5_000;
/**
 * Most event streams one tenant may hold open on one API process (`ERRAND_API_MAX_EVENT_STREAMS`); past
 * it a new stream is a 429 with `Retry-After`. Streams of one delegation share one poller, so this bounds
 * the pollers a tenant can make the API run against Temporal.
 */
export const defaultApiMaxEventStreamsPerTenant = 20;
/**
 * Default most MCP sessions (`/v1/mcp`) one tenant may have running at once (`ERRAND_API_MAX_MCP_SESSIONS`):
 * every `initialize` without an `Mcp-Session-Id` starts a session workflow, so this bounds what a client that
 * never reconnects leaves behind until the sessions' idle timeout ends them. Past it an `initialize` is a 429.
 */
export const defaultApiMaxMcpSessionsPerTenant = 20;
/**
 * What an MCP tool call over HTTP leaves of a Lambda's remaining time for answering, ms: the call waits at
 * most the API's longest wait and at most the function's remaining time less this.
 */
export const mcpAnswerMarginMs = 2_000;
/** `Retry-After` of the 429 past the MCP session cap, in seconds. */
export const mcpSessionsRetryAfterSeconds = 30;
/** `Retry-After` of the 429 past the event stream cap, in seconds. */
export const eventStreamCapRetryAfterSeconds = 5;
/** File in the data directory where a running `errand dev` says where its API is (removed when it stops). */
export const devStackStateFileName = 'dev-stack.json';
/**
 * The file in errand's data directory that holds `errand dev`'s API token (mode 0600, beside
 * {@link devStackStateFileName}; a new one each start, removed at stop). Client commands that find the
 * stack send it; a model's command does not have it.
 */
export const devStackTokenFileName = 'dev-stack-token';
/** Random bytes of `errand dev`'s API token (written as hex). */
export const devStackTokenBytes = 32;
/** How long a client command waits for the `errand dev` API it found to answer `/healthz`, in milliseconds. */
export const devStackProbeTimeoutMs = 3_000;

// ---- approvals ------------------------------------------------------------------------------------
/** How long a tool call under an `ask` policy waits for a decision before it is denied (`ERRAND_APPROVAL_TIMEOUT_SECS`). */
export const defaultApprovalTimeoutMs = 60 * 60_000;

// ---- agent memory and skills (Claude Code `memory` / `skills`, decision 0031) ------------------------
/** Lines of an agent's `MEMORY.md` put into its system prompt (Claude Code's figure). */
export const agentMemoryPromptMaxLines = 200;
/** Bytes (UTF-8) of an agent's `MEMORY.md` put into its system prompt, at most (Claude Code's 25 KB). */
export const agentMemoryPromptMaxBytes = 25 * 1024;
/** Largest file an agent's memory tools write or read back whole, in bytes. */
export const agentMemoryFileMaxBytes = 256 * 1024;
/** Most files one agent memory folder holds; a write of a new file past it is refused. */
export const agentMemoryMaxFiles = 200;
/** Longest path of a file inside a memory folder, in characters. */
export const agentMemoryPathMaxLength = 200;
/** Most folder levels of a path inside a memory folder (`topics/api/errors.md` is 3). */
export const agentMemoryPathMaxDepth = 6;
/** Times a memory write retries after another write of the same file won the race for its next revision. */
export const agentMemoryWriteAttempts = 5;
/** Longest agent name that names a memory folder; longer names cannot have memory. */
export const agentMemoryNameMaxLength = 64;
/** Most skills one agent file preloads (`skills`). */
export const agentSkillsMax = 32;
/** Most bytes of skill text (all preloaded `SKILL.md` files together) put into one system prompt. */
export const agentSkillsMaxTotalBytes = 256 * 1024;

/**
 * Claude Code agent-file `hooks` (decision 0032): a command hook's time limit when it names none, in
 * seconds (Claude Code's own default), and the most one may ask for (a hook blocks its tool call or the
 * end of the run while it runs).
 */
export const agentHookDefaultTimeoutSeconds = 60;
/** The longest time limit a command hook may set, in seconds. */
export const agentHookMaxTimeoutSeconds = 600;
/** The most characters of a hook's feedback (its stderr, its reason, its additional context) the model gets; start and end are kept. */
export const agentHookFeedbackMaxChars = 10_000;
/** The longest `matcher` an agent-file hook may have (it is a regular expression over tool names). */
export const agentHookMatcherMaxChars = 200;
/** Headers one `http` hook may set. */
export const agentHookHttpHeadersMax = 20;
/** Bytes of an `http` hook's answer the worker reads; a longer answer is a non-blocking error. */
export const agentHookHttpAnswerMaxBytes = 1_048_576;

// ---- workflow scripts (SEMANTICS §7) --------------------------------------------------------------
/** Heap one round of a workflow script may use in its sandbox (bytes). */
export const workflowScriptMemoryBytes = 32 * 1024 * 1024;
/**
 * Interrupt checks one round of a workflow script may pass; the engine checks every few thousand loop
 * iterations or calls, so this is tens of millions of them: far more than orchestration needs, and an
 * endless loop ends within seconds.
 */
export const workflowScriptSteps = 10_000;
/**
 * Wall-clock time one round may take (ms), checked with the steps: a loop of slow built-ins (a long
 * `repeat`, a large `fill`) passes few checks per second. One built-in call runs to its end between checks.
 */
export const workflowScriptRoundMs = 10_000;
/** `agent()` calls one workflow run may make (`ERRAND_WORKFLOW_MAX_AGENTS`). */
export const workflowMaxAgents = 1_000;
/** Items one `parallel` or `pipeline` call may take. */
export const workflowMaxItems = 4_096;
/** Lines `log()` keeps per round; later ones are dropped. */
export const workflowScriptMaxLogs = 1_000;
/** Size of the JSON text a script's result may have (bytes of UTF-16 code units). */
export const workflowScriptMaxResultChars = 1_048_576;

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

// ---- sources (owned by src/sources) ---------------------------------------------------------------
// (sources section)
/** Largest source file (recipe or agent) a store will read; bigger files are refused. */
export const maxSourceFileBytes = 1024 * 1024;
/** How long a store's listing is served from cache before it is listed again. */
export const sourceListingTtlMs = 60_000;
/** Minimum time between two fetches of a git-synced store (a discovery call fetches regardless). */
export const gitSyncIntervalMs = 60_000;
/** Time limit of one git command (clone, fetch, checkout). */
export const gitCommandTimeoutMs = 120_000;
/** Bound on ListObjectsV2 pages read for one S3 listing (1000 keys each). */
export const maxS3ListPages = 100;
/** Bound on entries one store may list. */
export const maxStoreEntries = 10_000;
/** Length at which descriptions are cut in the `load` listing. */
export const listingDescriptionChars = 160;
/** How many "did you mean" names a not-found answer offers. */
export const maxNameSuggestions = 3;

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

// ---- blob store and conversations (owned by src/activities) --------------------------------------
/** Longest blob key, in characters. */
export const blobKeyMaxLength = 512;
/** Most keys one blob list returns; a larger listing is an error asking for a narrower prefix. */
export const blobListMaxKeys = 100_000;
/** Messages per conversation chunk blob: a read of n messages needs about n / this many blob reads. */
export const conversationChunkSize = 50;
/** Conversations kept in the in-process LRU cache of read messages (entries are immutable, so caching is safe). */
export const conversationCacheEntries = 64;
/** Total characters of messages the conversation cache may hold across all conversations. */
export const conversationCacheMaxChars = 64 * 1024 * 1024;
/** Blob reads a conversation read issues at once. */
export const conversationReadConcurrency = 16;

// ---- durable payloads -----------------------------------------------------------------------------
/** Assistant text longer than this travels by reference (conversation store), not through history. */
export const inlineTextLimit = 1_024;
/** Length of argument and output previews shown by peek and kept in history. */
export const previewLength = 400;
/** Default upper bound of one model call (ms). */
export const defaultModelCallTimeoutMs = 10 * 60_000;
/** Default heartbeat timeout of a model call (ms): how soon a dead worker's call is retried elsewhere. */
export const defaultModelHeartbeatTimeoutMs = 10_000;
/** How often a model call heartbeats (ms); must be well under the heartbeat timeout. */
export const modelHeartbeatIntervalMs = 1_000;
/** Default upper bound of one tool call (ms). */
export const defaultToolCallTimeoutMs = 5 * 60_000;
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
/** Longest message accepted by sendMessage / a session message, in characters. */
export const maxMessageLength = 100_000;
/** Model calls one session message may cause (`ERRAND_SESSION_MAX_TURNS`). */
export const defaultSessionMaxTurns = 50;

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
/** Longest `Idempotency-Key` header accepted, in characters. */
export const idempotencyKeyMaxLength = 255;
/** Longest message accepted by `send_message` / `POST /v1/delegations/{id}/messages`, in characters. */
export const sendMessageMaxChars = 100_000;
/** Words of the instructions shown in a workflow's static summary. */
export const summaryInstructionWords = 12;
/** Longest static summary of a workflow, in characters (the Web UI shows it on one line). */
export const staticSummaryMaxChars = 200;
/** Default port of the local API server (`ERRAND_API_PORT`). */
export const defaultApiPort = 8787;
/** How long one poll of the CLI's live progress line waits for the result, in milliseconds. */
export const cliProgressPollMs = 1_000;

// ---- approvals ------------------------------------------------------------------------------------
/** How long a tool call under an `ask` policy waits for a decision before it is denied (`ERRAND_APPROVAL_TIMEOUT_SECS`). */
export const defaultApprovalTimeoutMs = 60 * 60_000;

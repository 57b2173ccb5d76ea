/**
 * The limits of the HTTP API, the CLI and the dev stack (owned by src/api and src/cli). Part of errand's
 * defaults and limits: src/contracts/limits.ts re-exports every file of this folder.
 */

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
/**
 * How long an API process counts an MCP session it started toward the tenant's cap on its own, ms, beside
 * Temporal visibility's list, which can lag a start by a moment (more on a loaded server).
 */
export const mcpStartVisibilityLagMs = 30_000;
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
/**
 * How long a client command waits for the `errand dev` API it found (its process alive) to answer `/healthz`,
 * in milliseconds. Past it the stack is passed over with a note, and the command reaches Temporal itself at
 * the configured address, which may not be the stack's: long enough for a stack on a machine under load
 * (3 s was not, with the load average at 30).
 */
export const devStackProbeTimeoutMs = 10_000;

/**
 * The poll interval errand suggests to an MCP client for a task (the Tasks extension's `pollIntervalMs`): a
 * `tasks/get` is a describe and a query, cheap enough every two seconds per task.
 */
export const mcpTaskPollIntervalMs = 2_000;
/** How long a 2025-11-25 task request waits for the session to name the delegation it started, ms (the start is recorded a moment after the call answers). */
export const legacyTaskStartWaitMs = 10_000;
/** How long a 2025-11-25 `tasks/cancel` waits for the delegation to end before it answers with the task as it is, ms. */
export const legacyTaskCancelWaitMs = 10_000;

/**
 * How often a foreground `delegate` over MCP reports progress (`notifications/progress`: turns, cost, last
 * words) to a client that sent a progress token, ms: one session query and one peek per report.
 */
export const mcpProgressIntervalMs = 5_000;

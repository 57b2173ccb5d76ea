/**
 * The limits of trace export (owned by src/observability). Part of errand's defaults and limits:
 * src/contracts/limits.ts re-exports every file of this folder.
 */

// ---- traces ---------------------------------------------------------------------------------------
/**
 * How long a process that exports traces waits at its end (worker stop, API stop, a CLI command) for the
 * spans it still holds to reach the OTLP endpoint, in milliseconds. A receiver that is down must not hold
 * a stop longer than this.
 */
export const traceFlushTimeoutMs = 5_000;
/** Service name of spans when `OTEL_SERVICE_NAME` is not set: the process's role after this prefix (`errand-api`, `errand-worker`). */
export const traceServiceNamePrefix = 'errand';

/**
 * The limits of workflow scripts (SEMANTICS §7, src/workflow-scripts). Part of errand's defaults and limits:
 * src/contracts/limits.ts re-exports every file of this folder.
 */

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

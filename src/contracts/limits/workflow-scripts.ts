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
/**
 * Rounds of workflow scripts running at once on one worker, each in a thread of its own (decision 0038):
 * more wait for a thread. A hostile round holds its thread at most its round time and
 * {@link workflowRoundGraceMs}.
 */
export const workflowRoundThreads = 4;
/** Time past a round's own limit after which its thread is stopped from outside (one long built-in call is not interrupted). */
export const workflowRoundGraceMs = 2_000;
/** Heap of a round's thread (MiB): the engine's own heap is its WebAssembly memory, limited by the round. */
export const workflowRoundThreadHeapMb = 128;
/** Agents of a run running at once by default and at most (`ERRAND_WORKFLOW_MAX_CONCURRENT_AGENTS`). */
export const workflowMaxConcurrentAgents = 16;
/** Characters of a script's result a run's history carries inline; a longer one goes by reference. */
export const workflowResultInlineMaxChars = 16_384;
/** Rounds one run of the workflow makes before it continues as new (besides Temporal's suggestion). */
export const workflowRoundsBeforeContinueAsNew = 200;
/** Log lines of a round a run keeps for its view (the last ones), and their length. */
export const workflowViewLogLines = 20;
/** Characters of one log line in a run's view. */
export const workflowViewLogChars = 500;
/** Labels a run's view counts apart; agents of further labels are counted under the last one. */
export const workflowViewMaxLabels = 50;

/**
 * Agents one run of the workflow starts before it continues as new (decision 0056). Each adds its plan (the
 * child's whole input) and its start to the history, about 4 KB and 7 events for a one-line agent (bench
 * figure workflow-history-bytes-per-agent), so Temporal's own suggestion (by default past 4,096 events or
 * 4 MB) usually ends a run first, near 550 agents; this bound keeps a run under Temporal's warning limits
 * (10,240 events, 10 MB) where an operator raised that suggestion. The lanes drain at each continue-as-new:
 * fewer, larger runs drain less often.
 */
export const workflowAgentsBeforeContinueAsNew = 1_000;
/** The same bound for runs started before the `workflow-run-longer-links` patch (decision 0056), which replay with it. */
export const workflowAgentsBeforeContinueAsNewUnpatched = 200;
/**
 * Agents one `planWorkflowAgents` activity plans at most: the agents whose lanes free in one workflow task,
 * and those planned ahead while the lanes are busy, go as one activity rather than one each.
 */
export const workflowPlanBatchMax = 16;
/** Characters of JSON one `planWorkflowAgents` answer carries at most (each plan is a child's whole input); past it, fewer are planned. */
export const workflowPlanBatchMaxChars = 512 * 1024;
/** How often a workflow run's activities heartbeat (ms); their heartbeat timeout is {@link workflowRunHeartbeatTimeoutMs}. */
export const workflowRunHeartbeatIntervalMs = 2_000;
/** Heartbeat timeout of a workflow run's activities: how soon a lost worker's round or plan moves elsewhere. */
export const workflowRunHeartbeatTimeoutMs = 10_000;

// ---- workflow runs from outside: API, CLI, run_workflow (SEMANTICS §7, decision 0039) --------------
/** Rounds a projection runs the script for (each answers every waiting agent with a placeholder) before it stops counting. */
export const workflowProjectionMaxRounds = 64;
/** Wall-clock time one projection round may take (ms): a projection runs in the API's request, so below a run's round limit. */
export const workflowProjectionRoundMs = 3_000;
/** Wall-clock time a whole projection may take (ms); past it the figures so far are answered, marked incomplete. */
export const workflowProjectionTotalMs = 15_000;
/** How often the workflow event stream looks at a run's view (ms). */
export const workflowEventPollMs = 1_000;

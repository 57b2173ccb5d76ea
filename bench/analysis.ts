/**
 * Reasons for missed targets, found by profiling (history event counts, activity counts, timings — see each
 * figure's notes) and by reading errand's workflow and activity code. results.md shows a figure's reasons
 * only when it missed its target in that run.
 */
const overload =
  'the machine was oversubscribed during the run (see the load averages above: other test suites with their own dev servers ran on the same 2 cores); workers logged workflow tasks taking over 5 s and "Workflow task not found" (tasks that timed out while waiting for CPU), so part of every miss that depends on time is CPU starvation, not errand.';

export const analysis: Record<string, string[]> = {
  'overhead-per-turn': [
    'per turn errand runs the same two activities and two workflow tasks as the baseline, plus one UpsertWorkflowSearchAttributes event (src/workflows/agent-core.ts `updateSearchAttributes`, called after every model call) and larger payloads (activity summaries, inputs with route/toolsets, ~0.8 KB per turn against ~40 B for the baseline). Activity bodies add the conversation-store I/O: modelTurn reads the conversation and writes the answer twice (outcome blob + message), runTool reads the assistant message, writes the result twice.',
    'suggested (src/activities/subagent-activities.ts): write the model outcome once — the stored assistant message could serve as the idempotency record instead of a separate `outcomes/answers/...` blob — which removes one file write + rename per activity; the same for tool results.',
    overload,
  ],
  throughput: [
    'each delegation costs more CPU per workflow task than the bare workflow: the errand workflow bundle is ~2.9 MB against ~1.6 MB for the baseline, because src/workflows/agent-core.ts imports `delegateRequestSchema` (zod) from src/contracts/delegation.ts; the whole zod library (85 modules) is bundled and evaluated in the workflow sandbox (likely per workflow, since the sandbox isolates module state; not measured separately). Workers logged first workflow tasks of subagentWorkflow taking 6–8 s under the burst (TMPRL1104).',
    'suggested: validate `delegate` arguments in the planDelegation activity (it already validates the plan) or with a small hand-written check, so zod leaves the workflow bundle; keep zod in contracts used by the API and activities only.',
    overload,
  ],
  'history-bytes-per-turn-at-10': [
    'each turn puts the 2 KB user message into history twice — once as the sendMessage update payload (WorkflowExecutionUpdateAccepted) and again as the input of the appendMessages activity (src/workflows/subagent-workflow.ts: `core.append([{ role: "user", content: message }])`) — and the 2 KB answer once more, inline in the modelTurn result (src/activities/subagent-activities.ts `toModelTurnOutput` keeps text up to `inlineTextLimit` = 4096 characters). Three UpsertWorkflowSearchAttributes per turn (setState running, after the model call, setState waiting: src/workflows/agent-core.ts `updateSearchAttributes`) and a third workflow task per turn (the update) add the rest; the history profile in the notes shows ~7.4 KB of payloads per turn.',
    'suggested: (1) append the user message inside the update handler path by reference — e.g. store it from the caller side (API / parent) in the conversation store and pass only a sequence number, or let modelTurn read pending user text from its own input once instead of a separate appendMessages; (2) return only a preview (`previewLength`, 400) of the answer from modelTurn and read the full text by reference when the result is needed (`lastAssistantFullText` already supports `truncated`), i.e. lower `inlineTextLimit` in src/contracts/limits.ts to the preview length.',
  ],
  'history-bytes-per-turn-at-500': [
    'see turn 10: the per-turn cost is dominated by the message and the answer, which travel through history in full (about 3 × 2 KB per turn).',
    'continue-as-new turns are large because the carried state includes the transcript (src/workflows/agent-core.ts `snapshot()` carries `transcript`: up to `transcriptEntries` = 100 entries of up to 4000 characters, ~400 KB with 2 KB messages). Suggested: carry only the last few transcript entries, or previews, and read older ones from the conversation store.',
  ],
  'api-start-latency-p50': [
    'the API path adds an HTTP round trip on loopback (Hono + @hono/node-server + the client\'s fetch), body validation and planning, and a heavier StartWorkflowExecution: typed search attributes (6), static summary and details (user metadata) and a memo, which the server indexes in visibility on start; the bare start sends only the input.',
    overload,
  ],
  'cancel-latency-p99': [
    'the cancel reaches the activity only with the response to a heartbeat, and Temporal\'s worker throttles heartbeats to 0.8 × the heartbeat timeout (10 s default → one heartbeat to the server every 8 s), although the activity calls heartbeat() every second (src/activities/subagent-activities.ts `withHeartbeat`). The workflow side is fast (signal → ActivityTaskCancelRequested in tens of ms, see notes).',
    'suggested (src/worker.ts `createErrandWorker`): set the worker option `maxHeartbeatThrottleInterval: "1s"` (measured as the what-if above), or lower the default heartbeat timeout; the interval should stay under `modelHeartbeatIntervalMs`-scale so cancels land within about a second.',
  ],
  'recovery-time': [
    'every delegation had one workflow task time out (notes: "workflow task timeouts 50" per run): a workflow task started on, or queued on the sticky queue of, the killed worker is retried only after the workflow task timeout (Temporal default 10 s) or the sticky schedule-to-start timeout — longer than the 5 s heartbeat timeout that the target is based on. Model and tool activities came back after their heartbeat timeout as designed. Worker boot (tsx compiling the sources) adds 3–6 s, but overlaps with those timeouts.',
    'suggested: start subagent workflows with a `workflowTaskTimeout` below the model heartbeat timeout (e.g. 3–5 s) where they are started (src/api/delegation-service.ts `start`, and `startChild` in src/workflows/agent-core.ts), since errand\'s workflow tasks are short; and give the store activities (src/workflows/agent-core.ts `this.store`: no heartbeat timeout, 60 s start-to-close) a short start-to-close (e.g. 10 s) so a worker lost during one does not stall a delegation for a minute (did not happen in this run).',
    overload,
  ],
  'recovery-repeated-turns': [
    'most likely: a model answer that the server had fully written when the worker died, but that the activity had not yet read and stored (src/activities/subagent-activities.ts `modelTurn`: `model.generate` then `blobs.put(key, …)`), is requested again by the retry after the heartbeat timeout. On a CPU-starved worker (load average above 10) answers sit unread in socket buffers for hundreds of ms, so this window is about as wide as the 300 ms in-flight window (runs: 13 and 4 requests aborted, 10 and 25 repeats). Finished outcomes that were stored are never repeated (the retries found them). Not verifiable from the worker side alone: the answer exists only in the dead process. Closing it needs the provider to deduplicate (an idempotency key per conversation id + length, where the vendor supports one) or a caching proxy; a re-run on an idle machine should show far fewer repeats.',
  ],
  'worker-memory': [
    'about 1.3–1.5 MB of resident memory per cached waiting workflow (see notes; the idle worker is ~245 MB): each workflow in the sticky cache keeps its own sandbox state; errand\'s bundle is twice the size of a bare one because of zod (pulled in by src/workflows/agent-core.ts → src/contracts/delegation.ts), which plausibly accounts for part of it (not separated by measurement), plus the workflow\'s own state (transcript, tasks).',
    'suggested: remove zod from the workflow bundle (see throughput), and bound the sticky cache for long-waiting continuable subagents with the worker option `maxCachedWorkflows` (e.g. 200–300): a waiting subagent evicted from cache costs one replay when its next message arrives, which with continue-as-new-bounded histories is cheap.',
  ],
};

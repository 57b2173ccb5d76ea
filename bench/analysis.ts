/**
 * Reasons for missed targets, found by profiling (history event counts, activity counts, timings — see each
 * figure's notes) and by reading errand's workflow and activity code. results.md shows a figure's reasons
 * only when it missed its target in that run.
 */
const overload =
  'the machine was oversubscribed during the run (see the load averages above: other test suites with their own dev servers ran on the same 2 cores); workers logged workflow tasks taking over 5 s and "Workflow task not found" (tasks that timed out while waiting for CPU), so part of every miss that depends on time is CPU starvation, not errand.';

export const analysis: Record<string, string[]> = {
  'overhead-per-turn': [
    'the target is errand\'s orchestration cost per turn (the model answers at once, list_directory takes a millisecond), ≤ 30 ms on the dev server with state on disk; the ratio to a bare two-activity turn is reported. The floor figures below show what the dev server itself costs here.',
    'until errand started its dev servers with a higher transfer-queue poll rate (floor section), errand and the baseline alike waited 50 ms for every workflow or activity task, which hid errand\'s own cost (ratio 1.007 at 101 ms/turn). With the wait gone a bare turn costs ~31 ms here and errand\'s turn shows its own work on top: per turn two activities that read and write blobs (modelTurn 9 – 10 ms and runTool ~12 ms against ~4 ms for a no-op, scheduled → completed) and two workflow tasks ~3 ms heavier each. The ratio now measures errand, not the limiter.',
    'per turn errand runs the same two activities and two workflow tasks as the baseline, plus one UpsertWorkflowSearchAttributes event (src/workflows/agent-core.ts `updateSearchAttributes`, called after every model call) and larger payloads (activity summaries, inputs with route/toolsets, ~0.8 KB per turn against ~40 B for the baseline). Activity bodies add the conversation-store I/O: modelTurn reads the conversation and writes the answer twice (outcome blob + message), runTool reads the assistant message, writes the result twice.',
    'suggested (src/activities/subagent-activities.ts): write the model outcome once — the stored assistant message could serve as the idempotency record instead of a separate `outcomes/answers/...` blob — which removes one file write + rename per activity; the same for tool results.',
    overload,
  ],
  'floor-turn': [
    'the bare turn is bound by CPU, not by a wait (floor section): two workflow tasks and two activities cost the server and the worker about as much CPU time as the turn takes. Only fewer workflow tasks per turn lower it — the tool call as a local activity measured 20 – 25 ms per turn.',
  ],
  'cli-peek': [
    'the Temporal TypeScript client alone (a bundled script that only connects, describes and queries) takes most of it: @temporalio/proto builds the reflection of the whole Temporal API (~700 KB of descriptors) when it loads, and gRPC and protobufjs add ~700 KB more. errand adds zod (contracts), the API app and configuration; the AI and AWS SDKs are no longer loaded by peek.',
    'with `errand dev` running, or ERRAND_API_URL set, peek is an HTTP call and loads no Temporal client.',
  ],
  throughput: [
    'each delegation runs one more workflow-task-heavy step than the bare workflow: per delegation 45 history events against 41, four UpsertWorkflowSearchAttributes (status and turns, kept current for the Web UI), larger payloads (~2.9 KB against ~110 B: activity summaries, inputs carrying route, toolsets and limits), and current details written on every workflow task. The workflow bundle is ~1.9 MB (zod is no longer in it; it was ~2.9 MB when a first run measured 0.76) against ~1.6 MB for the bare bundle.',
    'suggested: upsert search attributes only when their values change (the running → waiting → running transitions of one turn repeat the same status), and drop `setCurrentDetails` from workflow tasks that change nothing a person would read.',
  ],
  'history-bytes-per-turn-at-10': [
    'each turn puts the 2 KB user message into history twice — once as the sendMessage update payload (WorkflowExecutionUpdateAccepted) and again as the input of the appendMessages activity (src/workflows/subagent-workflow.ts `core.append([{ role: "user", content: message }])`) — and up to 1 KB of the answer (`inlineTextLimit` in src/contracts/limits.ts) inline in the modelTurn result. Three UpsertWorkflowSearchAttributes per turn and a third workflow task per turn (the update) add the rest. The figure is flat (turn 500 within 1 % of turn 10): nothing grows with the conversation, because the conversation itself is stored by reference.',
    'to reach 4 KB: the caller (API, CLI, parent) would store the message in the blob store and send only its key in the update, so the message never enters history; not done yet.',
  ],
  'history-bytes-per-turn-at-500': [
    'see turn 10: the per-turn cost is dominated by the message (twice) and the answer preview, and it is flat.',
    'continue-as-new carries the last 20 transcript entries (`carriedTranscriptEntries`), not the whole conversation.',
  ],
  'api-start-latency-p50': [
    'the API path adds an HTTP round trip on loopback (Hono + @hono/node-server + the client\'s fetch), body validation and planning, and a heavier StartWorkflowExecution: typed search attributes (6), static summary and details (user metadata) and a memo, which the server indexes in visibility on start; the bare start sends only the input.',
  ],
  'cancel-latency-p99': [
    'a cancel reaches a running model call only with the answer to its next heartbeat. Heartbeats now go every 250 ms and the worker sends them at most every 250 ms (`modelHeartbeatIntervalMs`, `heartbeatThrottleMs`; decision 0012), so the latency is the signal reaching the workflow (~20 – 90 ms) plus up to one heartbeat interval plus a round trip; a miss means the worker or the server was starved of CPU for longer than that.',
  ],
  'recovery-time': [
    'what waits after a SIGKILL (decision 0012): a model call comes back after its heartbeat timeout (5 s here) plus its retry\'s first backoff (1 s); a workflow task the dead worker was running comes back after the workflow task timeout, now 5 s (`workflowTaskTimeoutMs`, was Temporal\'s 10 s), and a task queued on the dead worker\'s sticky queue after the sticky schedule-to-start timeout (3 s, src/worker.ts) — a task that timed out while running can be queued there once more, so the slowest path is 5 s + 3 s plus a replay. The histories above count both kinds of workflow task timeout.',
    'the new worker\'s own boot (node --import tsx compiling the sources, loading the bundle) is a floor under every delegation: about 2.5 s on a quiet machine, 4 – 7 s under a load average of 10 – 20. The first answers cannot come before it.',
    'not done: a sticky schedule-to-start timeout of 1 s would cut the slowest path by 2 s, but a busy live worker (a burst of starts, the throughput figure) would then lose stickiness and replay whole histories; a workflow task timeout under 5 s would turn a starved machine\'s slow tasks into retries. The remaining lever is the heartbeat timeout itself (the configuration default is 10 s: budget 12 s).',
  ],
  'recovery-repeated-in-flight-calls': [
    'a call in flight at the kill is asked again at most once: its retry finds no stored answer (the dead worker had none, or had one it had not yet written) and calls the model. More than one per delegation would mean a retry that itself failed.',
  ],
  'recovery-repeated-stored-calls': [
    'a stored answer must never be asked for again: the retried modelTurn reads it (`ConversationStore.readStored`). A count above 0 is a bug in that path (or, if the notes say the store was read late, a call the new worker made and stored before the read).',
  ],
  'worker-memory': [
    'about 0.5 MB per cached waiting workflow on top of an idle worker of ~230 – 250 MB. The worker now caches at most 500 workflows (`defaultMaxCachedWorkflows`, `ERRAND_WORKER_MAX_CACHED_WORKFLOWS`; decision 0012); if RSS still exceeds the target, the heap held after the start burst (V8 frees it lazily) or a larger cache setting is the cause.',
  ],
};

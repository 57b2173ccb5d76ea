/**
 * Reasons for missed targets, found by profiling (history event counts, activity counts, timings — see each
 * figure's notes) and by reading errand's workflow and activity code. results.md shows a figure's reasons
 * only when it missed its target in that run.
 */

export const analysis: Record<string, string[]> = {
  'overhead-per-turn': [
    'per turn errand now runs one workflow task and one activity (modelTurn), with the tool call as a local activity inside the workflow task: 7.3 history events and about one workflow task per turn against the bare turn\'s 12.1 and two. What remains is CPU on two cores shared by the server, the worker and the client: the bare turn with a local tool costs 13 – 25 ms here, depending on what else the machine runs (floor section), before errand does anything of its own.',
    'errand\'s own work on top (last run: workflow tasks about 29 ms each, modelTurn about 10 ms per turn): the model turn reads the conversation (cached) and writes the answer with an fsync; the local tool reads its call and writes its result with an fsync (2 – 5 ms each on this disk); the token estimate, the policy check, the live-text heartbeats and larger payloads (summaries, route, toolsets).',
    'not done: storing the tool result with the next model call (as pending messages are) would save one fsync and one blob write per turn; dropping the fsync would trade away durability on a crash of the machine, which errand does not do.',
  ],
  'cli-peek': [
    'peek reads through Temporal\'s HTTP API (two requests with Node\'s http module, not fetch, whose undici Node compiles on first use) and loads no Temporal client; the bundle keeps only zod\'s English messages. What is left is Node\'s own start (~40 ms), loading the bundle\'s modules — zod and the API contracts are about 330 KB of what peek loads — and reading the configuration; a miss means the machine was busy (compare with `temporal workflow describe` in the same run).',
    'not done: keeping zod and the API contracts off the peek path (a hand-written check of the two answers) would take most of the remaining module loading away.',
  ],
  throughput: [
    'each delegation keeps the Web UI current: search attributes (status, turns) are written at most once a second per workflow (`viewsUpsertIntervalMs`) and current details only when they change; larger payloads than the bare workflow (route, toolsets, summaries). If this misses, compare the events per delegation in the notes with the bare workflow\'s.',
    'where the CPU goes (profiles and /proc samples of this figure): the Temporal server uses more than half of the two cores, 11 – 17 s per burst of 200 for errand and bare alike, rising as its store fills; errand\'s worker about a quarter more than the bare worker: the workflow code per turn and the durable blob writes of the conversation (temp file, fsync, link, directory fsync). The SDK\'s stack-trace promise hook was 40 % of errand\'s workflow-thread CPU until the sandbox recorded no frames (decision 0018: 21 – 22 s of busy time per thread in a profiled run, 15 s after). errand runs two workflow threads (decision 0016).',
    'the ratio is noisy on this machine: bursts of the same code in one run differ by up to a fifth, for errand and for the bare workflows alike, and both slow down as the server\'s store fills; the bursts run in counterbalanced order so neither kind is always measured on the fuller store, and the notes list every burst and each pair\'s ratio. The ratio of the medians still moves by about ±0.05 between runs.',
    'no longer a cause: a workflow task refused at the end of a delegation (UnhandledCommand, then a replay) hit 22 – 54 of every 200 delegations while the views\' interval timer could fire during the last task; it is cancelled there since decision 0017 (the notes count failed and timed-out workflow tasks of every burst).',
  ],
  'history-bytes-per-turn-at-10': [
    'a message enters history once, by reference when long (the caller stores it and the update carries its key; decision 0002), and the answer\'s text only up to `inlineTextLimit`; if this misses, the notes\' bytes by event type say which payload grew.',
  ],
  'history-bytes-per-turn-at-500': [
    'see turn 10: the per-turn cost is dominated by the message (twice) and the answer preview, and it is flat.',
    'continue-as-new carries the last 20 transcript entries (`carriedTranscriptEntries`), not the whole conversation.',
  ],
  'api-start-latency-p50': [
    'the API starts through Temporal\'s HTTP API (decision 0019: `ERRAND_TEMPORAL_HTTP_URL`, which `errand dev` sets for its own API): one HTTP/1.1 request on a keep-alive connection instead of the SDK\'s start over Node\'s HTTP/2 gRPC client, whose JavaScript took about 0.8 ms of the API process before the start was on the socket and 0.4 ms after the answer. Probed side by side from the bench process in random order: the same start with errand\'s options took 5.0 – 5.9 ms through the SDK and 4.5 – 5.0 ms through the HTTP API; the figure alone went from 1.52 – 1.60x (gRPC) to 1.32x. The same figure without the setting is api-start-latency-grpc-p50. The bullets below are the earlier study of the gRPC path.',
    'what the budget is spent on (side-by-side probes on this machine, interleaved with bare starts): a minimal Node service — node:http, no framework, no validation — that starts the same workflow with the same SDK measured 1.24x a bare start; with errand\'s search attributes (ownership by tenant, status and listing filters) and the Web UI\'s summary and details, 1.35 – 1.41x. So the second process\'s round trip and the start\'s extras take most of the 1.5x before errand\'s own code runs.',
    'errand\'s own part, timed inside `errand api` after a few thousand requests: the route reached at 0.19 ms (reading the body 0.1 ms of it), the start called at 0.39 ms (planning 0.11, ids and start options 0.1), the answer 0.15 ms after the start returned — about 0.5 ms, and about 3 ms of CPU per request against the minimal service\'s 2.4 ms.',
    'where one request\'s time goes (a probe on the bench\'s dev server, medians of 500 requests timed inside `errand api`, interleaved with bare starts, a bare start with errand\'s start options and a GET /healthz): the start call took 5.27 ms inside `errand api` and 5.35 ms from the bench\'s own client with the same options (4.81 ms without them), errand\'s code before and after it 0.43 and 0.23 ms, and the request took 7.67 ms at the client: about 1.6 ms is the two loopback hops. The same probe\'s /healthz, which does nothing, took 1.0 – 1.15 ms interleaved and 0.17 ms back to back: a process that has slept between requests is slow to wake on this machine, and the API adds two such wake-ups (client → API, API → client) to the bare start\'s two.',
    'a system-call trace of `errand api` during the figure (2026-12-02, 300 requests): 1.1 – 1.3 ms from reading the request to writing the start to Temporal (the route reached at 0.2 ms, the start called at 0.45 ms, the rest the SDK\'s start path: the bench\'s bare start spends about as long in its own process), Temporal\'s answer 4.0 ms after the start was sent against 3.4 ms for a bare start, and 0.5 ms from that answer to the HTTP answer (0.4 ms of it the SDK\'s). Starts with errand\'s search attributes on the bench\'s client: 0.3 – 0.5 ms over a bare start on a fresh store, up to 1.3 ms after 3,000 starts; one attribute costs nearly as much as six. Tried without gain: the SDK\'s native connection for the API\'s client, gRPC-JS retries off, a 1 MB young generation.',
    'why a fraction of a millisecond shows: the dev server spends 8 – 9 ms of CPU per start (visibility and transfer work after it answers) while a start takes ~5 ms, so sequential starts keep both cores busy, and every process that must be woken and scheduled pays for it. On a machine with cores to spare the same fixed costs weigh less.',
    'done: the body is read from the Node request (no web stream); a plain start keeps no memo; what planning needs from the configuration is worked out once; the disk is looked at only for isolation worktree; ids come from a pooled random source; the request log is written after the answer. Not done: starting without the search attributes (and writing them in the first workflow task) — the tenant and status filters of listings and the Web UI must hold from the first moment.',
  ],
  'api-start-latency-grpc-p50': [
    'the API without `ERRAND_TEMPORAL_HTTP_URL` (a Temporal whose HTTP port is not reachable, or a connection with an mTLS certificate, which the HTTP client cannot present): starts go through the Temporal client\'s gRPC connection; see api-start-latency-p50 for where its time goes.',
  ],
  'cancel-latency-p99': [
    'the call runs on the worker of its workflow, so the cancel signal\'s handler aborts it through the `inFlightCalls` sink as soon as that worker has processed the workflow task with the signal (decision 0022): the latency is the signal reaching the workflow (~20 – 90 ms) and the abort, not a heartbeat (heartbeats now go only with new live text, every 2.5 s, or as a keep-alive). A call on another worker than its workflow\'s task would wait for its next heartbeat; a miss here means the worker was starved of CPU.',
  ],
  'recovery-time': [
    'what waits after a SIGKILL (decisions 0012, 0014): a model call comes back after its heartbeat timeout (5 s here) plus its retry\'s first backoff (100 ms), and its retry resets the workflow\'s sticky queue so the next task goes to the live worker at once; a workflow task the dead worker was running comes back after the workflow task timeout (3 s, decision 0015); a task queued on the dead worker\'s sticky queue after the sticky schedule-to-start timeout (3 s). The new worker replays those workflows before the model calls come back; then it replays, at once, every workflow whose call was in flight (5 – 40 of them, depending on the moment of the kill), on its two workflow threads while the delegations already back run their turns — each replay costs 20 – 45 ms of CPU here, a third of it the SDK\'s stack-trace promise hook — which is most of the rest: compare the slowest delegation\'s events above. A call asked again also waits for its answer (held 300 ms here) and for its write to the store.',
    'the new worker\'s own boot (`errand worker`, the bundled CLI, prebuilt workflow bundle) overlaps the 5 s wait; under a load average of 10 – 20 it takes 4 – 7 s and can show.',
    'not done: a sticky schedule-to-start timeout of 1 s would shorten the sticky path, but a busy live worker (a burst of starts, the throughput figure) would then lose stickiness and replay whole histories; a workflow task timeout under 3 s would turn a starved machine\'s slow tasks into retries. The remaining lever is the heartbeat timeout itself (the configuration default is 10 s: budget 12 s).',
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
  'workflow-overhead-per-agent': [
    'the run starts agents only between its own steps (src/workflows/workflow-run.ts): when an agent ends, the workflow records it (activity recordWorkflowAgents), runs the script again (activity runWorkflowRound: QuickJS in a thread, journal and script read from errand\'s store), and only then starts the agents the round names, each after a planWorkflowAgent activity; a lane stays empty for that whole chain, where a plain delegation\'s lane starts the next one at once. The fan-out figure\'s notes give each activity\'s mean time.',
  ],
  'workflow-fanout-wall-time': [
    'see workflow-overhead-per-agent: in the first measured run (a heavily loaded machine) 97 rounds for 500 agents, about 5 agents started per round, with recordWorkflowAgents (221 ms mean) and runWorkflowRound (540 ms mean) between an agent\'s end and the next start, and each agent\'s delegation taking a median 1.3 s for its 500 ms model call.',
  ],
};

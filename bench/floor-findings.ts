import type { FigureResult } from './figure';

/**
 * The floor section of bench/results.md: why a bare activity cost ~50 ms on the dev server here, what was
 * tried, and what errand must change to reach ≤ 30 ms per turn. The experiment table is from
 * `tsx bench/floor-probe.ts 4` (one-off, dated below); the figures `floor-activity` and `floor-turn` are
 * re-measured by every `npm run bench` and printed after it. Decision record: docs/decisions/0007.
 */

const probeTable = [
  '| Dev server (state) | Worker | Workload | Steady ms per unit | Min – max | CPU ms per unit, server / worker |',
  '|---|---|---|---|---|---|',
  '| stock: Temporal defaults (disk) | SDK defaults | activity | 47.2 | 39.7 – 69.2 | 19 / 7.5 |',
  '| stock + WAL, synchronous=normal (disk) | SDK defaults | activity | 50.1 | 49.9 – 50.4 | 13.1 / 7.7 |',
  '| stock + transfer poll RPS 1000 (disk) | SDK defaults | activity | 56.9 | 26.5 – 86.9 | 20 / 7.9 |',
  '| stock (in memory) | SDK defaults | activity | 50 | 49.9 – 50.2 | 12.5 / 7.4 |',
  '| errand: RPS 1000 + WAL (disk) | SDK defaults | activity | 21.3 | 11.8 – 24.7 | 11.5 / 6.3 |',
  '| errand (tmpfs) | SDK defaults | activity | 21.3 | 13.6 – 28.6 | 10.5 / 6.4 |',
  '| errand (in memory) | SDK defaults | activity | 21.9 | 16.7 – 23.1 | 9.8 / 7 |',
  '| errand + 1 task-queue partition (disk) | SDK defaults | activity | 16.7 | 13.7 – 24.8 | 9.9 / 5.5 |',
  '| errand + GOMAXPROCS=1 (disk) | SDK defaults | activity | 16.5 | 14.1 – 20.4 | 9.4 / 5.8 |',
  '| errand + WAL, synchronous=full (disk) | SDK defaults | activity | 22.7 | 20.6 – 28 | 12.6 / 6.1 |',
  '| errand with transfer poll RPS back to 20 (disk) | SDK defaults | activity | 50 | 49.8 – 51.6 | 12.3 / 6.7 |',
  '| errand (disk) | no eager activity dispatch | activity | 18.5 | 17.9 – 20.2 | 13.3 / 6.1 |',
  '| errand (disk) | autoscaling pollers | activity | 15.5 | 14.6 – 19 | 10.1 / 5.6 |',
  '| errand (disk) | 1 workflow + 1 activity poller | activity | 19.8 | 17.6 – 21.6 | 10.7 / 6 |',
  '| errand (disk) | no workflow cache (no sticky queue) | activity | 260.8 | 224.1 – 358.8 | 26 / 110.5 |',
  '| errand (disk) | sticky schedule-to-start 3 s (errand\'s) | activity | 16.9 | 16.1 – 18.6 | 11.5 / 6.4 |',
  '| stock (disk) | SDK defaults | turn: 2 activities | 115.4 | 100.2 – 131.3 | 40.9 / 16.4 |',
  '| errand (disk) | SDK defaults | turn: 2 activities | 43.9 | 31.6 – 48.1 | 26.5 / 13.8 |',
  '| errand (disk) | SDK defaults | turn: tool as local activity | 25.3 | 20.8 – 32.8 | 13.4 / 11.5 |',
];

/** The section, with this run's floor figures when it measured them. */
export function floorSection(figures: readonly FigureResult[]): string[] {
  const measured = figures.filter((figure) => figure.id.startsWith('floor-') && figure.value !== null);
  return [
    '## Floor: what one activity costs on the dev server',
    '',
    'Question (issue 18): a bare no-op activity cost about 50 ms on the dev server here, so an agent turn (model call + one tool) cost about 100 ms of pure orchestration, on a SQLite file and in memory alike. Where do the 50 ms go, and what removes them?',
    '',
    '**Cause: a rate limit, then the disk, then the CPU.**',
    '',
    '1. **The history shard\'s transfer-queue reader loads new tasks at most 20 times a second** (`history.transferProcessorMaxPollRPS`, default 20, a token bucket with a burst of 20). Every workflow task and every activity task that goes through matching is a transfer task, and the dev server has one history shard, so once the burst is spent a workflow that runs activities one after another gets one task per 50 ms — exactly the 50.0 ms (49.8 – 51.6) measured on every storage. With eager activity dispatch (SDK default) an activity rides on the workflow task\'s completion, so there is one transfer task per activity, hence 50 ms per activity and 100 ms per two-activity turn. After an idle pause the burst of 20 lets the first ~30 activities run at full speed, which is why short runs looked faster. errand now starts its dev servers with 1,000 (the reader loads only when told a task exists, so a high cap costs nothing while idle).',
    '2. **Then the disk:** with the limit gone, SQLite\'s defaults (rollback journal, synchronous=full) make every commit wait for the disk: 26 – 87 ms per activity on this VM\'s disk. WAL with synchronous=normal (`--sqlite-pragma`) commits without waiting: on disk it costs what tmpfs and memory cost. Durability: the file stays consistent and survives a crash of the server or of errand; only an OS crash or power cut can lose the last transactions — acceptable for a development server.',
    '3. **What is left is CPU:** with both settings a bare activity costs 15 – 22 ms here, and the server (10 – 12 ms) and the worker (6 – 7 ms) spend about that much CPU per activity. The chain of workflow task → activity → workflow task is sequential, so on this 2-core machine (shared, load 6 – 12 during the runs) it runs at CPU speed; there is no fixed wait left to remove.',
    '',
    '**What did not matter** (within the noise of a shared 2-core machine): worker poller counts and autoscaling pollers, the sticky-queue timeout, one task-queue partition instead of four, GOMAXPROCS=1, WAL with synchronous=full instead of normal. Eager activity dispatch (SDK default, kept) saves a trip through matching. Turning the workflow cache off (no sticky queue) replays the whole history on every task: 260 ms per activity.',
    '',
    'Experiment (`tsx bench/floor-probe.ts 4`, 2026-12-01, 4 alternating runs per row after a warm-up, 100 activities or 50 turns per run, steady state = second half of each run\'s history; load average 6 – 12 from other work on the machine, so read differences under ~5 ms as noise):',
    '',
    ...probeTable,
    '',
    '**Per turn, and what errand must change to reach ≤ 30 ms.** A bare turn of two normal activities costs about 31 – 44 ms here with errand\'s server settings (the CPU of two workflow tasks and two activities), so a turn shaped like errand\'s cannot reach 30 ms by configuration alone. Running the tool call as a local activity (inside the workflow task that received the model\'s answer, recorded as a marker) removes one workflow task and one dispatch per turn: 20 – 25 ms bare. errand\'s own work per turn comes on top (the overhead figure): each activity reads and writes blobs (outcome and conversation entry, each a file, fsynced when the blob store syncs), and each workflow task carries bigger payloads and search-attribute upserts. Changes, in order of effect:',
    '',
    '- **Tool calls of fast, local toolsets as local activities** (`proxyLocalActivities` for `runTool` when the tool is a built-in file/search tool with a short timeout; MCP and command tools stay normal activities, they can be slow and need heartbeats and cancellation): −1 workflow task per turn (about −12 to −18 ms here). A patched() change in src/workflows/ (the command sequence changes), with the replay histories re-recorded.',
    '- **`appendMessages` as a local activity** (it only writes blobs): −1 workflow task per turn for continuable conversations (a message, then a model turn).',
    '- **One blob write per step instead of two:** the stored outcome and the conversation entry hold the same text; writing the conversation entry only (and treating it as the outcome) halves the file writes and fsyncs per activity.',
    '- **Search attributes only when they change** (also item 4 of issue 18): fewer upsert commands and visibility writes per workflow task.',
    ...(measured.length > 0
      ? [
          '',
          'This run\'s floor figures (two extra dev servers, Temporal\'s stock settings and errand\'s, both on disk, alternating runs):',
          '',
          ...measured.map((figure) => `- ${figure.id}: ${figure.value} ${figure.unit} (${figure.min} – ${figure.max}) with errand's settings; ${figure.baseline ?? '–'} ${figure.unit} with Temporal's stock settings. ${figure.notes.slice(2).join(' ')}`),
        ]
      : []),
    '',
  ];
}

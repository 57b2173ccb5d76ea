import { sendMessageUpdate, peekQuery } from '../../src/contracts/subagent-messages';
import type { SessionInput } from '../../src/contracts/session';
import type { SubagentPeek } from '../../src/contracts/subagent-result';
import { actionSeries, addCounts, metricActions, scrapeMetrics, totalActions, workflowActions, type ActionCounts } from '../billable-actions';
import type { FigureResult } from '../figure';
import { benchModel, benchProviders, benchSubagentInput, sleep, startErrandWorker, uniqueId, type Bench } from '../harness';
import { formatCounts } from '../history-profile';
import { benchMarker, benchStep, filler, markerOf, openAIMessages } from '../scripted-answers';
import { round } from '../stats';

/**
 * Billable Temporal Cloud actions (issue 29 item 2, decision 0022): per subagent turn, per continuable
 * message turn, per 2 s of a streamed model call, per idle hour of a session with 3 waiting continuables.
 * Counted from history events and the dev server's metrics (bench/billable-actions.ts). Each model answer is
 * held `turnDelayMs`, as a real model takes seconds, so the views' once-a-second search-attribute upsert
 * happens on every turn as it would in production.
 */

/** Repetitions and durations of the figure. */
export interface ActionsPlan {
  /** Extra turns of the subagent whose per-turn cost is measured. */
  turns: number;
  /** Messages sent to the continuable. */
  messages: number;
  /** How long the streamed model call streams (ms). */
  streamMs: number;
  /** How long the idle session is watched (ms); the figure is scaled to an hour. */
  idleMs: number;
}

const turnDelayMs = 1_200;
/** Characters per streamed chunk of the scripted server (its default) and the pause between chunks. */
const streamChunkChars = 8;
const streamChunkDelayMs = 80;

function figure(id: string, description: string, value: number, target: number, unit: string, notes: string[]): FigureResult {
  return { id, description, value: round(value), unit, min: round(value), max: round(value), target: `<= ${target}`, met: value <= target, runs: 1, notes };
}

/** Polls (with history reads, which bill nothing) until `done` holds; bounded. */
async function waitUntil(what: string, done: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function completedModelTurns(bench: Bench, workflowId: string): Promise<number> {
  const history = await bench.client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, string>();
  let completed = 0;
  for (const event of history.events ?? []) {
    const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
    if (type) scheduled.set(String(event.eventId), type);
    const done = event.activityTaskCompletedEventAttributes;
    if (done && scheduled.get(String(done.scheduledEventId)) === 'modelTurn') completed += 1;
  }
  return completed;
}

async function subagentRunActions(bench: Bench, taskQueue: string, turns: number): Promise<ActionCounts> {
  const workflowId = uniqueId('bench-actions-turns');
  const handle = await bench.client.workflow.start('subagentWorkflow', {
    taskQueue,
    workflowId,
    args: [benchSubagentInput(bench, `List it. ${benchMarker({ turns, delay: turnDelayMs })}`)],
  });
  await handle.result();
  return workflowActions(bench.client, [workflowId]);
}

async function perSubagentTurn(bench: Bench, taskQueue: string, turns: number): Promise<FigureResult> {
  const one = await subagentRunActions(bench, taskQueue, 1);
  const more = await subagentRunActions(bench, taskQueue, 1 + turns);
  const perTurn = (totalActions(more) - totalActions(one)) / turns;
  return figure('actions-per-subagent-turn', 'Billable Temporal actions per subagent turn (a model call and a tool call)', perTurn, 3, 'actions', [
    `(actions of a ${1 + turns}-turn run − actions of a 1-turn run) / ${turns}; model answers held ${turnDelayMs} ms. ${1 + turns}-turn run: ${formatCounts(more)}; 1-turn run (the fixed cost of a delegation): ${formatCounts(one)}.`,
  ]);
}

async function perContinuableMessage(bench: Bench, taskQueue: string, messages: number): Promise<FigureResult> {
  const workflowId = uniqueId('bench-actions-message');
  const handle = await bench.client.workflow.start('subagentWorkflow', {
    taskQueue,
    workflowId,
    args: [benchSubagentInput(bench, `Answer. ${benchMarker({ answer: 200, delay: turnDelayMs })}`, { continuable: true, maxTurns: 10 })],
  });
  try {
    await waitUntil('the first answer', async () => (await completedModelTurns(bench, workflowId)) >= 1);
    await sleep(1_500); // the views' upsert of the first activation
    const from = Date.now();
    const before = await scrapeMetrics(bench.server.metricsUrl);
    for (let message = 1; message <= messages; message += 1) {
      await handle.executeUpdate(sendMessageUpdate, { args: [{ message: `Message ${message}.` }] });
      await waitUntil(`the answer to message ${message}`, async () => (await completedModelTurns(bench, workflowId)) >= 1 + message);
      await sleep(1_500);
    }
    const to = Date.now();
    const after = await scrapeMetrics(bench.server.metricsUrl);
    const counts = await workflowActions(bench.client, [workflowId], from, to);
    const metrics = metricActions(before, after);
    addCounts(counts, { heartbeat: metrics.heartbeats, query: metrics.queries });
    return figure('actions-per-continuable-message', 'Billable Temporal actions per continuable message turn (sendMessage update, one model call)', totalActions(counts) / messages, 4, 'actions', [
      `${messages} messages, each answered by one model call held ${turnDelayMs} ms: ${formatCounts(counts, messages)} per message. The server's own action counter moved by ${metrics.serverActions} (${actionSeries(before, after)}).`,
    ]);
  } finally {
    await handle.terminate('bench done').catch(() => undefined);
  }
}

async function perStreamedCall(bench: Bench, taskQueue: string, streamMs: number): Promise<FigureResult> {
  const workflowId = uniqueId('bench-actions-stream');
  const chunks = Math.ceil(streamMs / streamChunkDelayMs);
  bench.http.setResponder((record) => {
    const messages = openAIMessages(record.body);
    if (markerOf(messages)?.stream === workflowId) return { text: filler(chunks * streamChunkChars), chunkDelayMs: streamChunkDelayMs };
    return benchStep(messages);
  });
  try {
    const before = await scrapeMetrics(bench.server.metricsUrl);
    const handle = await bench.client.workflow.start('subagentWorkflow', {
      taskQueue,
      workflowId,
      args: [benchSubagentInput(bench, `Write. ${benchMarker({ stream: workflowId })}`, { route: { provider: benchProviders.http, model: benchModel } })],
    });
    await handle.result();
    const after = await scrapeMetrics(bench.server.metricsUrl);
    const record = bench.http.requests.find((request) => markerOf(openAIMessages(request.body))?.stream === workflowId);
    const streamedMs = record?.finishedAt !== undefined ? record.finishedAt - record.receivedAt : streamMs;
    const counts = await workflowActions(bench.client, [workflowId]);
    const metrics = metricActions(before, after);
    // The model call's own actions: its activity attempt and its heartbeats.
    const callActions = 1 + metrics.heartbeats;
    const per2s = callActions / (streamedMs / 2_000);
    return figure('actions-per-2s-streaming', `Billable actions of a streamed model call per 2 s of streaming (a ${Math.round(streamMs / 1000)} s call)`, per2s, 1, 'actions', [
      `One call streaming for ${round(streamedMs / 1000)} s: ${metrics.heartbeats} heartbeats reached the server + 1 activity attempt = ${callActions} actions (the 250 ms heartbeats before decision 0022 sent about ${Math.round(streamedMs / 250)}). Live-text interval ${bench.config.model.liveTextIntervalMs} ms (\`ERRAND_LIVE_TEXT_INTERVAL_MS\`). The whole delegation: ${formatCounts(addCounts(counts, { heartbeat: metrics.heartbeats }))}. The server's own action counter moved by ${metrics.serverActions} (${actionSeries(before, after)}).`,
    ]);
  } finally {
    bench.http.setResponder((record) => benchStep(openAIMessages(record.body)));
  }
}

async function perIdleHour(bench: Bench, taskQueue: string, idleMs: number): Promise<FigureResult> {
  const sessionId = uniqueId('bench-actions-idle');
  const input: SessionInput = {
    label: 'bench idle session',
    route: { provider: benchProviders.inProcess, model: benchModel },
    toolsets: ['developer'],
    workingDir: bench.workingDir,
    system: {},
    maxTurnsPerMessage: 10,
    maxDepth: 2,
    tasks: bench.config.tasks,
    activity: bench.config.subagent.activity,
    initialMessage: `Start three helpers. ${benchMarker({ continuables: 3 })}`,
  };
  const session = await bench.client.workflow.start('sessionWorkflow', { taskQueue, workflowId: sessionId, args: [input] });
  const children = async (): Promise<string[]> => {
    const history = await session.fetchHistory();
    return (history.events ?? []).flatMap((event) => event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? []);
  };
  try {
    await waitUntil('three waiting continuables and a waiting session', async () => {
      const ids = await children();
      if (ids.length < 3) return false;
      const peeks = await Promise.all(ids.map((id) => bench.client.workflow.getHandle(id).query(peekQuery) as Promise<SubagentPeek>));
      return peeks.every((peek) => peek.state === 'waiting') && (await session.query(peekQuery) as SubagentPeek).state === 'waiting';
    });
    await sleep(3_000); // settlements, notices and the views' last upserts
    const ids = [sessionId, ...(await children())];
    const from = Date.now();
    const before = await scrapeMetrics(bench.server.metricsUrl);
    await sleep(idleMs);
    const to = Date.now();
    const after = await scrapeMetrics(bench.server.metricsUrl);
    const counts = await workflowActions(bench.client, ids, from, to);
    const metrics = metricActions(before, after);
    addCounts(counts, { heartbeat: metrics.heartbeats, query: metrics.queries });
    const perHour = (totalActions(counts) * 3_600_000) / (to - from);
    return figure('actions-per-idle-hour', 'Billable actions per idle hour of a session with 3 waiting continuables', perHour, 0, 'actions', [
      `Watched ${round((to - from) / 1000)} s of idleness, scaled to an hour: ${formatCounts(counts) || 'nothing'} in the window (session and its 3 children, all runs). The server's own action counter moved by ${metrics.serverActions} (${actionSeries(before, after)}). A session that has not continued as new yet: the probe loop of review N1 runs only after a continue-as-new, so this shows the waiting itself, not that path.`,
    ]);
  } finally {
    for (const id of [sessionId, ...(await children().catch(() => []))]) await bench.client.workflow.getHandle(id).terminate('bench done').catch(() => undefined);
  }
}

/** The action figures. */
export async function measureActions(bench: Bench, plan: ActionsPlan): Promise<FigureResult[]> {
  const taskQueue = uniqueId('bench-actions');
  const worker = await startErrandWorker(bench, taskQueue);
  try {
    return [
      await perSubagentTurn(bench, taskQueue, plan.turns),
      await perContinuableMessage(bench, taskQueue, plan.messages),
      await perStreamedCall(bench, taskQueue, plan.streamMs),
      await perIdleHour(bench, taskQueue, plan.idleMs),
    ];
  } finally {
    await worker.stop();
  }
}

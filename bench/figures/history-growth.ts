import { inboundMessage } from '../../src/activities/inbound-message';
import { peekQuery, sendMessageUpdate } from '../../src/contracts/subagent-messages';
import type { SubagentPeek } from '../../src/contracts/subagent-result';
import { benchSubagentInput, sleep, startErrandWorker, uniqueId, type Bench } from '../harness';
import type { FigureResult } from '../figure';
import { formatCounts, historySize, profileHistory } from '../history-profile';
import { benchMarker, filler, markerOf } from '../scripted-answers';
import { round, summarize } from '../stats';

/**
 * Figure 3, history growth: one continuable subagent, `turns` turns, every user message and every answer
 * 2 KB. After each turn the history size (describe's historySizeBytes) is read; the sizes of runs closed
 * by continue-as-new are added, so "bytes added by turn n" also counts a continue-as-new when it happens.
 */
const messageBytes = 2048;
const window = 10;

/** Per-turn series for the chart. */
export interface HistorySeries {
  turn: number[];
  /** History bytes added by each turn (all runs). */
  bytes: number[];
  /** What the turn would add if the whole conversation went through history (model input + answer). */
  wholeConversation: number[];
  /** Turns at which a continue-as-new happened. */
  continuedAt: number[];
}

export async function measureHistoryGrowth(bench: Bench, turns: number): Promise<{ figures: FigureResult[]; series: HistorySeries }> {
  const taskQueue = uniqueId('bench-history');
  const worker = await startErrandWorker(bench, taskQueue);
  const workflowId = uniqueId('bench-history');
  const conversationBytes: number[] = [];
  bench.onModelCall = (request) => {
    if (markerOf(request.messages)?.history === workflowId) conversationBytes.push(Buffer.byteLength(JSON.stringify(request.messages)));
  };
  const series: HistorySeries = { turn: [], bytes: [], wholeConversation: [], continuedAt: [] };
  const closedRuns = new Map<string, number>();
  let currentRun = '';
  let previous = 0;
  let lastEvents = 0;
  try {
    const marker = benchMarker({ history: workflowId, answer: messageBytes });
    const prompt = `${marker} ${filler(messageBytes - marker.length - 1)}`;
    const handle = await bench.client.workflow.start('subagentWorkflow', {
      taskQueue,
      workflowId,
      args: [benchSubagentInput(bench, prompt, { continuable: true, maxTurns: 10 })],
    });
    for (let turn = 1; turn <= turns; turn += 1) {
      // As the API sends it: a long message is stored first and goes by key (src/api/inbound-message.ts).
      if (turn > 1) await handle.executeUpdate(sendMessageUpdate, { args: [await inboundMessage(bench.dependencies.blobs, filler(messageBytes, turn))] });
      // Wait for the answer: bounded, polling a query (queries add nothing to history).
      const deadline = Date.now() + 60_000;
      for (;;) {
        const peek: SubagentPeek = await handle.query(peekQuery);
        if (peek.turns >= turn && peek.state === 'waiting') break;
        if (Date.now() > deadline) throw new Error(`turn ${turn} of ${workflowId} did not finish within 60 s (state ${peek.state}, turns ${peek.turns})`);
        await sleep(10);
      }
      const size = await historySize(bench.client, workflowId);
      if (currentRun !== '' && size.runId !== currentRun) {
        // The run that was current closed by continue-as-new: count its final size once.
        const closed = await historySize(bench.client, workflowId, currentRun);
        closedRuns.set(currentRun, closed.bytes);
        series.continuedAt.push(turn);
      }
      currentRun = size.runId;
      lastEvents = size.events;
      const total = [...closedRuns.values()].reduce((sum, bytes) => sum + bytes, 0) + size.bytes;
      series.turn.push(turn);
      series.bytes.push(total - previous);
      series.wholeConversation.push((conversationBytes[turn - 1] ?? 0) + messageBytes);
      previous = total;
    }
  } finally {
    bench.onModelCall = undefined;
    await bench.client.workflow.getHandle(workflowId).terminate('bench done').catch(() => undefined);
    await worker.stop();
  }
  const profile = await profileHistory(bench.client, workflowId, currentRun);
  const turnsInLastRun = series.turn.length - (series.continuedAt[series.continuedAt.length - 1] ?? 1) + 1;
  const early = summarize(series.bytes.slice(Math.max(0, 10 - window / 2 - 1), 10 + window / 2 - 1));
  const late = summarize(series.bytes.slice(-window));
  const average = previous / turns;
  const growth = late.median / early.median;
  const common = [
    `one continuable subagent, ${turns} turns (1 from the prompt, then one sendMessage update per turn), messages and answers ${messageBytes} characters; value = median bytes added per turn over ${window} turns around the named turn, min/max over the same turns.`,
    `continue-as-new at turn(s) ${series.continuedAt.join(', ') || 'none'} (server suggestion); average over all ${turns} turns including continue-as-new: ${Math.round(average)} B/turn; total ${previous} B.`,
    `last run (${turnsInLastRun} turns, ${lastEvents} events): events per turn ${formatCounts(profile.eventCounts, turnsInLastRun)}; activities ${formatCounts(profile.activityCounts)}; payload bytes per turn ${Math.round(profile.payloadBytes / turnsInLastRun)}.`,
    `passing the whole conversation through history would add ${series.wholeConversation[9] ?? 0} B at turn 10 and ${series.wholeConversation[turns - 1] ?? 0} B at turn ${turns}.`,
  ];
  const figures: FigureResult[] = [
    {
      id: 'history-bytes-per-turn-at-10',
      description: 'History bytes added per turn at turn 10 (continuable subagent, 2 KB messages and answers)',
      value: Math.round(early.median),
      unit: 'B/turn',
      min: Math.round(early.min),
      max: Math.round(early.max),
      target: '<= 4096 B/turn',
      met: early.median <= 4096,
      runs: early.count,
      notes: common,
    },
    {
      id: `history-bytes-per-turn-at-${turns}`,
      description: `History bytes added per turn at turn ${turns} (same subagent)`,
      value: Math.round(late.median),
      unit: 'B/turn',
      min: Math.round(late.min),
      max: Math.round(late.max),
      target: '<= 1.2 x turn 10 and <= 4096 B/turn',
      met: growth <= 1.2 && late.median <= 4096,
      runs: late.count,
      notes: [`turn ${turns} / turn 10 = ${round(growth, 3)}.`],
    },
  ];
  return { figures, series };
}

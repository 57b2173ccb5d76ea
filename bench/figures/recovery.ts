import { join } from 'node:path';
import type { RecordedRequest } from '../../test/support/scripted-openai-server';
import { benchModel, benchProviders, benchSubagentInput, mapLimit, spawnWorkerChild, uniqueId, waitUntil, type Bench, type ChildWorker } from '../harness';
import type { FigureResult } from '../figure';
import { formatCounts, timeoutProfile } from '../history-profile';
import { benchMarker, markerOf, openAIMessages } from '../scripted-answers';
import { round, summarize } from '../stats';

/**
 * Figure 6, recovery: `delegations` subagents run on a worker child process (`src/worker.ts` via tsx,
 * configured by environment, model = scripted HTTP server with every answer held 300 ms so calls are in
 * flight). Once each has answered twice, the worker is SIGKILLed and a new one is spawned at once. Measured:
 * time from the new worker's spawn until every delegation has had a model call answered again, and how
 * many completed turns were repeated (a non-aborted request for a conversation length already answered).
 */
const modelDelayMs = 300;
const turnsPerDelegation = 80;

interface RecoveryRun {
  recoveryMs: number;
  bootMs: number;
  repeats: number;
  aborted: number;
  /** Per delegation: ms from spawn to its first answered call. */
  perDelegation: number[];
  /** What the histories show: timeouts and retries. */
  timeouts: string;
}

function tagOf(record: RecordedRequest): string | undefined {
  return markerOf(openAIMessages(record.body))?.recovery;
}

export async function measureRecovery(bench: Bench, repetitions: number, delegations: number, heartbeatTimeoutMs: number): Promise<FigureResult[]> {
  const taskQueue = uniqueId('bench-recovery');
  const dataDir = join(bench.tempDir, 'data-recovery');
  const childOptions = (generation: number) => ({ name: `recovery-worker-${generation}`, taskQueue, dataDir, modelHeartbeatTimeoutMs: heartbeatTimeoutMs });
  let worker: ChildWorker = spawnWorkerChild(bench, childOptions(0));
  const runs: RecoveryRun[] = [];
  try {
    await worker.ready;
    for (let rep = 0; rep < repetitions; rep += 1) {
      const tags = Array.from({ length: delegations }, (_, index) => `r${rep}-${index}-${uniqueId('d')}`);
      const tagSet = new Set(tags);
      const activity = { ...bench.config.subagent.activity, modelHeartbeatTimeoutMs: heartbeatTimeoutMs };
      const handles = await mapLimit(tags, 25, (tag) => bench.client.workflow.start('subagentWorkflow', {
        taskQueue,
        workflowId: `bench-recovery-${tag}`,
        args: [benchSubagentInput(bench, `Keep working. ${benchMarker({ recovery: tag, turns: turnsPerDelegation, delay: modelDelayMs })}`, {
          route: { provider: benchProviders.http, model: benchModel },
          maxTurns: turnsPerDelegation,
          activity,
        })],
      }));
      const answered = (since: number) => {
        const counts = new Map<string, number>();
        for (const record of bench.http.requests) {
          const tag = tagOf(record);
          if (tag === undefined || !tagSet.has(tag) || record.aborted || record.finishedAt === undefined || record.receivedAt < since) continue;
          counts.set(tag, (counts.get(tag) ?? 0) + 1);
        }
        return counts;
      };
      await waitUntil(() => {
        const counts = answered(0);
        return tags.every((tag) => (counts.get(tag) ?? 0) >= 2);
      }, 180_000, `every delegation to answer twice (rep ${rep + 1})`, 100);

      worker.kill('SIGKILL');
      await worker.exited;
      worker = spawnWorkerChild(bench, childOptions(rep + 1));
      const spawnedAt = worker.spawnedAt;
      const firstAnswer = new Map<string, number>();
      await waitUntil(() => {
        for (const record of bench.http.requests) {
          const tag = tagOf(record);
          if (tag === undefined || !tagSet.has(tag) || firstAnswer.has(tag)) continue;
          if (!record.aborted && record.finishedAt !== undefined && record.receivedAt >= spawnedAt) firstAnswer.set(tag, record.finishedAt);
        }
        return firstAnswer.size === tags.length;
      }, 180_000, `every delegation to make progress after the restart (rep ${rep + 1})`, 50);
      const readyAt = await worker.ready;

      // Repeats: per delegation, a non-aborted request for a conversation length that was already answered.
      let repeats = 0;
      let aborted = 0;
      const answeredLengths = new Map<string, Set<number>>();
      for (const record of bench.http.requests) {
        const tag = tagOf(record);
        if (tag === undefined || !tagSet.has(tag)) continue;
        if (record.aborted) {
          aborted += 1;
          continue;
        }
        const length = openAIMessages(record.body).length;
        const seen = answeredLengths.get(tag) ?? new Set<number>();
        if (seen.has(length)) repeats += 1;
        seen.add(length);
        answeredLengths.set(tag, seen);
      }
      const perDelegation = [...firstAnswer.values()].map((at) => at - spawnedAt);
      // Workflow history (pending activities were retried in the meantime; the timeouts are already recorded).
      const profile = await timeoutProfile(bench.client, handles.map((handle) => handle.workflowId));
      const timeouts = `workflow task timeouts ${profile.workflowTaskTimeouts}; activity timeouts ${formatCounts(profile.activityTimeouts) || 'none'}; activity retries ${formatCounts(profile.activityRetries) || 'none'}`;
      runs.push({ recoveryMs: Math.max(...perDelegation), bootMs: readyAt - spawnedAt, repeats, aborted, perDelegation, timeouts });
      await Promise.all(handles.map((handle) => handle.terminate('bench: recovery measured').catch(() => undefined)));
    }
  } finally {
    worker.kill('SIGKILL');
    await worker.exited;
  }
  const recovery = summarize(runs.map((run) => run.recoveryMs / 1000));
  const boot = summarize(runs.map((run) => run.bootMs / 1000));
  const repeats = runs.reduce((sum, run) => sum + run.repeats, 0);
  const budget = heartbeatTimeoutMs / 1000 + 2;
  const spread = runs.map((run) => {
    const per = summarize(run.perDelegation.map((ms) => ms / 1000));
    return `median ${round(per.median)} s, max ${round(per.max)} s`;
  });
  return [
    {
      id: 'recovery-time',
      description: `After SIGKILL of a worker child with ${delegations} delegations in flight: new worker spawn → all ${delegations} answered a model call again`,
      value: round(recovery.median),
      unit: 's',
      min: round(recovery.min),
      max: round(recovery.max),
      target: `<= heartbeat timeout + 2 s = ${budget} s`,
      met: recovery.median <= budget,
      runs: repetitions,
      notes: [
        `${repetitions} kills; heartbeat timeout ${heartbeatTimeoutMs} ms (input and ERRAND_MODEL_HEARTBEAT_TIMEOUT_MS); model answers held ${modelDelayMs} ms; the new worker is spawned right after the old one died.`,
        `worker boot (spawn → polling, node --import tsx, prebuilt bundle): median ${round(boot.median)} s (min ${round(boot.min)}, max ${round(boot.max)}).`,
        `per-delegation time to first answer after spawn, by run: ${spread.join('; ')}.`,
        `model requests aborted by the kills: ${runs.map((run) => run.aborted).join(', ')}.`,
        `histories of the ${delegations} delegations, by run: ${runs.map((run) => run.timeouts).join(' | ')}.`,
      ],
    },
    {
      id: 'recovery-repeated-turns',
      description: 'Completed model turns repeated after the worker was killed (all runs)',
      value: repeats,
      unit: 'turns',
      min: Math.min(...runs.map((run) => run.repeats)),
      max: Math.max(...runs.map((run) => run.repeats)),
      target: '= 0',
      met: repeats === 0,
      runs: repetitions,
      notes: ['a repeat = a non-aborted request of a delegation whose conversation length had already been answered.'],
    },
  ];
}

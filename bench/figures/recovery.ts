import { join } from 'node:path';
import { tsToMs } from '@temporalio/common/lib/time';
import type { RecordedRequest } from '../../test/support/scripted-openai-server';
import { createBlobStore } from '../../src/activities/blob-store-factory';
import { ConversationStore } from '../../src/activities/conversation-store';
import { subagentStartOptions } from '../../src/observability/start-options';
import { restartRepeats, storedAnswers, type RestartRepeats } from '../restart-accounting';
import { benchModel, benchProviders, benchSubagentInput, mapLimit, sleep, spawnWorkerChild, uniqueId, workerStopSignal, waitUntil, type Bench, type ChildWorker } from '../harness';
import type { FigureResult } from '../figure';
import { eventTimeline, fetchHistories, firstActivityCompletions, formatCounts, timeoutProfile } from '../history-profile';
import { benchMarker, markerOf, openAIMessages } from '../scripted-answers';
import { round, summarize } from '../stats';

/**
 * Figure 6, recovery: `delegations` subagents run on a worker child process (`src/worker/` via tsx,
 * configured by environment, model = scripted HTTP server with every answer held 300 ms so calls are in
 * flight). Once each has answered twice, the worker is SIGKILLed and a new one is spawned at once. Measured:
 * time from the new worker's spawn until every delegation has a model turn's answer back in its history
 * (asked again, or read from the store where the dead worker had stored it), and the
 * model calls asked again after the restart, split into (a) answers already stored and (b) calls in flight
 * at the kill (bench/restart-accounting.ts). Delegations start with the API's start options (errand's
 * workflow task timeout included), so a lost workflow task comes back as a delegation's would.
 */
const modelDelayMs = 300;
const turnsPerDelegation = 80;

interface RecoveryRun {
  recoveryMs: number;
  bootMs: number;
  repeats: RestartRepeats;
  /** Whether the store was read before the new worker polled (so "stored before the kill" is exact). */
  storeReadBeforePoll: boolean;
  /** Per delegation: ms from spawn until a model turn's answer was back in its history (modelTurn completed). */
  perDelegation: number[];
  /** Per delegation: ms from spawn until the model server answered one of its calls (a turn later for an answer stored before the kill). */
  perDelegationAsked: number[];
  /** What the histories show: timeouts and retries. */
  timeouts: string;
  /** The slowest delegation's events after the kill. */
  slowest: string;
}

/** Per workflow: when the server last recorded a heartbeat of its running activity (ms), if one runs. */
async function lastHeartbeats(bench: Bench, workflowIds: readonly string[]): Promise<Map<string, number>> {
  const beats = new Map<string, number>();
  await mapLimit([...workflowIds], 10, async (workflowId) => {
    const description = await bench.client.workflow.getHandle(workflowId).describe();
    for (const pending of description.raw.pendingActivities ?? []) {
      const at = pending.lastHeartbeatTime ? tsToMs(pending.lastHeartbeatTime) : undefined;
      if (at !== undefined && at > 0) beats.set(workflowId, Math.max(beats.get(workflowId) ?? 0, at));
    }
  });
  return beats;
}

function tagOf(record: RecordedRequest): string | undefined {
  return markerOf(openAIMessages(record.body))?.recovery;
}

export async function measureRecovery(bench: Bench, repetitions: number, delegations: number, heartbeatTimeoutMs: number): Promise<FigureResult[]> {
  const taskQueue = uniqueId('bench-recovery');
  const dataDir = join(bench.tempDir, 'data-recovery');
  const childOptions = (generation: number) => ({ name: `recovery-worker-${generation}`, taskQueue, dataDir, modelHeartbeatTimeoutMs: heartbeatTimeoutMs });
  let worker: ChildWorker = await spawnWorkerChild(bench, childOptions(0));
  const runs: RecoveryRun[] = [];
  const conversations = new ConversationStore(createBlobStore({ dataDir, blobs: undefined }));
  try {
    await worker.ready;
    for (let rep = 0; rep < repetitions; rep += 1) {
      const tags = Array.from({ length: delegations }, (_, index) => `r${rep}-${index}-${uniqueId('d')}`);
      const tagSet = new Set(tags);
      const activity = { ...bench.config.subagent.activity, modelHeartbeatTimeoutMs: heartbeatTimeoutMs };
      const handles = await mapLimit(tags, 25, (tag) => {
        const workflowId = `bench-recovery-${tag}`;
        const input = benchSubagentInput(bench, `Keep working. ${benchMarker({ recovery: tag, turns: turnsPerDelegation, delay: modelDelayMs })}`, {
          route: { provider: benchProviders.http, model: benchModel },
          maxTurns: turnsPerDelegation,
          activity,
        });
        return bench.client.workflow.start('subagentWorkflow', { taskQueue, workflowId, args: [input], ...subagentStartOptions(input, { workflowId, startedBy: 'bench' }) });
      });
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
      const killedAt = Date.now();
      worker = await spawnWorkerChild(bench, childOptions(rep + 1));
      const spawnedAt = worker.spawnedAt;
      // What was stored before the kill: read while no worker runs (the new one boots for seconds first).
      let polling = false;
      void worker.ready.then(() => { polling = true; }, () => undefined);
      const heartbeats = lastHeartbeats(bench, handles.map((handle) => handle.workflowId));
      const stored = await storedAnswers(conversations, handles.map((handle, index) => ({ tag: tags[index] ?? '', conversationId: `${handle.workflowId}@${handle.firstExecutionRunId}` })));
      const storeReadBeforePoll = !polling;
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
      // Let calls retried after the first answers (slow retries) show up before counting.
      await sleep(2_000);
      const repeats = restartRepeats(bench.http.requests, (record) => {
        const tag = tagOf(record);
        return tag !== undefined && tagSet.has(tag) ? tag : undefined;
      }, stored, killedAt);
      // Recovered = a model turn's answer is back in the delegation's history: asked again, or read from the
      // store when the dead worker had stored it (then no model call is needed, and the next one is normal work).
      const histories = await fetchHistories(bench.client, handles.map((handle) => handle.workflowId));
      const completions = firstActivityCompletions(histories, 'modelTurn', spawnedAt);
      const recoveredAt = new Map<string, number>();
      handles.forEach((handle, index) => {
        const at = completions.get(handle.workflowId);
        if (at === undefined) throw new Error(`delegation ${handle.workflowId} answered the model after the restart but no modelTurn completed in its history`);
        recoveredAt.set(tags[index] ?? '', at);
      });
      const perDelegation = [...recoveredAt.values()].map((at) => at - spawnedAt);
      const perDelegationAsked = [...firstAnswer.values()].map((at) => at - spawnedAt);
      const slowestTag = [...recoveredAt.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
      const slowestIndex = slowestTag === undefined ? -1 : tags.indexOf(slowestTag);
      const slowestHandle = handles[slowestIndex];
      const heartbeatAt = slowestHandle ? (await heartbeats).get(slowestHandle.workflowId) : undefined;
      const lastBeat = heartbeatAt === undefined ? 'no call in flight at the kill' : `its call in flight last heartbeated ${round((killedAt - heartbeatAt) / 1000)} s before the kill`;
      const slowest = slowestHandle ? `${round(((recoveredAt.get(slowestTag ?? '') ?? spawnedAt) - spawnedAt) / 1000)} s (${lastBeat}): ${await eventTimeline(bench.client, slowestHandle.workflowId, killedAt)}` : 'none';
      // Workflow history (pending activities were retried in the meantime; the timeouts are already recorded).
      const profile = timeoutProfile(histories.values());
      const timeouts = `workflow task timeouts ${profile.workflowTaskTimeouts} (${formatCounts(profile.workflowTaskTimeoutKinds)}; workflow task timeout ${profile.workflowTaskTimeoutSeconds.join('/')} s); activity timeouts ${formatCounts(profile.activityTimeouts) || 'none'}; activity retries ${formatCounts(profile.activityRetries) || 'none'}`;
      runs.push({ recoveryMs: Math.max(...perDelegation), bootMs: readyAt - spawnedAt, repeats, storeReadBeforePoll, perDelegation, perDelegationAsked, timeouts, slowest });
      await Promise.all(handles.map((handle) => handle.terminate('bench: recovery measured').catch(() => undefined)));
    }
  } finally {
    worker.kill(workerStopSignal());
    await worker.exited;
  }
  const recovery = summarize(runs.map((run) => run.recoveryMs / 1000));
  const boot = summarize(runs.map((run) => run.bootMs / 1000));
  const storedAsked = runs.reduce((sum, run) => sum + run.repeats.storedAsked, 0);
  const inFlightAsked = runs.reduce((sum, run) => sum + run.repeats.inFlightAsked, 0);
  const inFlightDelegations = runs.reduce((sum, run) => sum + run.repeats.inFlightDelegations, 0);
  const maxPerDelegation = Math.max(...runs.map((run) => run.repeats.maxInFlightAskedPerDelegation));
  const exact = runs.every((run) => run.storeReadBeforePoll);
  const budget = heartbeatTimeoutMs / 1000 + 2;
  const spreadOf = (values: number[]) => {
    const per = summarize(values.map((ms) => ms / 1000));
    return `median ${round(per.median)} s, max ${round(per.max)} s`;
  };
  const spread = runs.map((run) => spreadOf(run.perDelegation));
  const asked = summarize(runs.map((run) => Math.max(...run.perDelegationAsked) / 1000));
  return [
    {
      id: 'recovery-time',
      description: `After SIGKILL of a worker child with ${delegations} delegations in flight: new worker spawn → a model turn's answer back in the history of all ${delegations}`,
      value: round(recovery.median),
      unit: 's',
      min: round(recovery.min),
      max: round(recovery.max),
      target: `<= heartbeat timeout + 2 s = ${budget} s`,
      met: recovery.median <= budget,
      runs: repetitions,
      notes: [
        `${repetitions} kills; heartbeat timeout ${heartbeatTimeoutMs} ms (input and ERRAND_MODEL_HEARTBEAT_TIMEOUT_MS); model answers held ${modelDelayMs} ms; the new worker is spawned right after the old one died.`,
        `worker boot (spawn → polling, errand worker, bundled CLI, prebuilt workflow bundle): median ${round(boot.median)} s (min ${round(boot.min)}, max ${round(boot.max)}).`,
        `recovered = the delegation's modelTurn activity completed after the spawn (server event time): its call asked again and answered, or its answer read from the conversation store when the dead worker had stored it; per delegation, by run: ${spread.join('; ')}.`,
        `until the model server answered a call of every delegation (a turn later for an answer stored before the kill, which is not asked again): median ${round(asked.median)} s over the runs (min ${round(asked.min)}, max ${round(asked.max)}); per delegation, by run: ${runs.map((run) => spreadOf(run.perDelegationAsked)).join('; ')}.`,
        `model requests in flight at the kills (server saw them aborted): ${runs.map((run) => run.repeats.abortedAtKill).join(', ')}.`,
        `histories of the ${delegations} delegations, by run: ${runs.map((run) => run.timeouts).join(' | ')}.`,
        `the slowest delegation of each run (time to its recovery after spawn; its events, seconds after the kill): ${runs.map((run) => run.slowest).join(' | ')}.`,
      ],
    },
    {
      id: 'recovery-repeated-stored-calls',
      description: '(a) Model calls asked again after the kill whose answer had already been stored (all runs)',
      value: storedAsked,
      unit: 'calls',
      min: Math.min(...runs.map((run) => run.repeats.storedAsked)),
      max: Math.max(...runs.map((run) => run.repeats.storedAsked)),
      target: '= 0',
      met: storedAsked === 0,
      runs: repetitions,
      notes: [
        'a model call = (delegation, position: the number of answers already in the request). Stored = the answer with its outcome in the conversation store, read after the old worker died and before the new one polled' + (exact ? '' : ' (NOT in every run: the new worker polled before the read finished, so a call it answered quickly could count as stored)') + '.',
        'counted: requests the scripted server received after the kill for a stored position.',
      ],
    },
    {
      id: 'recovery-repeated-in-flight-calls',
      description: '(b) Model calls in flight at the kill and asked again (all runs), vs delegations with a call in flight',
      value: inFlightAsked,
      unit: 'calls',
      min: Math.min(...runs.map((run) => run.repeats.inFlightAsked)),
      max: Math.max(...runs.map((run) => run.repeats.inFlightAsked)),
      baseline: inFlightDelegations,
      target: '<= 1 per delegation with a call in flight',
      met: inFlightAsked <= inFlightDelegations && maxPerDelegation <= 1,
      runs: repetitions,
      notes: [
        `baseline = delegations with a call in flight at the kill (asked before it, not stored): ${runs.map((run) => run.repeats.inFlightDelegations).join(', ')} by run; asked again: ${runs.map((run) => run.repeats.inFlightAsked).join(', ')}; most for one delegation ${maxPerDelegation}.`,
        'a call in flight is one the server received before the kill whose answer was not stored: aborted by the kill, or answered but not yet stored by the dead worker. Its retry asks once more; that is the price of not storing half an answer.',
      ],
    },
  ];
}

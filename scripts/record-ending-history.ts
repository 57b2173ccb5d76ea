import { mkdirSync, writeFileSync } from 'node:fs';
import type { temporal } from '@temporalio/proto';
import { join } from 'node:path';
import { callToolUpdate } from '../src/contracts/mcp-session-messages';
import { cancelSignal } from '../src/contracts/subagent-messages';
import type { SourceResolver } from '../src/sources/source-resolver';
import type { WorkerDependencies } from '../src/worker/worker-dependencies';
import { noStartWhenEndingPatch } from '../src/workflows/ending-guard';
import type { RecordingContext } from './record-more-histories';

/** The recipe whose planning the recording holds (its name is what the held resolver waits on). */
const heldRecipe = 'held-recipe';

/** A planning hold: `reached` when a resolve of the held recipe starts, which waits for `release()`. */
export interface PlanningHold {
  arm(): { reached: Promise<void>; release: () => void };
}

/**
 * Wraps the worker's source resolvers so that resolving {@link heldRecipe} waits until the scenario lets it
 * go (a `delegate` being planned, held on purpose). Other names resolve as they do.
 */
export function holdPlanning(dependencies: WorkerDependencies): PlanningHold {
  let gate: { reached: () => void; held: Promise<void> } | undefined;
  const real = dependencies.resolverFor;
  dependencies.resolverFor = (dir: string): SourceResolver =>
    new Proxy(real(dir), {
      get(target, property, receiver) {
        if (property !== 'resolve') return Reflect.get(target, property, receiver) as unknown;
        return async (...args: Parameters<SourceResolver['resolve']>) => {
          if (args[0] === heldRecipe && gate) {
            gate.reached();
            await gate.held;
          }
          return target.resolve(...args);
        };
      },
    });
  return {
    arm() {
      let reached: () => void = () => undefined;
      let release: () => void = () => undefined;
      const reachedPromise = new Promise<void>((resolveReached) => (reached = resolveReached));
      const held = new Promise<void>((resolveHeld) => (release = resolveHeld));
      gate = { reached, held };
      return { reached: reachedPromise, release };
    },
  };
}

/**
 * An MCP session cancelled while a `delegate` call is planned (review minor 6). With the
 * `no-start-when-ending` patch the session waits for the call at its end and the call is refused (a marker,
 * no child); from before it, the session ends without waiting. Throws when the run did not take that path.
 */
async function recordMcpEnding(context: RecordingContext, hold: PlanningHold, name: string, taskQueue: string, patchedRun: boolean): Promise<void> {
  const { client, stamp, workingDir } = context;
  mkdirSync(join(workingDir, '.goose', 'recipes'), { recursive: true });
  writeFileSync(join(workingDir, '.goose', 'recipes', `${heldRecipe}.yaml`), 'version: 1.0.0\ntitle: held\ndescription: a recipe whose planning the recording holds\ninstructions: Say done.\n');
  const { reached, release } = hold.arm();
  const workflowId = `errand-record-${name}-${stamp}`;
  const handle = await client.workflow.start('sessionWorkflow', { taskQueue, workflowId, args: [{ ...context.sessionInput, label: `recorded ${name}`, mcp: true }] });
  const call = handle.executeUpdate(callToolUpdate, { args: [{ name: 'delegate', arguments: { source: heldRecipe, description: 'held', async: true } }] }).then(
    (answer) => answer,
    () => undefined,
  );
  await reached;
  await handle.signal(cancelSignal, { reason: 'recording: the client went away' });
  if (patchedRun) await context.waitUntil(`${name}: the session waits for the call`, async () => patchIdsOf((await handle.fetchHistory()).events ?? []).includes(noStartWhenEndingPatch));
  release();
  const answer = await call;
  await handle.result();
  const events = (await handle.fetchHistory()).events ?? [];
  const started = events.some((event) => event.startChildWorkflowExecutionInitiatedEventAttributes !== undefined && event.startChildWorkflowExecutionInitiatedEventAttributes !== null);
  if (patchedRun && (started || answer?.isError !== true)) throw new Error(`${name}: the call was not refused (child started: ${started})`);
  if (!patchedRun && patchIdsOf(events).includes(noStartWhenEndingPatch)) throw new Error(`${name}: the patch's marker although the patch was withheld`);
  await context.record(`session-${name}`, workflowId);
}

/** With the current code. */
export function recordMcpEndingPatched(context: RecordingContext, hold: PlanningHold): Promise<void> {
  return recordMcpEnding(context, hold, 'mcp-ending', context.taskQueue, true);
}

/** As code from before the patch runs it. */
export function recordMcpEndingBeforePatch(context: RecordingContext, hold: PlanningHold): Promise<void> {
  return recordMcpEnding(context, hold, 'mcp-ending-before-patch', context.withheldTaskQueue, false);
}

/** The ids of the patch markers in a history (the SDK's `core_patch` markers carry `{ id }` as JSON). */
export function patchIdsOf(events: temporal.api.history.v1.IHistoryEvent[]): string[] {
  return events.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    if (!data) return [];
    const parsed = JSON.parse(Buffer.from(data).toString('utf8')) as { id?: unknown };
    return typeof parsed.id === 'string' ? [parsed.id] : [];
  });
}

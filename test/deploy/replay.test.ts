import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { describe, expect, test } from 'vitest';
import { workflowBundlePath } from '../support/temporal';

/**
 * The upgrade guard (docs/deploy.md, "Upgrades"): histories recorded from real runs
 * (scripts/record-histories.ts → test/fixtures/histories/) replay against the current workflow code
 * without nondeterminism. A change that would break running workflows — a new, removed or reordered
 * activity, timer or child without `patched()` — fails here, in CI, before a worker runs it.
 */

const folder = resolve(__dirname, '..', 'fixtures', 'histories');
const workflowSources = resolve(__dirname, '..', '..', 'src', 'workflows');
const files = readdirSync(folder).filter((name) => name.endsWith('.json') && name !== 'index.json' && name !== 'patches.json').sort();
/** File name → the workflow id it was recorded under (child workflow ids derive from it). */
const workflowIds = JSON.parse(readFileSync(join(folder, 'index.json'), 'utf8')) as Record<string, string>;

function load(name: string): unknown {
  return JSON.parse(readFileSync(join(folder, name), 'utf8'));
}

/** The patch ids whose markers a recorded history holds. */
function patchMarkersOf(name: string): string[] {
  const json = load(name) as { events: Array<{ markerRecordedEventAttributes?: { markerName?: string; details?: Record<string, { payloads?: Array<{ data?: string }> }> } }> };
  return json.events.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    const data = marker?.markerName === 'core_patch' ? marker.details?.['patch-data']?.payloads?.[0]?.data : undefined;
    return data ? [(JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id: string }).id] : [];
  });
}

function workflowIdOf(name: string): string {
  const id = workflowIds[name];
  if (!id) throw new Error(`${name} is not in test/fixtures/histories/index.json: re-run scripts/record-histories.ts`);
  return id;
}

describe('replay of recorded histories', () => {
  test('every recorded scenario is present and small', () => {
    // Histories of earlier releases may be kept beside these (docs/deploy.md, "Upgrades"); they replay too.
    expect(files).toEqual(expect.arrayContaining([
      'session-continuables-child-before-idle-patch.json',
      'session-continuables-child-run-1.json',
      'session-continuables-child-run-2.json',
      'session-continuables-run-1-before-idle-patch.json',
      'session-continuables-run-1.json',
      'session-continuables-run-2-before-idle-patch.json',
      'session-continuables-run-2.json',
      'session-delegates-child.json',
      'session-load-peek-before-live-peek-patch-child.json',
      'session-load-peek-before-live-peek-patch.json',
      'session-load-peek-child.json',
      'session-load-peek.json',
      'session-probe-loop-child.json',
      'session-probe-loop-run-1.json',
      'session-probe-loop-run-2.json',
      'session-progress-throttle-before-patch-child.json',
      'session-progress-throttle-before-patch.json',
      'session-progress-throttle-child.json',
      'session-progress-throttle.json',
      'subagent-agent-hooks-before-hooks-patch.json',
      'subagent-agent-hooks.json',
      'subagent-approvals.json',
      'subagent-compaction.json',
      'subagent-idle-timeout.json',
      'session-delegates.json',
      'session-forks-child.json',
      'session-forks.json',
      'subagent-cancelled.json',
      'subagent-checks.json',
      'subagent-max-turns.json',
      'subagent-plain.json',
      'subagent-structured.json',
      'subagent-tool-calls.json',
      'subagent-worktree.json',
      'workflow-run-last-run.json',
      'workflow-run-run-1.json',
    ]));
    for (const name of files) expect(readFileSync(join(folder, name)).length, name).toBeLessThan(200 * 1024);
  });

  test('all histories replay against the current workflow bundle without nondeterminism', async () => {
    const histories = files.map((name) => ({ workflowId: workflowIdOf(name), history: historyFromJSON(load(name)) }));
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: workflowBundlePath() } }, histories)) {
      replayed += 1;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.name}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(files.length);
  });

  test('every patch in the workflow code has histories recorded on both sides of it', () => {
    // Each patch id in src/workflows (`patched('<id>')`, or a `...Patch = '<id>'` constant passed to patched()) …
    const sources = readdirSync(workflowSources).filter((name) => name.endsWith('.ts')).map((name) => readFileSync(join(workflowSources, name), 'utf8'));
    // (the constant may be defined in one module and passed to patched() in another).
    const allSources = sources.join('\n');
    const ids = [...new Set(sources.flatMap((text) => [
      ...[...text.matchAll(/patched\('([^']+)'\)/g)].map((match) => match[1] ?? ''),
      ...[...text.matchAll(/const (\w+Patch) = '([^']+)'/g)].filter((match) => allSources.includes(`patched(${match[1] ?? ''})`)).map((match) => match[2] ?? ''),
    ]))];
    expect(ids.length).toBeGreaterThanOrEqual(4);
    // … is listed in patches.json with histories that carry its marker and histories that do not (code from before it).
    const sides = JSON.parse(readFileSync(join(folder, 'patches.json'), 'utf8')) as Record<string, { with: string[]; without: string[] }>;
    expect(Object.keys(sides).sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const side = sides[id];
      expect(side?.with.length, `${id}: histories with the marker`).toBeGreaterThan(0);
      expect(side?.without.length, `${id}: histories without the marker`).toBeGreaterThan(0);
      for (const name of side?.with ?? []) expect(patchMarkersOf(name), name).toContain(id);
      for (const name of side?.without ?? []) expect(patchMarkersOf(name), name).not.toContain(id);
    }
  });

  test('the guard catches a change: a history whose recorded commands differ from the code fails', async () => {
    // Simulates a code change that schedules a different activity than the one recorded.
    const json = load('subagent-tool-calls.json') as { events: Record<string, unknown>[] };
    const scheduled = json.events.find((event) => event.activityTaskScheduledEventAttributes !== undefined);
    const attributes = scheduled?.activityTaskScheduledEventAttributes as { activityType: { name: string } };
    attributes.activityType.name = 'someOtherActivity';
    const results = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: { codePath: workflowBundlePath() } }, [{ workflowId: workflowIdOf('subagent-tool-calls.json'), history: historyFromJSON(json) }])) {
      results.push(result);
    }
    expect(results).toHaveLength(1);
    expect(results[0]?.error?.name).toMatch(/DeterminismViolationError/);
  });
});

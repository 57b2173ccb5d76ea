import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { beforeAll, describe, expect, test } from 'vitest';
import { workflowBundleOptions } from '../../src/temporal/workflow-bundle-options';

/**
 * errand's workflow trace interceptors (src/workflows/trace-interceptors.ts, decision 0033) replaced
 * Temporal's (`@temporalio/interceptors-opentelemetry`) in the bundle, and must be interchangeable with them
 * for replay: a run started by the release before, with Temporal's, goes on here (the fixtures recorded
 * with them, `*-temporal-interceptors*.json`, replay in replay.test.ts), and a run started here goes on
 * after a rollback. This test is the rollback: every recorded history replays on a bundle that is today's
 * workflow code with Temporal's interceptors in place of errand's.
 */

const folder = resolve(__dirname, '..', 'fixtures', 'histories');
const files = readdirSync(folder).filter((name) => name.endsWith('.json') && name !== 'index.json' && name !== 'patches.json').sort();
const workflowIds = JSON.parse(readFileSync(join(folder, 'index.json'), 'utf8')) as Record<string, string>;
const temporalInterceptors = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

/** The SDK flags a history's workflow tasks recorded (Temporal's interceptors check 3–6). */
function flagsOf(name: string): number[] {
  const json = JSON.parse(readFileSync(join(folder, name), 'utf8')) as { events: Array<{ workflowTaskCompletedEventAttributes?: { sdkMetadata?: { langUsedFlags?: number[] } } }> };
  return [...new Set(json.events.flatMap((event) => event.workflowTaskCompletedEventAttributes?.sdkMetadata?.langUsedFlags ?? []))].sort();
}

describe("errand's workflow trace interceptors and Temporal's replay each other's histories", () => {
  let temporalBundle: string;

  beforeAll(async () => {
    const options = workflowBundleOptions();
    const { code } = await bundleWorkflowCode({ workflowsPath: options.workflowsPath, workflowInterceptorModules: [temporalInterceptors], preloadModules: options.preloadModules, logger: { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, log: () => undefined } });
    temporalBundle = code;
    expect(code).toContain('OpenTelemetryInboundInterceptor');
  }, 180_000);

  test('the recorded histories include runs whose updates and signals went through the interceptors', () => {
    // Flag 6 (all methods instrumented) is recorded only when an update or query passed an interceptor
    // that checks it: histories with it are the ones where the wrappers' awaits decide the order of commands.
    const withUpdates = files.filter((name) => flagsOf(name).includes(6));
    expect(withUpdates.length, files.map((name) => `${name}: ${flagsOf(name).join(',')}`).join('\n')).toBeGreaterThanOrEqual(4);
    expect(files.filter((name) => name.includes('temporal-interceptors')).length).toBeGreaterThanOrEqual(4);
  });

  test("every recorded history replays on today's code with Temporal's interceptors (a rollback)", async () => {
    const histories = files.map((name) => {
      const workflowId = workflowIds[name];
      if (!workflowId) throw new Error(`${name} is not in test/fixtures/histories/index.json`);
      return { workflowId, history: historyFromJSON(JSON.parse(readFileSync(join(folder, name), 'utf8'))) };
    });
    const failures: string[] = [];
    let replayed = 0;
    for await (const result of Worker.runReplayHistories({ workflowBundle: { code: temporalBundle } }, histories)) {
      replayed += 1;
      if (result.error) failures.push(`${result.workflowId}: ${result.error.name}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
    expect(replayed).toBe(files.length);
  }, 180_000);
});

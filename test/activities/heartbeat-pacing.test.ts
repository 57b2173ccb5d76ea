import { describe, expect, test } from 'vitest';
import { HeartbeatPacer, keepAliveIntervalMs } from '../../src/activities/heartbeat';
import { InFlightCalls } from '../../src/activities/in-flight-calls';
import { loadConfig } from '../../src/settings/config';
import { liveText } from '../../src/contracts/live-text';
import { defaultLiveTextIntervalMs, heartbeatKeepAliveShare } from '../../src/contracts/limits/workflow';

/**
 * How a model or tool call paces its heartbeats (decision 0022): new live text at most once per
 * `ERRAND_LIVE_TEXT_INTERVAL_MS`, a keep-alive within the heartbeat timeout otherwise, nothing in between.
 * The pacer is pure: it is driven here with a clock of its own.
 */
describe('heartbeat pacing', () => {
  test('a streaming call heartbeats once per live-text interval, however often its text grows', () => {
    const pacer = new HeartbeatPacer(2_500, 4_000, 0);
    const sent: number[] = [];
    let text = '';
    // 30 s of a model writing 8 characters every 100 ms, checked every 100 ms.
    for (let now = 100; now <= 30_000; now += 100) {
      text += 'abcdefgh';
      if (pacer.due(now, liveText(text, 1))) sent.push(now);
    }
    expect(sent).toEqual([2_500, 5_000, 7_500, 10_000, 12_500, 15_000, 17_500, 20_000, 22_500, 25_000, 27_500, 30_000]);
  });

  test('a call with nothing new to say only keeps alive, and new text after a quiet spell goes out at once', () => {
    const pacer = new HeartbeatPacer(2_500, 4_000, 0);
    const live = liveText('same text', 1);
    const quiet: number[] = [];
    for (let now = 100; now <= 20_000; now += 100) if (pacer.due(now, now < 3_000 ? undefined : live)) quiet.push(now);
    // Text first seen at 3 s, 3 s after the start: due at once; then unchanged, so only keep-alives.
    expect(quiet).toEqual([3_000, 7_000, 11_000, 15_000, 19_000]);
    expect(pacer.due(20_000, liveText('same text and more', 1))).toBe(false); // 1 s after the last one
    expect(pacer.due(21_500, liveText('same text and more', 1))).toBe(true);
  });

  test('the keep-alive is a share of the heartbeat timeout', () => {
    expect(keepAliveIntervalMs(10_000, 2_500)).toBe(Math.floor(10_000 * heartbeatKeepAliveShare));
    expect(keepAliveIntervalMs(600_000, 2_500)).toBe(240_000);
    expect(keepAliveIntervalMs(undefined, 2_500)).toBe(10_000);
  });

  test('ERRAND_LIVE_TEXT_INTERVAL_MS: a default, a chosen value, and a clear error for a bad one', () => {
    expect(loadConfig({ ERRAND_DATA_DIR: 'state' }).model.liveTextIntervalMs).toBe(defaultLiveTextIntervalMs);
    expect(loadConfig({ ERRAND_DATA_DIR: 'state', ERRAND_LIVE_TEXT_INTERVAL_MS: '1000' }).model.liveTextIntervalMs).toBe(1_000);
    expect(() => loadConfig({ ERRAND_DATA_DIR: 'state', ERRAND_LIVE_TEXT_INTERVAL_MS: '10' })).toThrow(/ERRAND_LIVE_TEXT_INTERVAL_MS="10" is not valid: use a whole number from 250 to 60000/);
    expect(() => loadConfig({ ERRAND_DATA_DIR: 'state', ERRAND_LIVE_TEXT_INTERVAL_MS: 'fast' })).toThrow(/ERRAND_LIVE_TEXT_INTERVAL_MS/);
  });
});

describe('the in-flight registry', () => {
  test('aborts the calls of one run only, and forgets a call when it ends', () => {
    const registry = new InFlightCalls();
    const aborted: string[] = [];
    const endA1 = registry.register({ workflowId: 'a', runId: '1' }, (reason) => aborted.push(`a1 ${reason}`));
    registry.register({ workflowId: 'a', runId: '1' }, (reason) => aborted.push(`a1' ${reason}`));
    registry.register({ workflowId: 'a', runId: '2' }, (reason) => aborted.push(`a2 ${reason}`));
    registry.register({ workflowId: 'b', runId: '1' }, (reason) => aborted.push(`b1 ${reason}`));
    expect(registry.size).toBe(4);
    endA1();
    expect(registry.abortRun('a', '1', 'stop')).toBe(1);
    expect(aborted).toEqual(["a1' stop"]);
    expect(registry.abortRun('c', '1', 'stop')).toBe(0);
    expect(registry.size).toBe(3);
  });
});

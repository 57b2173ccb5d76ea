import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runShellCommand } from '../../src/tools/developer/run-command';
import { containedInvocation, probeProcessContainment, processContainmentSummary } from '../../src/tools/process-containment';
import { until } from '../support/polling';
import { killProcessesWith, processesWith, uniqueSleepSeconds } from '../support/process-scan';

/** Commands end as a whole: a `setsid` or double-forked daemon does not outlive its command (real processes). */

const markers: string[] = [];
afterEach(() => {
  for (const marker of markers.splice(0)) killProcessesWith(marker);
});

function daemonCommand(): { command: string; marker: string } {
  const marker = uniqueSleepSeconds();
  markers.push(marker);
  // One setsid daemon and one double-forked one, both out of the shell's process group.
  return { command: `setsid sleep ${marker} >/dev/null 2>&1 < /dev/null & ( setsid sh -c 'sleep ${marker}' >/dev/null 2>&1 & ) ; echo started`, marker };
}

describe('process containment', () => {
  it('finds a PID namespace on this machine, and says so', () => {
    const containment = probeProcessContainment();
    expect(containment.kind).toBe('pid-namespace');
    expect(processContainmentSummary({ containment })).toMatch(/^no sandbox; commands, checks and recipe servers each run in its own PID namespace/);
    expect(containedInvocation(containment, '/bin/sh', ['-c', 'true']).args.slice(-4)).toEqual(['--', '/bin/sh', '-c', 'true']);
    expect(containedInvocation(undefined, '/bin/sh', ['-c', 'true'])).toEqual({ file: '/bin/sh', args: ['-c', 'true'] });
  });

  it('a setsid daemon is gone once its command ends', async () => {
    const workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-containment-')));
    const { command, marker } = daemonCommand();
    const outcome = await runShellCommand(command, { workingDir, timeoutMs: 30_000, abortSignal: new AbortController().signal }, { containment: probeProcessContainment() });
    expect(outcome.exitCode).toBe(0);
    expect(outcome.output).toContain('started');
    expect(await until(async () => processesWith(marker), (pids) => pids.length === 0, 'the daemons to end')).toEqual([]);
  });

  it('a setsid daemon is gone once its command is cancelled', async () => {
    const workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-containment-')));
    const { command, marker } = daemonCommand();
    const abort = new AbortController();
    const running = runShellCommand(`${command}; sleep ${marker}`, { workingDir, timeoutMs: 30_000, abortSignal: abort.signal }, { containment: probeProcessContainment() });
    await until(async () => processesWith(marker), (pids) => pids.length >= 3, 'the daemons to start');
    abort.abort();
    const outcome = await running;
    expect(outcome.stoppedBy).toBe('cancel');
    expect(await until(async () => processesWith(marker), (pids) => pids.length === 0, 'the daemons to end')).toEqual([]);
  });

  it('without containment (the fallback) the process group alone lets a setsid daemon live on', async () => {
    const workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-containment-')));
    const { command, marker } = daemonCommand();
    // The command waits until a daemon has left its process group (its `sleep` runs only after setsid):
    // otherwise, on a loaded machine, the group kill at the shell's exit can catch a daemon still forking.
    const waitForDaemon = `for i in $(seq 100); do pgrep -f '^sleep ${marker}' >/dev/null && break; sleep 0.1; done`;
    const outcome = await runShellCommand(`${command}; ${waitForDaemon}`, { workingDir, timeoutMs: 30_000, abortSignal: new AbortController().signal }, {});
    expect(outcome.exitCode).toBe(0);
    // What docs/security.md states for the fallback: the daemon outlives the command (afterEach kills it).
    expect((await until(async () => processesWith(marker), (pids) => pids.length > 0, 'the daemon to outlive its command', 10_000)).length).toBeGreaterThan(0);
  });
});

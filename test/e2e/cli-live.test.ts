import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../api/api-harness';
import { awaitResult, readStatus, startDelegation, startLiveStack, wordsText, type LiveStack } from '../api/live-stack';

/**
 * The CLI's live view as a user runs it (`bin/errand.js` in a child process, output piped, so no terminal)
 * against the API server, a worker and the strict stand-in streaming slowly: `errand delegate` and
 * `errand peek --follow` print the text as it arrives under their progress lines, each piece once and
 * without spinner or redraw sequences; Ctrl-C cancels during `delegate` and only stops watching during
 * `peek --follow` (exit 3, still running).
 */

const bin = join(resolve(__dirname, '..', '..'), 'bin', 'errand.js');

let live: LiveStack;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  live = await startLiveStack();
  env = { PATH: process.env.PATH, HOME: process.env.HOME, ERRAND_API_URL: live.stack.url, ERRAND_API_KEY: keys.acme };
});
afterAll(async () => {
  await live?.stop();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI; `interrupt` sends SIGINT once it returns true for the output so far. */
function runErrand(args: string[], interrupt?: (stderr: string) => boolean): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env, cwd: live.stack.workDir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (!interrupted && interrupt?.(stderr)) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

/** The text printed after the `[turn n writing]` line, up to the end of that line. */
function writtenAfter(stderr: string, turn: number): string {
  const marker = `[turn ${turn} writing]\n`;
  const start = stderr.indexOf(marker);
  if (start < 0) return '';
  const text = stderr.slice(start + marker.length);
  const end = text.indexOf('\n');
  return end < 0 ? text : text.slice(0, end);
}

/** No spinner and no terminal control sequences: output without a terminal is a plain log. */
function expectPlainLog(text: string): void {
  for (const character of ['\r', '\u001b', '⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']) expect(text).not.toContain(character);
}

describe('errand delegate', () => {
  it('prints the text as it arrives under the progress line, then the answer on stdout', async () => {
    const text = wordsText('cedar', 50);
    live.server.enqueue({ text, chunkDelayMs: 120 });

    const run = await runErrand(['delegate', 'write slowly about cedars']);

    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${text}\n`);
    expect(run.stderr).toMatch(/^errand-[0-9a-f]{16} · running · turn 1\/25 · \d+s\n/m);
    const written = writtenAfter(run.stderr, 1);
    expect(written.length).toBeGreaterThan(0);
    expect(text.startsWith(written)).toBe(true);
    expectPlainLog(run.stderr);
  });

  it('cancels at Ctrl-C while the model writes, and prints what it had written as the partial output', async () => {
    live.server.reset();
    const text = wordsText('birch', 120);
    live.server.enqueue({ text, chunkDelayMs: 150 });

    const run = await runErrand(['delegate', 'write slowly about birches'], (stderr) => writtenAfter(stderr, 1).length >= 16);

    expect(run.code).toBe(1);
    expect(run.stderr).toContain('cancelling errand-');
    expect(run.stderr).toContain('The subagent did not finish: it was cancelled.');
    const partial = run.stdout.trim();
    // stdout is trimmed: compare with the written text without its trailing space.
    expect(partial.length).toBeGreaterThanOrEqual(writtenAfter(run.stderr, 1).trimEnd().length);
    expect(text.startsWith(partial)).toBe(true);
    await live.server.waitFor((requests) => requests[0]?.aborted === true, 10_000, 'the streaming request to be aborted');
  });
});

describe('errand peek --follow', () => {
  it('watches a delegation write until it ends, then prints its answer (exit 0)', async () => {
    live.server.reset();
    const text = wordsText('maple', 50);
    live.server.enqueue({ text, chunkDelayMs: 120 });
    const id = await startDelegation(live.stack, { instructions: 'write slowly about maples' });

    const run = await runErrand(['peek', id, '--follow']);

    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${text}\n`);
    const written = writtenAfter(run.stderr, 1);
    expect(written.length).toBeGreaterThan(0);
    expect(text.startsWith(written)).toBe(true);
    expectPlainLog(run.stderr);
  });

  it('--json prints the events as JSON lines, settled last', async () => {
    live.server.reset();
    const text = wordsText('pine', 40);
    live.server.enqueue({ text, chunkDelayMs: 120 });
    const id = await startDelegation(live.stack, { instructions: 'write slowly about pines' });

    const run = await runErrand(['peek', id, '--follow', '--json']);
    const events = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { event: string; data: Record<string, unknown> });

    expect(run.code).toBe(0);
    expect(events[0]).toEqual({ event: 'state', data: { state: 'running' } });
    const written = events.filter((event) => event.event === 'text').map((event) => String(event.data.delta)).join('');
    expect(written.length).toBeGreaterThan(0);
    expect(text.startsWith(written)).toBe(true);
    expect(events.at(-1)).toMatchObject({ event: 'settled', data: { status: 'completed', output: text } });
  });

  it('stops watching at Ctrl-C with exit 3; the delegation keeps running', async () => {
    live.server.reset();
    const text = wordsText('oak', 120);
    live.server.enqueue({ text, chunkDelayMs: 150 });
    const id = await startDelegation(live.stack, { instructions: 'write slowly about oaks' });

    const run = await runErrand(['peek', id, '--follow'], (stderr) => writtenAfter(stderr, 1).length > 0);

    expect(run.code).toBe(3);
    expect(run.stderr).toContain(`stopped following ${id}; it keeps running`);
    expect((await readStatus(live.stack, id)).state).toBe('running');
    // A plain peek shows the text being written too, marked partial.
    const once = await runErrand(['peek', id]);
    expect(once.code).toBe(0);
    expect(once.stdout).toMatch(/^Writing \(turn 1, partial, \d+ characters so far\): (…)?.*oak/m);
    await live.stack.request(`/v1/delegations/${id}/cancel`, { method: 'POST' });
    expect((await awaitResult(live.stack, id)).status).toBe('cancelled');
  });
});

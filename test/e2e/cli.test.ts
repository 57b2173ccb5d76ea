import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { freePort } from '../../src/dev/free-port';
import { keys, startApiStack, type ApiStack } from '../api/api-harness';
import { temporalAddress } from '../support/temporal';

/**
 * The `errand` CLI as a user runs it — `bin/errand.js` in a child process — against a running stack:
 * over HTTP (ERRAND_API_URL), straight to Temporal (no URL), and `errand dev` bringing up its own stack.
 */

const bin = resolve(__dirname, '..', '..', 'bin', 'errand.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment for the child: only what it needs, so the developer's own settings do not leak in. */
function baseEnv(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
}

function runErrand(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

const startedSchema = z.object({ id: z.string(), created: z.boolean(), state: z.string() });

let stack: ApiStack;
let httpEnv: NodeJS.ProcessEnv;
let directEnv: NodeJS.ProcessEnv;
beforeAll(async () => {
  stack = await startApiStack();
  httpEnv = baseEnv({ ERRAND_API_URL: stack.url, ERRAND_API_KEY: keys.acme });
  directEnv = baseEnv({
    ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
    ERRAND_TASK_QUEUE: stack.taskQueue,
    ERRAND_PROVIDERS: JSON.stringify(stack.config.providers),
    ERRAND_WORKING_DIR: stack.workDir,
    ERRAND_LOCAL_TENANT: 'acme',
  });
});
afterAll(async () => {
  await stack?.stop();
});

describe('errand CLI over HTTP (ERRAND_API_URL)', () => {
  it('delegate waits for the result and prints it; progress goes to stderr', async () => {
    const run = await runErrand(['delegate', 'take a moment and say hello'], httpEnv, stack.workDir);
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('done: take a moment and say hello\n');
    expect(run.stderr).toMatch(/errand-[0-9a-f]{16} · running · (turn \d+\/25|starting) · \d+s/);
  });

  it('delegate --json prints the result document', async () => {
    const run = await runErrand(['delegate', '--json', '--max-turns', '5', '--description', 'json please', 'answer in json'], httpEnv, stack.workDir);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ done: true, result: { status: 'completed', output: 'done: answer in json', turns: 1 } });
  });

  it('delegate --async, peek, cancel and result of the cancelled run', async () => {
    const started = await runErrand(['delegate', '--async', '--json', 'slow job from the cli'], httpEnv, stack.workDir);
    expect(started.code).toBe(0);
    const { id } = startedSchema.parse(JSON.parse(started.stdout));

    let peek: Run | undefined;
    for (let attempt = 0; attempt < 20; attempt += 1) {
      peek = await runErrand(['peek', id, '--json'], httpEnv, stack.workDir);
      if (/"turns": 1/.test(peek.stdout)) break;
    }
    expect(peek?.code).toBe(0);
    expect(JSON.parse(peek?.stdout ?? '{}')).toMatchObject({ id, state: 'running', peek: { turns: 1, lastAssistantText: null } });

    const human = await runErrand(['peek', id], httpEnv, stack.workDir);
    expect(human.stdout).toContain(`Delegation: ${id}`);
    expect(human.stdout).toContain('Turns: 1 of 25');

    const stillRunning = await runErrand(['result', id], httpEnv, stack.workDir);
    expect(stillRunning.code).toBe(3);
    expect(stillRunning.stderr).toContain('is still running');

    const cancelled = await runErrand(['cancel', id, '--reason', 'no longer needed'], httpEnv, stack.workDir);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toBe(`cancel requested for ${id}\n`);

    const result = await runErrand(['result', id, '--wait', '15s'], httpEnv, stack.workDir);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('The subagent did not finish: it was cancelled.');
    expect(result.stderr).toContain('no longer needed');

    const listed = await runErrand(['list', '--status', 'cancelled', '--json'], httpEnv, stack.workDir);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(id);
  });

  it('reports API validation errors with the field and exits 1; usage errors exit 2', async () => {
    const invalid = await runErrand(['delegate', '--max-turns', '0', 'too few turns'], httpEnv, stack.workDir);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/max_turns/);
    const missing = await runErrand(['delegate'], httpEnv, stack.workDir);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('give instructions');
    const unknown = await runErrand(['peek', 'errand-0000000000000000', '--json'], httpEnv, stack.workDir);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ status: 404 });
    const wrongKey = await runErrand(['models'], { ...httpEnv, ERRAND_API_KEY: 'wrong' }, stack.workDir);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain('Authentication required');
  });

  it('lists models and sources', async () => {
    const models = await runErrand(['models'], httpEnv, stack.workDir);
    expect(models.stdout).toBe('scripted/scripted-model  (default)\nscripted/other-model\n');
    const sources = await runErrand(['sources', '--json'], httpEnv, stack.workDir);
    expect(JSON.parse(sources.stdout)).toMatchObject({ items: expect.arrayContaining([expect.objectContaining({ name: 'deploy' })]) });
    const unknown = await runErrand(['sources', 'dpeloy'], httpEnv, stack.workDir);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('did you mean: deploy?');
  });
});

describe('errand CLI straight to Temporal (no ERRAND_API_URL)', () => {
  it('delegates, and peeks at the result', async () => {
    const run = await runErrand(['delegate', '--json', 'direct to temporal'], directEnv, stack.workDir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const body = z.object({ id: z.string(), result: z.object({ output: z.string() }) }).parse(JSON.parse(run.stdout));
    expect(body.result.output).toBe('done: direct to temporal');
    // Same tenant (ERRAND_LOCAL_TENANT=acme), so the HTTP API sees it too.
    const peek = await runErrand(['peek', body.id, '--json'], httpEnv, stack.workDir);
    expect(JSON.parse(peek.stdout)).toMatchObject({ id: body.id, state: 'completed' });
  });
});

describe('errand dev', () => {
  let child: ChildProcess | undefined;
  let dataDir: string | undefined;
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolveExit) => child?.once('exit', resolveExit));
      child.kill('SIGINT');
      await exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('brings up the whole stack with the demo model and answers a delegation', { timeout: 180_000 }, async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'errand-dev-test-'));
    const [apiPort, temporalPort, uiPort] = [await freePort(), await freePort(), await freePort()];
    const env = baseEnv({ ERRAND_DATA_DIR: dataDir, ERRAND_WORKING_DIR: stack.workDir, ERRAND_TEMPORAL_CLI: process.env.ERRAND_TEMPORAL_CLI });
    const started = spawn(process.execPath, [bin, 'dev', '--port', String(apiPort), '--temporal-port', String(temporalPort), '--ui-port', String(uiPort)], {
      env,
      cwd: stack.workDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let stdout = '';
    let stderr = '';
    started.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await new Promise<void>((resolveReady, reject) => {
      started.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        if (stdout.includes('Ctrl-C stops everything')) resolveReady();
      });
      started.once('exit', (code) => reject(new Error(`errand dev exited early (${String(code)}):\n${stdout}\n${stderr}`)));
    });
    expect(stdout).toContain(`API          http://127.0.0.1:${apiPort}`);
    expect(stdout).toContain(`Web UI       http://127.0.0.1:${uiPort}`);
    expect(stdout).toContain('DEMO MODEL');
    expect(stdout).toContain('examples/recipes (ERRAND_RECIPE_PATH)');

    const devEnv = baseEnv({ ERRAND_API_URL: `http://127.0.0.1:${apiPort}` });
    const run = await runErrand(['delegate', '--json', 'Say what this project is'], devEnv, stack.workDir);
    expect(run.code).toBe(0);
    const body = z.object({ result: z.object({ status: z.string(), output: z.string(), toolCalls: z.number() }) }).parse(JSON.parse(run.stdout));
    expect(body.result).toMatchObject({ status: 'completed', toolCalls: 1 });
    expect(body.result.output).toContain('[demo model]');
    expect(body.result.output).toContain('Say what this project is');

    const sources = await runErrand(['sources'], devEnv, stack.workDir);
    expect(sources.stdout).toMatch(/explain-project\s+recipe/);
    expect(sources.stdout).toMatch(/code-reviewer\s+agent/);

    const exited = new Promise<number | null>((resolveExit) => started.once('exit', (code) => resolveExit(code)));
    started.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});

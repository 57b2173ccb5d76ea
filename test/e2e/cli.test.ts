import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { freePort } from '../../src/dev/free-port';
import { keys, startApiStack, type ApiStack } from '../api/api-harness';
import { temporalAddress } from '../support/temporal';
import { docBlock, shellCommands } from '../support/doc-blocks';

/**
 * The `errand` CLI as a user runs it — `bin/errand.js` in a child process — against a running stack:
 * over HTTP (ERRAND_API_URL), straight to Temporal (no URL), and `errand dev` bringing up its own stack.
 */

const projectRoot = resolve(__dirname, '..', '..');
const bin = join(projectRoot, 'bin', 'errand.js');

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
    // A data folder of its own: a developer's running `errand dev` (found through the default data folder)
    // would otherwise take the CLI's requests, as it is meant to.
    ERRAND_DATA_DIR: mkdtempSync(join(tmpdir(), 'errand-cli-direct-data-')),
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

describe('errand delegate --output-schema, --max-output-tokens and --isolation', () => {
  it('sends a checked output schema in the request; a bad schema file or isolation is a usage error naming it', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'errand-cli-schema-'));
    try {
      const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
      const files = { good: join(folder, 'result.json'), array: join(folder, 'array.json'), broken: join(folder, 'broken.json'), missing: join(folder, 'missing.json') };
      writeFileSync(files.good, JSON.stringify(schema));
      writeFileSync(files.array, '{"type": "array"}');
      writeFileSync(files.broken, '{"type":');
      const array = await runErrand(['delegate', 'x', '--output-schema', files.array], httpEnv, stack.workDir);
      expect(array.code).toBe(2);
      expect(array.stderr).toContain(`--output-schema ${files.array}: output_schema.type: expected "object"`);
      const broken = await runErrand(['delegate', 'x', '--output-schema', files.broken], httpEnv, stack.workDir);
      expect(broken.code).toBe(2);
      expect(broken.stderr).toContain(`--output-schema ${files.broken} is not valid JSON`);
      const missing = await runErrand(['delegate', 'x', '--output-schema', files.missing], httpEnv, stack.workDir);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain(`--output-schema ${files.missing} cannot be read`);
      const isolation = await runErrand(['delegate', 'x', '--isolation', 'docker'], httpEnv, stack.workDir);
      expect(isolation.code).toBe(2);
      expect(isolation.stderr).toContain('--isolation "docker" is not valid: the only isolation is worktree');

      const badLimit = await runErrand(['delegate', 'x', '--max-output-tokens', 'lots'], httpEnv, stack.workDir);
      expect(badLimit.code).toBe(2);
      expect(badLimit.stderr).toContain('--max-output-tokens');
      const started = await runErrand(['delegate', '--async', '--json', '--output-schema', files.good, '--max-output-tokens', '2000', 'structured please'], httpEnv, stack.workDir);
      expect(started.code).toBe(0);
      const { id } = startedSchema.parse(JSON.parse(started.stdout));
      // The schema reached the subagent's workflow input, where the workflow reads it.
      const history = await stack.client.workflow.getHandle(id).fetchHistory();
      const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
      const input = z.object({ outputSchema: z.unknown(), maxOutputTokens: z.number() }).parse(JSON.parse(Buffer.from(payload ?? new Uint8Array()).toString('utf8')));
      expect(input.outputSchema).toEqual(schema);
      expect(input.maxOutputTokens).toBe(2000);
      await stack.client.workflow.getHandle(id).result();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
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

/**
 * The README's quick-start commands: the `sh` block marked `quick-start` (test/support/doc-blocks.ts), one command per
 * line. The test runs exactly these lines, so the README and the behaviour cannot drift apart.
 */
function quickStartCommands(): string[] {
  const lines = shellCommands(docBlock('quick-start').text);
  expect(lines.length).toBeGreaterThan(0);
  return lines;
}

/** Runs one command line as a person would type it, in a shell in the repository folder. */
function runShell(command: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    const child = spawn('sh', ['-c', command], { env, cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

describe('errand dev', () => {
  let child: ChildProcess | undefined;
  let dataDir = '';
  let devEnv: NodeJS.ProcessEnv = {};
  let banner = '';
  const ports = { api: 0, temporal: 0, ui: 0, http: 0 };

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'errand-dev-test-'));
    [ports.api, ports.temporal, ports.ui, ports.http] = [await freePort(), await freePort(), await freePort(), await freePort()];
    devEnv = baseEnv({ ERRAND_DATA_DIR: dataDir, ERRAND_WORKING_DIR: stack.workDir, ERRAND_TEMPORAL_CLI: process.env.ERRAND_TEMPORAL_CLI, ERRAND_TOOLS_DIR: process.env.ERRAND_TOOLS_DIR });
    const started = spawn(process.execPath, [bin, 'dev', '--port', String(ports.api), '--temporal-port', String(ports.temporal), '--ui-port', String(ports.ui), '--temporal-http-port', String(ports.http)], {
      env: devEnv,
      cwd: stack.workDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = started;
    let stderr = '';
    started.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await new Promise<void>((resolveReady, reject) => {
      started.stdout.on('data', (chunk: Buffer) => {
        banner += chunk.toString('utf8');
        if (banner.includes('Ctrl-C stops everything')) resolveReady();
      });
      started.once('exit', (code) => reject(new Error(`errand dev exited early (${String(code)}):\n${banner}\n${stderr}`)));
    });
  }, 180_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolveExit) => child?.once('exit', resolveExit));
      child.kill('SIGINT');
      await exited;
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('brings up the whole stack with the demo model and answers a delegation', async () => {
    expect(banner).toContain(`API          http://127.0.0.1:${ports.api}`);
    expect(banner).toContain(`Web UI       http://127.0.0.1:${ports.ui}`);
    expect(banner).toContain(`HTTP gateway http://127.0.0.1:${ports.http}`);
    expect(banner).toContain('DEMO MODEL');
    expect(banner).toContain('examples/recipes (ERRAND_RECIPE_PATH)');
    expect(banner).toContain(`The CLI finds this stack and its token through ${join(dataDir, 'dev-stack.json')}`);
    expect(banner).toMatch(/Sandbox {6}(bubblewrap|NONE)/);

    // The stack's API wants its token, kept beside the state file for the owner only.
    const tokenPath = join(dataDir, 'dev-stack-token');
    expect(statSync(tokenPath).mode & 0o777).toBe(0o600);
    expect(banner).toContain(`authorization: Bearer $(cat ${tokenPath})`);
    const refused = await fetch(`http://127.0.0.1:${ports.api}/v1/delegations`);
    expect(refused.status).toBe(401);
    const apiEnv = baseEnv({ ERRAND_API_URL: `http://127.0.0.1:${ports.api}`, ERRAND_API_KEY: readFileSync(tokenPath, 'utf8').trim() });
    const run = await runErrand(['delegate', '--json', 'Say what this project is'], apiEnv, stack.workDir);
    expect(run.code).toBe(0);
    const body = z.object({ result: z.object({ status: z.string(), output: z.string(), toolCalls: z.number() }) }).parse(JSON.parse(run.stdout));
    expect(body.result).toMatchObject({ status: 'completed', toolCalls: 1 });
    expect(body.result.output).toContain('[demo model]');
    expect(body.result.output).toContain('Say what this project is');

    const sources = await runErrand(['sources'], apiEnv, stack.workDir);
    expect(sources.stdout).toMatch(/explain-project\s+recipe/);
    expect(sources.stdout).toMatch(/code-reviewer\s+agent/);
  });

  it("runs the README's quick start as written in a second terminal: no ERRAND_API_URL, the stack is found", { timeout: 120_000 }, async () => {
    // A second terminal in the same folder: the same data directory, nothing else set.
    const terminal = baseEnv({ ERRAND_DATA_DIR: dataDir, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` });
    const started: string[] = [];
    for (const command of quickStartCommands()) {
      const run = await runShell(command, terminal);
      const what = `${command}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
      expect(run.code, what).toBe(0);
      expect(run.stderr, what).not.toMatch(/error|no usable provider|unknown source|ignored/i);
      if (/\bdelegate\b/.test(command) && /--async\b/.test(command)) {
        expect(run.stdout, what).toMatch(/^errand-[0-9a-f]{16}\n$/);
        started.push(run.stdout.trim());
      } else if (/\bdelegate\b/.test(command)) {
        // The stack's demo model answered, not a provider error of the CLI's own configuration.
        expect(run.stdout, what).toContain('[demo model]');
        const task = /delegate\s+"([^"]+)"/.exec(command)?.[1];
        if (task) expect(run.stdout, what).toContain(task);
      } else if (/\blist\b/.test(command)) {
        for (const id of started) expect(run.stdout, what).toContain(id);
        expect(run.stdout, what).toMatch(/completed/);
      }
    }
    // The quick start uses an example recipe of the stack's configuration.
    expect(quickStartCommands().join('\n')).toMatch(/--source find-todos/);
    expect(started.length).toBeGreaterThan(0);
  });

  it('refuses a second errand dev on the same data directory', async () => {
    const second = await runErrand(['dev', '--port', '0', '--temporal-port', '0', '--ui-port', '0'], devEnv, stack.workDir);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`errand dev is already running for ${dataDir} (pid ${child?.pid ?? 0}, API http://127.0.0.1:${ports.api})`);
  });

  it('stops on Ctrl-C and removes its state file', async () => {
    const statePath = join(dataDir, 'dev-stack.json');
    expect(existsSync(statePath)).toBe(true);
    const exited = new Promise<number | null>((resolveExit) => child?.once('exit', (code) => resolveExit(code)));
    child?.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(existsSync(statePath)).toBe(false);
    expect(existsSync(join(dataDir, 'dev-stack-token'))).toBe(false);
  });
});

import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { freePort } from '../../src/dev/free-port';
import { join, resolve } from 'node:path';
import { keys, startApiStack, type ApiStack } from '../api/api-harness';
import { temporalAddress, temporalHttpUrl } from '../support/temporal';

/**
 * `errand peek` through Temporal's HTTP API (ERRAND_TEMPORAL_HTTP_URL): `bin/errand.js` in a child process
 * against the run's real dev server and its real HTTP port. The answer must be the one the in-process API
 * gives over gRPC — text and JSON alike, but for the durations measured at the moment of asking.
 */

const projectRoot = resolve(__dirname, '..', '..');
const bin = join(projectRoot, 'bin', 'errand.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runErrand(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolveRun({ code, stdout, stderr }));
  });
}

/** The text form without the two durations, which depend on the moment of asking. */
const withoutDurations = (text: string) => text.replace(/^Elapsed: [\d.]+s · Idle: [\d.]+s/m, 'Elapsed: _ · Idle: _');

/** The JSON form without the two durations. */
function jsonWithoutDurations(text: string): unknown {
  const body = z.object({ peek: z.record(z.string(), z.unknown()).nullable() }).passthrough().parse(JSON.parse(text));
  if (body.peek) {
    delete body.peek.elapsedMs;
    delete body.peek.idleMs;
  }
  return body;
}

let stack: ApiStack;
let grpcEnv: NodeJS.ProcessEnv;
let httpEnv: NodeJS.ProcessEnv;
beforeAll(async () => {
  stack = await startApiStack();
  grpcEnv = {
    ERRAND_TEMPORAL_ADDRESS: temporalAddress(),
    ERRAND_TASK_QUEUE: stack.taskQueue,
    ERRAND_PROVIDERS: JSON.stringify(stack.config.providers),
    ERRAND_WORKING_DIR: stack.workDir,
    ERRAND_DATA_DIR: join(stack.workDir, '..', 'cli-data'),
    ERRAND_LOCAL_TENANT: 'acme',
  };
  httpEnv = { ...grpcEnv, ERRAND_TEMPORAL_HTTP_URL: temporalHttpUrl() };
});
afterAll(async () => {
  await stack?.stop();
});

async function startDelegation(instructions: string): Promise<string> {
  const response = await stack.request('/v1/delegations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ instructions }) });
  expect(response.status).toBe(201);
  return z.object({ id: z.string() }).parse(await response.json()).id;
}

describe('errand peek through Temporal\'s HTTP API (ERRAND_TEMPORAL_HTTP_URL)', () => {
  it('answers a running delegation exactly as the gRPC client does, text and JSON', async () => {
    const id = await startDelegation('slow job peeked over HTTP');
    try {
      // Settled in its first model call (60 s long), so nothing changes between the two peeks.
      await expect.poll(async () => (await stack.client.workflow.getHandle(id).describe()).raw.pendingActivities?.length ?? 0, { timeout: 30_000 }).toBeGreaterThan(0);
      const [overHttp, overGrpc] = [await runErrand(['peek', id], httpEnv, stack.workDir), await runErrand(['peek', id], grpcEnv, stack.workDir)];
      expect(overHttp.stderr).toBe('');
      expect(overHttp.code).toBe(0);
      expect(overHttp.stdout).toContain(`Delegation: ${id}`);
      expect(overHttp.stdout).toContain('State: running (Temporal: RUNNING)');
      expect(withoutDurations(overHttp.stdout)).toBe(withoutDurations(overGrpc.stdout));
      const [jsonHttp, jsonGrpc] = [await runErrand(['peek', id, '--json'], httpEnv, stack.workDir), await runErrand(['peek', id, '--json'], grpcEnv, stack.workDir)];
      expect(jsonHttp.code).toBe(0);
      expect(jsonWithoutDurations(jsonHttp.stdout)).toEqual(jsonWithoutDurations(jsonGrpc.stdout));
    } finally {
      await stack.client.workflow.getHandle(id).terminate('test done');
    }
  });

  it('answers a completed delegation (search attributes, summary, last tool call) as the gRPC client does', async () => {
    const id = await startDelegation('use a tool, then answer over HTTP');
    await stack.client.workflow.getHandle(id).result();
    const [jsonHttp, jsonGrpc] = [await runErrand(['peek', id, '--json'], httpEnv, stack.workDir), await runErrand(['peek', id, '--json'], grpcEnv, stack.workDir)];
    expect(jsonHttp.code).toBe(0);
    expect(JSON.parse(jsonHttp.stdout)).toMatchObject({ id, state: 'completed', temporalStatus: 'COMPLETED', kind: 'subagent', turns: 2, peek: { toolCalls: 1 } });
    expect(jsonWithoutDurations(jsonHttp.stdout)).toEqual(jsonWithoutDurations(jsonGrpc.stdout));
    // An ended delegation's durations stop at its end: the same whoever answers, and whenever.
    expect(JSON.parse(jsonHttp.stdout).peek.elapsedMs).toBe(JSON.parse(jsonGrpc.stdout).peek.elapsedMs);
    const text = await runErrand(['peek', id], httpEnv, stack.workDir);
    expect(text.stdout).toMatch(/^Ran: [\d.]+s$/m);
    expect(text.stdout).not.toMatch(/Idle:/);
  });

  it('needs no gRPC: with the gRPC address unreachable, peek still answers', async () => {
    const id = await startDelegation('answer for a peek without gRPC');
    await stack.client.workflow.getHandle(id).result();
    const nobody = `127.0.0.1:${await freePort()}`;
    const run = await runErrand(['peek', id, '--json'], { ...httpEnv, ERRAND_TEMPORAL_ADDRESS: nobody }, stack.workDir);
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toMatchObject({ id, state: 'completed' });
  });

  it('reports an unknown delegation and another tenant\'s as the API does (404, exit 1)', async () => {
    const otherTenant = await startDelegation('answer for acme only');
    await stack.client.workflow.getHandle(otherTenant).result();
    for (const id of ['errand-0000000000000000', otherTenant]) {
      const [overHttp, overGrpc] = [await runErrand(['peek', id, '--json'], { ...httpEnv, ERRAND_LOCAL_TENANT: 'globex' }, stack.workDir), await runErrand(['peek', id, '--json'], { ...grpcEnv, ERRAND_LOCAL_TENANT: 'globex' }, stack.workDir)];
      expect(overHttp.code).toBe(1);
      expect(JSON.parse(overHttp.stdout)).toEqual(JSON.parse(overGrpc.stdout));
      expect(overHttp.stderr).toBe(overGrpc.stderr);
      expect(overHttp.stderr).toContain(`no delegation with id "${id}"`);
    }
  });

  it('leaves the other commands to the gRPC client', async () => {
    const id = await startDelegation('answer, then be read by result');
    const run = await runErrand(['result', id, '--wait', '20s', '--json'], httpEnv, stack.workDir);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ done: true, result: { output: 'done: answer, then be read by result' } });
  });

  it('names the setting when the address is wrong or does not answer', async () => {
    const bad = await runErrand(['peek', 'errand-0000000000000000'], { ...httpEnv, ERRAND_TEMPORAL_HTTP_URL: 'localhost:7243' }, stack.workDir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('ERRAND_TEMPORAL_HTTP_URL="localhost:7243" must be an http:// or https:// URL');
    const port = await freePort();
    const unreachable = await runErrand(['peek', 'errand-0000000000000000'], { ...httpEnv, ERRAND_TEMPORAL_HTTP_URL: `http://127.0.0.1:${port}` }, stack.workDir);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain(`cannot reach Temporal's HTTP API at http://127.0.0.1:${port} (ERRAND_TEMPORAL_HTTP_URL)`);
  });

  it('refuses an API key over plain http', async () => {
    const run = await runErrand(['peek', 'errand-0000000000000000'], { ...httpEnv, TEMPORAL_API_KEY: keys.acme, TEMPORAL_ADDRESS: temporalAddress(), ERRAND_TEMPORAL_ADDRESS: '' }, stack.workDir);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('is plain http, but a Temporal API key is configured');
  });
});

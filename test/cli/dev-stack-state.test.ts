import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli';
import { devStackStatePath, findDevStack, readDevStackState, removeDevStackState, writeDevStackState, type DevStackState } from '../../src/cli/dev-stack-state';
import type { ModelsResponse } from '../../src/contracts/model-api';
import { freePort } from '../../src/dev/free-port';

/**
 * How a client command finds a running `errand dev` (its state file in the data directory), and when it
 * ignores the file: a stopped process, an API that does not answer, a file that is not one of ours.
 * The "stack" here is a real HTTP server answering like the errand API.
 */

const models = {
  providers: [{ provider: 'demo', kind: 'scripted', models: ['demo'], defaultModel: 'demo', entries: [{ id: 'demo', contextWindow: 128_000, maxOutputTokens: null, reasoningEfforts: [], defaultReasoningEffort: null, prices: null }] }],
  default: { provider: 'demo', model: 'demo' },
} satisfies ModelsResponse;

let folder: string;
let server: Server;
let apiUrl: string;
const requests: string[] = [];

function state(overrides: Partial<DevStackState> = {}): DevStackState {
  return { apiUrl, pid: process.pid, temporalAddress: '127.0.0.1:7233', namespace: 'default', taskQueue: 'errand', startedAt: '2026-01-01T00:00:00.000Z', ...overrides };
}

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid ?? 0;
  await new Promise((resolveExit) => child.once('exit', resolveExit));
  return pid;
}

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'errand-dev-state-'));
  server = createServer((request, response) => {
    requests.push(`${request.method ?? ''} ${request.url ?? ''}`);
    response.setHeader('content-type', 'application/json');
    if (request.url === '/healthz') response.end(JSON.stringify({ ok: true }));
    else if (request.url === '/v1/models') response.end(JSON.stringify(models));
    else {
      response.statusCode = 404;
      response.end(JSON.stringify({ type: 'urn:errand:problem:not-found', title: 'Not found', status: 404 }));
    }
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', () => resolveListen()));
  const address = server.address();
  apiUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

afterAll(async () => {
  await new Promise((resolveClose) => server.close(resolveClose));
  rmSync(folder, { recursive: true, force: true });
});

describe('the errand dev state file', () => {
  it('is written whole, read back, and removed only by the process that wrote it', () => {
    const dataDir = join(folder, 'roundtrip');
    const path = writeDevStackState(dataDir, state());
    expect(path).toBe(devStackStatePath(dataDir));
    expect(readDevStackState(dataDir)).toEqual({ kind: 'found', path, state: state() });
    removeDevStackState(dataDir, process.pid + 1);
    expect(readDevStackState(dataDir).kind).toBe('found');
    removeDevStackState(dataDir, process.pid);
    expect(readDevStackState(dataDir)).toEqual({ kind: 'none' });
  });

  it('is used when its process is alive and its API answers', async () => {
    const dataDir = join(folder, 'alive');
    writeDevStackState(dataDir, state());
    expect(await findDevStack(dataDir)).toEqual({ kind: 'alive', state: state(), path: devStackStatePath(dataDir) });
  });

  it('is ignored, with a note saying why, when the process has ended, the API is silent, or the file is not ours', async () => {
    const dead = join(folder, 'dead');
    const pid = await deadPid();
    writeDevStackState(dead, state({ pid }));
    expect(await findDevStack(dead)).toEqual({ kind: 'ignored', note: `${devStackStatePath(dead)} names errand dev pid ${pid}, which is not running; it was ignored` });

    const silent = join(folder, 'silent');
    const port = await freePort();
    writeDevStackState(silent, state({ apiUrl: `http://127.0.0.1:${port}` }));
    const found = await findDevStack(silent);
    expect(found.kind === 'ignored' && found.note).toMatch(new RegExp(`^${devStackStatePath(silent).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the errand dev API at http://127\\.0\\.0\\.1:${port} does not answer \\(.+\\); it was ignored$`));

    const garbage = join(folder, 'garbage');
    writeDevStackState(garbage, state());
    writeFileSync(devStackStatePath(garbage), '{"apiUrl": 5}');
    const unreadable = await findDevStack(garbage);
    expect(unreadable.kind === 'ignored' && unreadable.note).toContain('is not a valid errand dev state file (apiUrl:');
    expect(await findDevStack(join(folder, 'nothing-here'))).toEqual({ kind: 'none' });
  });

  it('makes a client command without ERRAND_API_URL talk to that stack', async () => {
    const dataDir = join(folder, 'client');
    writeDevStackState(dataDir, state());
    let out = '';
    let err = '';
    const io = { stdout: (text: string) => (out += text), stderr: (text: string) => (err += text), interactive: false };
    const before = requests.length;
    const code = await runCli(['models'], io, { PATH: process.env.PATH, HOME: process.env.HOME, ERRAND_DATA_DIR: dataDir }, folder);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toBe('demo/demo  (default)\n');
    expect(requests.slice(before)).toEqual(['GET /healthz', 'GET /v1/models']);
  });

  it('says so on stderr when ERRAND_TEMPORAL_ADDRESS names another Temporal server than the stack it uses (localhost is 127.0.0.1)', async () => {
    const dataDir = join(folder, 'client-other-temporal');
    writeDevStackState(dataDir, state());
    const run = async (address: string | undefined) => {
      let out = '';
      let err = '';
      const io = { stdout: (text: string) => (out += text), stderr: (text: string) => (err += text), interactive: false };
      const code = await runCli(['models'], io, { PATH: process.env.PATH, HOME: process.env.HOME, ERRAND_DATA_DIR: dataDir, ...(address ? { ERRAND_TEMPORAL_ADDRESS: address } : {}) }, folder);
      return { code, out, err };
    };
    const other = await run('temporal.example.internal:7233');
    expect(other.code).toBe(0);
    expect(other.out).toBe('demo/demo  (default)\n');
    expect(other.err).toBe(
      `errand: the errand dev stack found in ${devStackStatePath(dataDir)} serves this command, with its Temporal at 127.0.0.1:7233; ` +
        'ERRAND_TEMPORAL_ADDRESS=temporal.example.internal:7233 names another server and is not used here. To use that server, set ERRAND_DATA_DIR to a folder no running errand dev uses; to use another API, set ERRAND_API_URL\n',
    );
    // The stack's own server, however written (docs/mcp.md's entries say localhost:7233), is no surprise.
    for (const same of ['localhost:7233', '127.0.0.1:7233']) expect((await run(same)).err).toBe('');
    expect((await run('localhost:7234')).err).toContain('ERRAND_TEMPORAL_ADDRESS=localhost:7234 names another server');
  });
});

import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapInvocation, checkSandbox, commandEnvironment, type BwrapSandbox } from '../../src/tools/command-environment';
import { ensureBubblewrap } from '../support/bubblewrap';

/** The environment model commands get, and the bubblewrap sandbox they run in (real bwrap processes). */

let server: Server;
let port = 0;
let accepted = 0;

beforeAll(async () => {
  await ensureBubblewrap();
  server = createServer((socket) => {
    accepted += 1;
    socket.end('hi\n');
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', () => resolveListen()));
  const address = server.address();
  port = typeof address === 'object' && address !== null ? address.port : 0;
}, 600_000);

afterAll(async () => {
  await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
});

function runIn(sandbox: BwrapSandbox, command: string): Promise<{ code: number | null; output: string }> {
  const workingDir = realpathSync(mkdtempSync(join(tmpdir(), 'errand-bwrap-')));
  const env = commandEnvironment({ env: process.env });
  const invocation = bwrapInvocation(sandbox, workingDir, command, env);
  return new Promise((resolveRun) => {
    const child = spawn(invocation.file, invocation.args, { cwd: workingDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('close', (code) => resolveRun({ code, output }));
  });
}

const connect = (target: number) => `node -e "require('net').connect(${target},'127.0.0.1').on('data',d=>{console.log('GOT '+d);process.exit(0)}).on('error',e=>{console.log('REFUSED '+e.code);process.exit(3)})"`;

describe('command environment', () => {
  it('holds PATH, HOME, LANG, TMPDIR and the listed names, nothing else', () => {
    const env = { PATH: '/usr/bin', HOME: '/home/w', LANG: 'C.UTF-8', TMPDIR: '/tmp', LC_ALL: 'C', TEMPORAL_API_KEY: 'secret', AWS_SECRET_ACCESS_KEY: 'secret', OTHER: 'x' };
    expect(commandEnvironment({ env, envNames: ['LC_ALL'] })).toEqual({ PATH: '/usr/bin', HOME: '/home/w', LANG: 'C.UTF-8', TMPDIR: '/tmp', LC_ALL: 'C' });
    expect(commandEnvironment({ env: { PATH: '/bin' } })).toEqual({ PATH: '/bin' });
  });
});

describe('bubblewrap sandbox', () => {
  it('has no network unless the operator allows it', async () => {
    const closed = await runIn({ kind: 'bwrap', network: false, readOnlyPaths: [] }, connect(port));
    expect(closed.output).toMatch(/REFUSED/);
    expect(accepted).toBe(0);
    // The same command with the network shared reaches the service: the refusal above is the sandbox's.
    const open = await runIn({ kind: 'bwrap', network: true, readOnlyPaths: [] }, connect(port));
    expect(open.output).toContain('GOT hi');
    expect(accepted).toBe(1);
  });

  it('makes the working directory the only writable place, with a private /tmp', async () => {
    const result = await runIn({ kind: 'bwrap', network: false, readOnlyPaths: [] }, 'touch /usr/x 2>&1; echo ok > here.txt && cat here.txt; echo "tmp $(ls -A /tmp | wc -l) home $(ls -A "$HOME" | wc -l)"; ls /');
    expect(result.output).toMatch(/Read-only file system/);
    expect(result.output).toContain('ok');
    // /tmp holds only the working directory's path; the home folder is empty (not the worker's).
    expect(result.output).toMatch(/tmp 1 home 0/);
    expect(result.output).not.toMatch(/^(work|srv|mnt|var|opt)$/m);
  });

  it('is checked at worker start, naming the setting', async () => {
    await expect(checkSandbox({ kind: 'bwrap', network: false, readOnlyPaths: [] }, { env: process.env })).resolves.toBeUndefined();
    await expect(checkSandbox({ kind: 'bwrap', network: false, readOnlyPaths: [] }, { env: { PATH: '/nonexistent' } })).rejects.toThrow(/ERRAND_SANDBOX=bwrap, but the bwrap program is not on the PATH: install bubblewrap/);
    await expect(checkSandbox({ kind: 'bwrap', network: false, readOnlyPaths: ['/no/such/toolchain'] })).rejects.toThrow(/ERRAND_SANDBOX_READ_ONLY_PATHS names \/no\/such\/toolchain, which does not exist on this worker/);
  });
});

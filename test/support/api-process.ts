import { spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { freePort } from '../../src/dev/free-port';
import { errandBin } from './mcp-errand-client';

/** `errand api` as a process (the artifact users run), on a free port. */
export interface ApiProcess {
  url: string;
  /** Everything it wrote so far. */
  output(): string;
  /** SIGKILL (as a crash): resolves when it has exited. */
  kill(): Promise<void>;
}

/** Starts `errand api` in `cwd` with `env` (PATH, HOME and TMPDIR added) and resolves once it listens. */
export async function startApiProcess(env: Record<string, string>, cwd: string): Promise<ApiProcess> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [errandBin, 'api'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: env.HOME ?? process.env.HOME ?? '', TMPDIR: process.env.TMPDIR ?? tmpdir(), ...env, ERRAND_API_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await new Promise<void>((resolveReady, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('listening on')) resolveReady();
    });
    child.once('exit', (code) => reject(new Error(`errand api exited (${String(code)}): ${output}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    output: () => output,
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolveExit) => child.once('exit', resolveExit));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

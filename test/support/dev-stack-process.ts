import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../src/dev/free-port';
import { errandBin } from './built-artifacts';

/**
 * `errand dev` as a person starts it: `bin/errand.js dev` (over the CLI bundle the global setup keeps
 * fresh) in a child process with its own Temporal dev server, worker and API, on free ports. The caller gives the environment (data and working folders,
 * providers, policy); the tools' locations of this run are passed on so no download happens.
 */

/** A running `errand dev`. */
export interface DevStackProcess {
  child: ChildProcess;
  /** Its API, e.g. `http://127.0.0.1:41234`. */
  apiUrl: string;
  /** What it printed on stdout up to "Ctrl-C stops everything". */
  banner: string;
  /** What it printed on stderr so far (live). */
  stderr(): string;
  /** Ctrl-C, then waits for it to exit; returns its exit code. */
  stop(): Promise<number | null>;
}

/** Starts `errand dev` in `cwd` with exactly `env` (plus the run's tool locations) and waits for its banner. */
export async function startDevStackProcess(env: NodeJS.ProcessEnv, cwd: string): Promise<DevStackProcess> {
  const [api, temporal, http] = [await freePort(), await freePort(), await freePort()];
  const tools = { ERRAND_TEMPORAL_CLI: process.env.ERRAND_TEMPORAL_CLI, ERRAND_TOOLS_DIR: process.env.ERRAND_TOOLS_DIR };
  const child = spawn(process.execPath, [errandBin, 'dev', '--headless', '--port', String(api), '--temporal-port', String(temporal), '--temporal-http-port', String(http)], {
    env: { ...tools, ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let banner = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  await new Promise<void>((resolveReady, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      banner += chunk.toString('utf8');
      if (banner.includes('Ctrl-C stops everything')) resolveReady();
    });
    void exited.then((code) => reject(new Error(`errand dev exited early (${String(code)}):\n${banner}\n${stderr}`)));
  });
  return {
    child,
    apiUrl: `http://127.0.0.1:${api}`,
    banner,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGINT');
      return exited;
    },
  };
}

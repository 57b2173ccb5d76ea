import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { devStackProbeTimeoutMs, devStackStateFileName } from '../contracts/limits/api';
import { isLoopbackHost } from '../settings/loopback-host';

/**
 * How client commands find a local `errand dev` stack without `ERRAND_API_URL`: `errand dev` writes a
 * small state file into its data directory (`<data dir>/dev-stack.json`: API URL, pid, Temporal address)
 * and removes it when it stops. A client command with no `ERRAND_API_URL` reads it from the same data
 * directory and, when that process is alive and its API answers, talks to that API, so it uses the
 * stack's configuration (the demo model, the example recipes) instead of its own.
 */

/** What `errand dev` records about itself. */
export const devStackStateSchema = z.object({
  apiUrl: z.url({ protocol: /^https?$/ }),
  pid: z.number().int().positive(),
  temporalAddress: z.string(),
  namespace: z.string(),
  taskQueue: z.string(),
  startedAt: z.string(),
});
/** The state of a running `errand dev`. */
export type DevStackState = z.infer<typeof devStackStateSchema>;

/** Where the state file of the stack using `dataDir` lives. */
export function devStackStatePath(dataDir: string): string {
  return join(dataDir, devStackStateFileName);
}

/** Writes the state file (whole or not at all: written beside it, then renamed). */
export function writeDevStackState(dataDir: string, state: DevStackState): string {
  mkdirSync(dataDir, { recursive: true });
  const path = devStackStatePath(dataDir);
  const partial = `${path}.${state.pid}.tmp`;
  writeFileSync(partial, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(partial, path);
  return path;
}

/** Removes the state file if it is still this process's (another `errand dev` may have replaced it). */
export function removeDevStackState(dataDir: string, pid: number): void {
  const found = readDevStackState(dataDir);
  if (found.kind === 'found' && found.state.pid === pid) rmSync(found.path, { force: true });
}

/** What the data directory says about a dev stack. */
export type DevStackLookup =
  | { kind: 'none' }
  | { kind: 'found'; path: string; state: DevStackState }
  | { kind: 'unreadable'; path: string; reason: string };

/** Reads the state file of `dataDir`, if there is one. */
export function readDevStackState(dataDir: string): DevStackLookup {
  const path = devStackStatePath(dataDir);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return { kind: 'none' };
    return { kind: 'unreadable', path, reason: error instanceof Error ? error.message : String(error) };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { kind: 'unreadable', path, reason: `not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  const parsed = devStackStateSchema.safeParse(json);
  if (!parsed.success) return { kind: 'unreadable', path, reason: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(top level)'}: ${issue.message}`).join('; ') };
  return { kind: 'found', path, state: parsed.data };
}

/** Whether a process with this pid exists (EPERM: it exists but belongs to someone else). */
export function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}

/** A running dev stack to talk to, or why the state file found is not used (for a note on stderr). */
export type DevStackFinding = { kind: 'none' } | { kind: 'alive'; state: DevStackState; path: string } | { kind: 'ignored'; note: string };

/**
 * Finds the live `errand dev` of `dataDir`: its state file names a running process whose API answers
 * `GET /healthz` within {@link devStackProbeTimeoutMs}.
 */
export async function findDevStack(dataDir: string): Promise<DevStackFinding> {
  const found = readDevStackState(dataDir);
  if (found.kind === 'none') return { kind: 'none' };
  if (found.kind === 'unreadable') return { kind: 'ignored', note: `${found.path} is not a valid errand dev state file (${found.reason}); it was ignored` };
  const { state, path } = found;
  if (!processIsAlive(state.pid)) return { kind: 'ignored', note: `${path} names errand dev pid ${state.pid}, which is not running; it was ignored` };
  try {
    const response = await fetch(`${state.apiUrl.replace(/\/+$/, '')}/healthz`, { signal: AbortSignal.timeout(devStackProbeTimeoutMs) });
    await response.body?.cancel();
    if (!response.ok) return { kind: 'ignored', note: `${path}: the errand dev API at ${state.apiUrl} answered ${response.status} to /healthz; it was ignored` };
  } catch (error) {
    return { kind: 'ignored', note: `${path}: the errand dev API at ${state.apiUrl} does not answer (${error instanceof Error ? error.message : String(error)}); it was ignored` };
  }
  return { kind: 'alive', state, path };
}

/** host:port of a Temporal address, this machine's names made one and Temporal's port the default. */
function addressKey(address: string): string {
  const trimmed = address.trim().replace(/^[a-z]+:\/\//i, '');
  const at = trimmed.lastIndexOf(':');
  const hasPort = at > 0 && /^\d+$/.test(trimmed.slice(at + 1)) && !trimmed.endsWith(']');
  const host = (hasPort ? trimmed.slice(0, at) : trimmed).toLowerCase();
  const port = hasPort ? trimmed.slice(at + 1) : '7233';
  return `${isLoopbackHost(host) ? 'loopback' : host}:${port}`;
}

/**
 * A line for stderr when a running stack serves a client command although the environment names another
 * Temporal server (`ERRAND_TEMPORAL_ADDRESS`): the stack wins, as documented, and the command says so and how
 * to choose otherwise. Undefined when no address is set or it is the stack's own (`localhost` and
 * `127.0.0.1` are the same here).
 */
export function otherTemporalNote(found: { state: DevStackState; path: string }, env: NodeJS.ProcessEnv): string | undefined {
  const named = env.ERRAND_TEMPORAL_ADDRESS?.trim();
  if (!named || addressKey(named) === addressKey(found.state.temporalAddress)) return undefined;
  return (
    `the errand dev stack found in ${found.path} serves this command, with its Temporal at ${found.state.temporalAddress}; ` +
    `ERRAND_TEMPORAL_ADDRESS=${named} names another server and is not used here. To use that server, set ERRAND_DATA_DIR to ` +
    'a folder no running errand dev uses; to use another API, set ERRAND_API_URL'
  );
}

import { spawn, type ChildProcess } from 'node:child_process';
import { waitUntilTemporalAnswers } from './temporal-ready';
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { searchAttributeDefinitions } from '../contracts/search-attributes';
import { freePort } from './free-port';
import { temporalCliPath } from './tool-paths';

/**
 * Dynamic config every dev server errand starts gets (a caller's `dynamicConfig` wins key by key). Why, with
 * the numbers, in docs/decisions/ ("the floor") and bench/results.md:
 *
 * - `history.transferProcessorMaxPollRPS`: a history shard's transfer-queue reader may load new tasks at
 *   most 20 times a second (burst 20). Every workflow task and every activity task that goes through
 *   matching is such a task, and the dev server has a single shard, so once the burst is spent a workflow
 *   that runs activities one after another waits for the limiter: 50 ms per activity, whatever the worker
 *   or the disk. The reader loads only when told a task is there, so a higher cap costs nothing while idle.
 * - `history.timerProcessorMaxTimeShift`: the timer queue will not fire a timer created now before now + this
 *   (default 1 s), so every short timer — an activity retry's backoff, a heartbeat timeout re-armed near its
 *   end, a short sleep — fires up to a second late. After a worker dies that second adds to the recovery
 *   of every model call in flight (bench figure recovery-time); 20 ms keeps timers within a few tens of ms.
 *   The cost is more frequent, smaller reads of the timer queue, nothing while no timer is due.
 */
export const devServerDynamicConfig: Readonly<Record<string, string | number | boolean>> = {
  'history.transferProcessorMaxPollRPS': 1_000,
  'history.timerProcessorMaxTimeShift': '20ms',
};

/**
 * SQLite pragmas of a dev server with a state file. With SQLite's defaults (rollback journal, synchronous =
 * full) every commit waits for the disk to sync the journal and the file, tens of ms on a VM disk. WAL with
 * synchronous = normal commits without waiting for the disk: the file stays consistent and survives a crash
 * of the server process or of errand; only a power cut or OS crash can lose the last transactions — fine for
 * a development server, whose production counterpart is a real cluster.
 */
export const devServerSqlitePragmas: Readonly<Record<string, string>> = {
  journal_mode: 'wal',
  synchronous: 'normal',
};

/** Options for a local Temporal dev server. */
export interface DevServerOptions {
  /** SQLite file that keeps the server's state across restarts; omitted, the state is in memory only. */
  dbFile?: string;
  /** SQLite pragmas over {@link devServerSqlitePragmas} (used only with `dbFile`). */
  sqlitePragmas?: Record<string, string>;
  /**
   * Temporal's own settings: none of {@link devServerDynamicConfig} and {@link devServerSqlitePragmas}, only
   * what the caller passes. For measuring what errand's settings change (the bench's floor figure).
   */
  stock?: boolean;
  /** File that receives the server's stdout and stderr. */
  logFile: string;
  /** gRPC port (random free port when omitted). */
  port?: number;
  /** HTTP API port (random free port when omitted). */
  httpPort?: number;
  /** Web UI port (random free port when omitted); ignored when `headless`. */
  uiPort?: number;
  /** Disable the Web UI. */
  headless?: boolean;
  /** Interface to bind (default 127.0.0.1). */
  ip?: string;
  /** Dynamic config values over {@link devServerDynamicConfig}, e.g. `{ 'limit.historyCount.suggestContinueAsNew': 50 }`. */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** How long to wait for the server to answer (ms). */
  startTimeoutMs?: number;
}

/** A running dev server started by {@link startDevServer}. */
export interface DevServer {
  /** `host:port` of the frontend gRPC service. */
  address: string;
  /** Web UI URL, if the UI is on. */
  uiUrl: string | undefined;
  /** Temporal's HTTP API (the frontend's JSON gateway), for `ERRAND_TEMPORAL_HTTP_URL`. */
  httpUrl: string;
  /** The server's Prometheus metrics (`/metrics`): requests per operation, billable actions (bench). */
  metricsUrl: string;
  port: number;
  httpPort: number;
  uiPort: number | undefined;
  dbFile: string | undefined;
  logFile: string;
  /** The server process id. */
  pid: number;
  /** Stops the server process (SIGTERM, then SIGKILL after a grace period). */
  stop(): Promise<void>;
}

/**
 * Starts `temporal server start-dev` from the project-installed CLI with the project's search attributes
 * registered, its state in `dbFile` (in memory without one), errand's dynamic config and SQLite pragmas
 * (unless `stock`), and waits until the frontend answers.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  // Ports are picked free, then bound by the server a moment later: another process (or one of the server's
  // own services) may take one in between. A start that fails on a taken port is tried again on new ports,
  // unless the caller named the ports.
  const portsGiven = options.port !== undefined || options.httpPort !== undefined || options.uiPort !== undefined;
  for (let attempt = 1; ; attempt += 1) {
    const logStart = existsSync(options.logFile) ? statSync(options.logFile).size : 0;
    try {
      return await startDevServerOnce(options);
    } catch (error) {
      if (portsGiven || attempt >= 3 || !portTakenSince(options.logFile, logStart)) throw error;
    }
  }
}

/** Whether the log written since `from` says a port was taken (the server then exits during its start). */
function portTakenSince(logFile: string, from: number): boolean {
  try {
    return readFileSync(logFile).subarray(from).toString('utf8').includes('address already in use');
  } catch {
    return false;
  }
}

async function startDevServerOnce(options: DevServerOptions): Promise<DevServer> {
  const binary = temporalCliPath();
  if (!existsSync(binary)) {
    throw new Error(`Temporal CLI not found at ${binary}. Run "npm run tools" (or set ERRAND_TEMPORAL_CLI to an existing binary).`);
  }
  const ip = options.ip ?? '127.0.0.1';
  const port = options.port ?? (await freePort(ip));
  const uiPort = options.headless ? undefined : (options.uiPort ?? (await freePort(ip)));
  const httpPort = options.httpPort ?? (await freePort(ip));
  const metricsPort = await freePort(ip);
  const args = [
    'server', 'start-dev',
    '--ip', ip,
    '--port', String(port),
    '--http-port', String(httpPort),
    '--metrics-port', String(metricsPort),
    '--log-format', 'json',
    '--log-level', 'warn',
  ];
  if (options.dbFile !== undefined) {
    args.push('--db-filename', options.dbFile);
    const pragmas = { ...(options.stock ? {} : devServerSqlitePragmas), ...options.sqlitePragmas };
    for (const [pragma, value] of Object.entries(pragmas)) args.push('--sqlite-pragma', `${pragma}=${value}`);
  }
  if (uiPort === undefined) args.push('--headless');
  else args.push('--ui-port', String(uiPort));
  for (const attribute of searchAttributeDefinitions) args.push('--search-attribute', `${attribute.name}=${attribute.type}`);
  const dynamicConfig = { ...(options.stock ? {} : devServerDynamicConfig), ...options.dynamicConfig };
  for (const [key, value] of Object.entries(dynamicConfig)) args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);

  mkdirSync(dirname(options.logFile), { recursive: true });
  if (options.dbFile !== undefined) mkdirSync(dirname(options.dbFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child: ChildProcess = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  if (child.pid === undefined) throw new Error(`could not start ${binary}`);
  const pid = child.pid;

  const address = `${ip}:${port}`;
  // The default namespace and search attributes are created right after the frontend is up.
  try {
    await waitUntilTemporalAnswers(child, { address, namespace: 'default', name: 'Temporal dev server', logFile: options.logFile, timeoutMs: options.startTimeoutMs ?? 60_000, pollMs: 200 });
  } catch (error) {
    // A server that did not come up is not left running, and its log is closed (a retry appends to it).
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    log.end();
    throw error;
  }

  return {
    address,
    uiUrl: uiPort === undefined ? undefined : `http://${ip}:${uiPort}`,
    httpUrl: `http://${ip.includes(':') ? `[${ip}]` : ip}:${httpPort}`,
    metricsUrl: `http://${ip.includes(':') ? `[${ip}]` : ip}:${metricsPort}/metrics`,
    port,
    httpPort,
    uiPort,
    dbFile: options.dbFile,
    logFile: options.logFile,
    pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      log.end();
    },
  };
}

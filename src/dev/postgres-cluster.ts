import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort } from './free-port';
import { postgresBinDirectory } from './tool-paths';

/**
 * A PostgreSQL cluster of its own, as a self-hosted Temporal runs on: `initdb` into a data folder, the server
 * on its own TCP port (127.0.0.1 only) and its own Unix socket folder, so it never meets a system cluster
 * (Debian's service listens on 5432 with its sockets in /var/run/postgresql). Temporal connects over TCP
 * with a password, as it would to a database host; the superuser is reached only through the socket.
 *
 * PostgreSQL refuses to run as root: under root its programs run as the `postgres` account Debian's package
 * creates, and the data folder belongs to that account.
 */

/** The role Temporal connects as (created with CREATEDB, so `temporal-sql-tool create-database` works). */
export const temporalDatabaseRole = 'temporal';

/** Options of {@link initPostgresCluster}. */
export interface PostgresClusterOptions {
  /** Folder that receives the cluster (`data/`, `socket/`); created when missing. */
  folder: string;
  /** File that receives the server's log. */
  logFile: string;
  /** TCP port (a free one when omitted). */
  port?: number;
  /** `max_connections` (each Temporal service keeps its own pools). */
  maxConnections?: number;
  /** How long to wait for the server to accept connections (ms). */
  startTimeoutMs?: number;
}

/** How Temporal and its SQL tool reach the cluster. */
export interface PostgresEndpoint {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** A running cluster. */
export interface PostgresCluster extends PostgresEndpoint {
  folder: string;
  /** The postmaster's process id. */
  pid: number;
  /** Runs SQL as the superuser through the cluster's socket (psql, stops at the first error). */
  sql(statement: string, database?: string): string;
  /** Stops the server (fast shutdown: SIGINT to the postmaster), keeping the data folder. */
  stop(): Promise<void>;
}

/** The account PostgreSQL's programs run as: the current one, or `postgres` under root. */
interface RunAs {
  uid?: number;
  gid?: number;
}

function runAs(): RunAs {
  if (process.getuid?.() !== 0) return {};
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error('PostgreSQL refuses to run as root and there is no `postgres` account to run it as: install Debian\'s postgresql package (npm run tools temporal-server does) or run as another user');
  }
}

function binary(name: string): string {
  const folder = postgresBinDirectory();
  if (folder === undefined || !existsSync(join(folder, name))) {
    throw new Error(`PostgreSQL's ${name} was not found (looked in ERRAND_POSTGRES_BIN_DIR, /usr/lib/postgresql/<version>/bin and the PATH): run "npm run tools temporal-server", which installs Debian's postgresql package when it is missing`);
  }
  return join(folder, name);
}

function ownFolder(path: string, owner: RunAs): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  if (owner.uid !== undefined && owner.gid !== undefined) chownSync(path, owner.uid, owner.gid);
}

/**
 * Creates a cluster in `options.folder` (initdb, a `temporal` role with a random password) and starts it.
 * Call {@link startPostgresCluster} to start it again after {@link PostgresCluster.stop}.
 */
export async function initPostgresCluster(options: PostgresClusterOptions): Promise<PostgresCluster> {
  const owner = runAs();
  ownFolder(options.folder, owner);
  const dataFolder = join(options.folder, 'data');
  const superuserPassword = randomBytes(18).toString('base64url');
  const passwordFile = join(options.folder, 'superuser-password');
  writeFileSync(passwordFile, `${superuserPassword}\n`, { mode: 0o600 });
  if (owner.uid !== undefined && owner.gid !== undefined) chownSync(passwordFile, owner.uid, owner.gid);
  const initdb = spawnSync(
    binary('initdb'),
    ['--pgdata', dataFolder, '--username', 'postgres', '--pwfile', passwordFile, '--auth-local', 'trust', '--auth-host', 'scram-sha-256', '--encoding', 'UTF8', '--locale', 'C'],
    { ...owner, encoding: 'utf8', timeout: 120_000 },
  );
  if (initdb.status !== 0) {
    const account = owner.uid !== undefined ? ' (it runs as the postgres account: every folder above the cluster\'s must be reachable by it, e.g. mode 755)' : '';
    throw new Error(`initdb failed for ${dataFolder}${account}: ${(initdb.stderr || String(initdb.error ?? '')).trim()}`);
  }
  const password = randomBytes(18).toString('base64url');
  const cluster = await startPostgresCluster({ ...options, password });
  cluster.sql(`CREATE ROLE ${temporalDatabaseRole} LOGIN CREATEDB PASSWORD '${password}'`);
  return cluster;
}

/** Starts an existing cluster made by {@link initPostgresCluster} (its `temporal` role has `password`). */
export async function startPostgresCluster(options: PostgresClusterOptions & { password: string }): Promise<PostgresCluster> {
  const owner = runAs();
  const dataFolder = join(options.folder, 'data');
  const socketFolder = join(options.folder, 'socket');
  ownFolder(socketFolder, owner);
  const host = '127.0.0.1';
  const port = options.port ?? (await freePort(host));
  mkdirSync(dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child: ChildProcess = spawn(
    binary('postgres'),
    [
      '-D', dataFolder,
      '-p', String(port),
      '-k', socketFolder,
      '-c', `listen_addresses=${host}`,
      '-c', `max_connections=${options.maxConnections ?? 300}`,
    ],
    { ...owner, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  if (child.pid === undefined) throw new Error(`could not start ${binary('postgres')}`);
  const pid = child.pid;
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));

  const psql = (statement: string, database = 'postgres'): string =>
    execFileSync(binary('psql'), ['--no-psqlrc', '--quiet', '--tuples-only', '--no-align', '-v', 'ON_ERROR_STOP=1', '-h', socketFolder, '-p', String(port), '-U', 'postgres', '-d', database, '-c', statement], {
      ...owner,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  // The server accepts connections once recovery and start-up are done; until then psql fails.
  await waitUntil(() => {
    try {
      psql('SELECT 1');
      return true;
    } catch {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`PostgreSQL exited during start; see its log at ${options.logFile}`);
      return false;
    }
  }, deadline, () => `PostgreSQL did not accept connections on port ${port} in time; see ${options.logFile}`);

  return {
    host,
    port,
    user: temporalDatabaseRole,
    password: options.password,
    folder: options.folder,
    pid,
    sql: psql,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // SIGINT = fast shutdown: open sessions are ended, the data is checkpointed and kept.
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
      log.end();
    },
  };
}

async function waitUntil(check: () => boolean, deadline: number, message: () => string): Promise<void> {
  for (;;) {
    if (check()) return;
    if (Date.now() > deadline) throw new Error(message());
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}

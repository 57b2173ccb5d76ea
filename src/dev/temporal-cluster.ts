import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { waitUntilTemporalAnswers } from './temporal-ready';
import { Connection } from '@temporalio/client';
import { createWriteStream, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { searchAttributeDefinitions } from '../contracts/search-attributes';
import { freePortInRange } from './free-port';
import type { PostgresEndpoint } from './postgres-cluster';
import { temporalCliPath, temporalServerPaths } from './tool-paths';

/**
 * A Temporal server as users self-host it: the release's single binary running every service (frontend,
 * history, matching, worker) from a generated config file, its persistence and visibility in PostgreSQL
 * databases whose schema the release's own `temporal-sql-tool` applied, a namespace created and errand's
 * search attributes registered with the Temporal CLI (`temporal operator ...`) as an operator does.
 * `npm run test:cluster` runs tests on it (scripts/test-cluster.ts, decision 0029).
 */

const execFileAsync = promisify(execFile);

/** The two databases of one Temporal server. */
export interface TemporalDatabases {
  /** Persistence (executions, history, tasks). */
  main: string;
  /** Visibility (lists and search attributes). */
  visibility: string;
}

/** Database names for a server named `name` (lower-case letters, digits and `_`). */
export function temporalDatabaseNames(name: string): TemporalDatabases {
  if (!/^[a-z][a-z0-9_]{0,40}$/.test(name)) throw new Error(`Temporal database name "${name}" is not valid: use 1-41 lower-case letters, digits or _ , starting with a letter`);
  return { main: `${name}`, visibility: `${name}_visibility` };
}

async function sqlTool(postgres: PostgresEndpoint, database: string, args: string[]): Promise<void> {
  const { sqlTool: tool } = temporalServerPaths();
  if (!existsSync(tool)) throw new Error(`temporal-sql-tool not found at ${tool}: run "npm run tools temporal-server"`);
  // The password goes in the environment (the tool reads SQL_PASSWORD), not on a command line others can list.
  try {
    await execFileAsync(tool, ['--plugin', 'postgres12', '--db', database, ...args], {
      env: { ...process.env, SQL_HOST: postgres.host, SQL_PORT: String(postgres.port), SQL_USER: postgres.user, SQL_PASSWORD: postgres.password },
      timeout: 300_000,
    });
  } catch (error) {
    const output = error instanceof Error && 'stderr' in error ? `${String(error.stderr)}${'stdout' in error ? String(error.stdout) : ''}`.trim() : String(error);
    throw new Error(`temporal-sql-tool ${args[0] ?? ''} of database ${database} failed: ${output.slice(0, 2_000)}`);
  }
}

/**
 * Creates a server's two databases and applies the release's schema with `temporal-sql-tool`, the way
 * Temporal's documentation sets up a new cluster: `create-database`, `setup-schema -v 0.0`, then
 * `update-schema` from the versioned schema folder of the same release.
 */
export async function createTemporalDatabases(postgres: PostgresEndpoint, databases: TemporalDatabases): Promise<void> {
  const { postgresSchema } = temporalServerPaths();
  const steps: Array<[string, string]> = [
    [databases.main, join(postgresSchema, 'temporal', 'versioned')],
    [databases.visibility, join(postgresSchema, 'visibility', 'versioned')],
  ];
  await Promise.all(
    steps.map(async ([database, versioned]) => {
      if (!existsSync(versioned)) throw new Error(`Temporal's schema folder ${versioned} is missing: run "npm run tools temporal-server"`);
      await sqlTool(postgres, database, ['create-database', '--defaultdb', 'postgres']);
      await sqlTool(postgres, database, ['setup-schema', '-v', '0.0']);
      await sqlTool(postgres, database, ['update-schema', '-d', versioned]);
    }),
  );
}

/** The ports one server listens on (all on 127.0.0.1). */
export interface TemporalServerPorts {
  frontend: number;
  frontendHttp: number;
  frontendMembership: number;
  history: number;
  historyMembership: number;
  matching: number;
  matchingMembership: number;
  worker: number;
  workerMembership: number;
  metrics: number;
}

/**
 * The ports a server may use: Temporal's PostgreSQL schema stores a member's port as SMALLINT
 * (`cluster_membership.rpc_port`), so a port above 32767 — every port of the OS's ephemeral range — makes the
 * server die at start ("value is out of range for type smallint"). Below the ephemeral range, above the
 * well-known services.
 */
export const temporalServerPortRange = { min: 20_000, max: 32_767 } as const;

/** Free ports for a server, from {@link temporalServerPortRange}. */
export async function freeTemporalServerPorts(): Promise<TemporalServerPorts> {
  const names = ['frontend', 'frontendHttp', 'frontendMembership', 'history', 'historyMembership', 'matching', 'matchingMembership', 'worker', 'workerMembership', 'metrics'] as const;
  const ports: Partial<Record<(typeof names)[number], number>> = {};
  const taken = new Set<number>();
  for (const name of names) {
    let port = await freePortInRange(temporalServerPortRange.min, temporalServerPortRange.max);
    // Bounded: the same free port twice in a row is rare; ask again until it is new.
    while (taken.has(port)) port = await freePortInRange(temporalServerPortRange.min, temporalServerPortRange.max);
    taken.add(port);
    ports[name] = port;
  }
  return ports as TemporalServerPorts;
}

/** What {@link temporalServerConfig} needs. */
export interface TemporalServerConfigInput {
  postgres: PostgresEndpoint;
  databases: TemporalDatabases;
  ports: TemporalServerPorts;
  /** The dynamic config file the server polls. */
  dynamicConfigFile: string;
  /** History shards (fixed for the life of the databases). */
  historyShards: number;
}

/**
 * The server's config file (YAML): Temporal's own PostgreSQL development config reduced to what a single
 * binary on one host needs, with the given ports and databases. No archival; pprof off.
 */
export function temporalServerConfig(input: TemporalServerConfigInput): string {
  const datastore = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${input.postgres.host}:${input.postgres.port}`,
      connectProtocol: 'tcp',
      user: input.postgres.user,
      password: input.postgres.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (grpcPort: number, membershipPort: number, httpPort?: number) => ({
    rpc: { grpcPort, membershipPort, bindOnLocalHost: true, ...(httpPort !== undefined ? { httpPort } : {}) },
  });
  const { ports } = input;
  const config = {
    log: { stdout: true, level: 'warn', format: 'json' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: input.historyShards,
      datastores: { 'postgres-default': datastore(input.databases.main, 10), 'postgres-visibility': datastore(input.databases.visibility, 4) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      metrics: { prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `127.0.0.1:${ports.metrics}` } },
    },
    services: {
      frontend: rpc(ports.frontend, ports.frontendMembership, ports.frontendHttp),
      history: rpc(ports.history, ports.historyMembership),
      matching: rpc(ports.matching, ports.matchingMembership),
      worker: rpc(ports.worker, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: { active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: `127.0.0.1:${ports.frontend}` } },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    dynamicConfigClient: { filepath: input.dynamicConfigFile, pollInterval: '10s' },
  };
  return stringify(config);
}

/** Dynamic config values as Temporal's file wants them: each key a list of constrained values. */
export function temporalDynamicConfig(values: Record<string, string | number | boolean>): string {
  return stringify(Object.fromEntries(Object.entries(values).map(([key, value]) => [key, [{ value, constraints: {} }]])));
}

/** Options of {@link startTemporalServer}. */
export interface TemporalServerOptions {
  postgres: PostgresEndpoint;
  databases: TemporalDatabases;
  /** Folder for the generated config files. */
  folder: string;
  /** File that receives the server's log. */
  logFile: string;
  /** Ports (free ones when omitted); pass the same ports to start a stopped server again at the same address. */
  ports?: TemporalServerPorts;
  /** Dynamic config values (Temporal's defaults otherwise), e.g. `{ 'limit.historyCount.suggestContinueAsNew': 60 }`. */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** History shards: fixed when the databases are first used (default 4, as Temporal's development config). */
  historyShards?: number;
  /** How long to wait for the frontend (ms). */
  startTimeoutMs?: number;
}

/** A running server. */
export interface TemporalServer {
  /** `host:port` of the frontend gRPC service. */
  address: string;
  /** Temporal's HTTP API (the frontend's JSON gateway). */
  httpUrl: string;
  /** Prometheus metrics. */
  metricsUrl: string;
  ports: TemporalServerPorts;
  pid: number;
  logFile: string;
  /** Stops the server process (SIGTERM, SIGKILL after a grace period); the databases keep its state. */
  stop(): Promise<void>;
}

/**
 * Starts the release's server binary with a generated config file (every service in one process) and waits
 * until its frontend answers. The databases must have been made by {@link createTemporalDatabases}.
 */
export async function startTemporalServer(options: TemporalServerOptions): Promise<TemporalServer> {
  const { server: binary } = temporalServerPaths();
  if (!existsSync(binary)) throw new Error(`Temporal server not found at ${binary}: run "npm run tools temporal-server" (a Go build of several minutes, once)`);
  const ports = options.ports ?? (await freeTemporalServerPorts());
  mkdirSync(options.folder, { recursive: true });
  const dynamicConfigFile = join(options.folder, 'dynamic-config.yaml');
  writeFileSync(dynamicConfigFile, temporalDynamicConfig(options.dynamicConfig ?? {}));
  const configFile = join(options.folder, 'temporal-server.yaml');
  writeFileSync(
    configFile,
    temporalServerConfig({ postgres: options.postgres, databases: options.databases, ports, dynamicConfigFile, historyShards: options.historyShards ?? 4 }),
    { mode: 0o600 },
  );

  mkdirSync(dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child: ChildProcess = spawn(binary, ['--config-file', configFile, '--allow-no-auth', 'start'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  if (child.pid === undefined) throw new Error(`could not start ${binary}`);
  const pid = child.pid;
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));

  const address = `127.0.0.1:${ports.frontend}`;
  // The system namespace exists once the worker service's own workflows can run: the server is up.
  await waitUntilTemporalAnswers(child, { address, namespace: 'temporal-system', name: 'Temporal server', logFile: options.logFile, timeoutMs: options.startTimeoutMs ?? 120_000, pollMs: 250 });

  return {
    address,
    httpUrl: `http://127.0.0.1:${ports.frontendHttp}`,
    metricsUrl: `http://127.0.0.1:${ports.metrics}/metrics`,
    ports,
    pid,
    logFile: options.logFile,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
      log.end();
    },
  };
}

async function temporalCli(args: string[]): Promise<string> {
  const { stdout } = await execFileAsync(temporalCliPath(), args, { timeout: 60_000 });
  return stdout;
}

/**
 * Creates `namespace` (when missing) and registers errand's search attributes in it with the Temporal CLI, as
 * README's "Temporal cluster" section tells an operator to, then waits until the frontend serves it.
 */
export async function prepareTemporalNamespace(address: string, namespace: string, retentionHours = 24): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    const exists = await connection.workflowService.describeNamespace({ namespace }).then(() => true, () => false);
    if (!exists) await temporalCli(['operator', 'namespace', 'create', '--address', address, '--namespace', namespace, '--retention', `${retentionHours}h`]);
    const registered = new Set<string>();
    // A new namespace reaches every frontend cache within seconds; until then its calls fail: retry them.
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const listed = await connection.operatorService.listSearchAttributes({ namespace });
        for (const name of Object.keys(listed.customAttributes ?? {})) registered.add(name);
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolveWait) => setTimeout(resolveWait, 500));
      }
    }
    const missing = searchAttributeDefinitions.filter((attribute) => !registered.has(attribute.name));
    if (missing.length > 0) {
      await temporalCli([
        'operator', 'search-attribute', 'create', '--address', address, '--namespace', namespace,
        ...missing.flatMap((attribute) => ['--name', attribute.name, '--type', attribute.type]),
      ]);
    }
    await waitForNamespace(connection, namespace, deadline);
  } finally {
    await connection.close();
  }
}

async function waitForNamespace(connection: Connection, namespace: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      // Listing with an errand attribute works only once the namespace and its attributes are served.
      await connection.workflowService.listWorkflowExecutions({ namespace, pageSize: 1, query: `${searchAttributeDefinitions[0]?.name ?? 'ErrandKind'} = 'session'` });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolveWait) => setTimeout(resolveWait, 500));
    }
  }
}

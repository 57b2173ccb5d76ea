import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { startDevServer } from '../../src/dev/temporal-dev-server';
import {
  createTemporalDatabases,
  freeTemporalServerPorts,
  prepareTemporalNamespace,
  startTemporalServer,
  temporalDatabaseNames,
  type TemporalServerPorts,
} from '../../src/dev/temporal-cluster';
import { clusterEnvironmentKeys } from './cluster-environment';

/**
 * A Temporal server of a test file's own, for tests that stop and restart it or need dynamic config of their
 * own (a low continue-as-new threshold). On the dev-server run it is a dev server on a SQLite file; on a
 * cluster run (`npm run test:cluster`) it is the self-hosted release binary on two databases of its own in the
 * cluster's PostgreSQL: a restart stops and starts the server process while PostgreSQL keeps the data, as it
 * does for a self-hosted cluster.
 */

/** A running server of the file's own. */
export interface OwnServer {
  address: string;
  port: number;
  /** Stops the server process; its state stays (SQLite file or PostgreSQL databases). */
  stop(): Promise<void>;
}

/** Options of {@link ownTemporalServer}. */
export interface OwnServerOptions {
  /** Names its log (`test-artifacts/<label>-server.log`) and, on a cluster, its databases. */
  label: string;
  /** Dynamic config values. */
  dynamicConfig?: Record<string, string | number | boolean>;
}

/** Starts the server: the first call creates its state, each later call starts it again on that state, at the same address. */
export type StartOwnServer = () => Promise<OwnServer>;

const postgresSchema = z.object({ host: z.string().min(1), port: z.number().int().positive(), user: z.string().min(1), password: z.string() });

/** Whether the run is on a cluster with PostgreSQL for servers of a file's own. */
export function onCluster(): boolean {
  return Boolean(process.env[clusterEnvironmentKeys.address]);
}

/** A starter for a server of the file's own (see the module comment). */
export function ownTemporalServer(options: OwnServerOptions): StartOwnServer {
  const logFile = resolve(__dirname, '..', '..', 'test-artifacts', `${options.label}-server.log`);
  const folder = mkdtempSync(join(tmpdir(), `errand-${options.label}-server-`));
  const postgresJson = process.env[clusterEnvironmentKeys.postgres];
  if (!onCluster()) {
    let port: number | undefined;
    return async () => {
      const server = await startDevServer({
        dbFile: join(folder, 'temporal.sqlite'),
        logFile,
        headless: true,
        ...(port !== undefined ? { port } : {}),
        ...(options.dynamicConfig ? { dynamicConfig: options.dynamicConfig } : {}),
      });
      port = server.port;
      return { address: server.address, port: server.port, stop: () => server.stop() };
    };
  }
  if (!postgresJson) throw new Error(`${clusterEnvironmentKeys.postgres} is not set: a server of a test file's own on the cluster needs the cluster's PostgreSQL ({ host, port, user, password })`);
  const postgres = postgresSchema.parse(JSON.parse(postgresJson));
  const databases = temporalDatabaseNames(`${options.label.replace(/[^a-z0-9]/g, '_')}_${randomUUID().slice(0, 8)}`);
  const namespace = process.env[clusterEnvironmentKeys.namespace] || 'default';
  let ports: TemporalServerPorts | undefined;
  return async () => {
    const first = ports === undefined;
    if (ports === undefined) {
      await createTemporalDatabases(postgres, databases);
      ports = await freeTemporalServerPorts();
    }
    const server = await startTemporalServer({ postgres, databases, folder, logFile, ports, ...(options.dynamicConfig ? { dynamicConfig: options.dynamicConfig } : {}) });
    if (first) await prepareTemporalNamespace(server.address, namespace);
    return { address: server.address, port: server.ports.frontend, stop: () => server.stop() };
  };
}

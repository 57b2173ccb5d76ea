/**
 * `npm run test:cluster`: errand's restart and long-haul tests on the topology users self-host, instead of
 * the dev server (decision 0029):
 *
 * 1. a PostgreSQL cluster of its own (Debian's package): `initdb` into a temp folder, its own port and socket
 *    folder, a `temporal` role with a password;
 * 2. the Temporal release built from the Go module proxy (`npm run tools temporal-server`): its
 *    `temporal-sql-tool` creates the persistence and visibility databases and applies the release's schema;
 * 3. the single server binary with every service, from a generated config file;
 * 4. the `default` namespace created and errand's search attributes registered with the Temporal CLI;
 * 5. vitest on {@link clusterTestFiles}, with the settings of test/support/cluster-environment.ts pointing the
 *    run at the cluster. Tests that restart a server start one of their own on databases of their own in the
 *    same PostgreSQL (test/support/own-temporal-server.ts): a restart stops and starts the server process
 *    while PostgreSQL keeps the data.
 *
 * It prints how long each step took. Logs are in test-artifacts/cluster/. Extra arguments go to vitest
 * (e.g. `-t <name>`); `--files a.test.ts,b.test.ts` replaces the list.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { initPostgresCluster, type PostgresCluster } from '../src/dev/postgres-cluster';
import { createTemporalDatabases, prepareTemporalNamespace, startTemporalServer, temporalDatabaseNames, type TemporalServer } from '../src/dev/temporal-cluster';
import { clusterEnvironmentKeys } from '../test/support/cluster-environment';

/**
 * What runs on the cluster: every test that restarts the server or a worker, and the long-haul idle test.
 * Each file also runs on the dev server in `npm test`.
 */
export const clusterTestFiles: readonly string[] = [
  // The server process stops and starts; PostgreSQL keeps the state.
  'test/workflows/server-restart.test.ts',
  'test/workflows/workflow-run-server-restart.test.ts',
  // Worker processes die (SIGKILL) and new ones carry on.
  'test/workflows/worker-crash.test.ts',
  'test/workflows/workflow-run-crash.test.ts',
  'test/workflows/session-restart.test.ts',
  'test/workflows/continuable.test.ts',
  'test/workflows/approvals.test.ts',
  'test/e2e/mcp-worker-restart.test.ts',
  // Long haul: 30 days of an idle session with waiting children add no history.
  'test/workflows/idle-session.test.ts',
  // Deploys: build B becomes current; the subagent stays on A, the session and continuable move to B.
  'test/workflows/worker-versioning.test.ts',
];

const projectRoot = resolve(__dirname, '..');
const artifacts = join(projectRoot, 'test-artifacts', 'cluster');

function say(message: string): void {
  process.stdout.write(`test:cluster: ${message}\n`);
}

function seconds(since: number): string {
  return `${((Date.now() - since) / 1000).toFixed(1)} s`;
}

/** The list to run and vitest's other arguments. */
function parseArguments(argv: string[]): { files: string[]; vitestArgs: string[] } {
  const vitestArgs: string[] = [];
  let files = [...clusterTestFiles];
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index] ?? '';
    if (argument === '--files') {
      const value = argv[index + 1];
      if (!value) throw new Error('test:cluster: --files needs a comma-separated list of test files (e.g. --files test/workflows/server-restart.test.ts)');
      files = value.split(',').filter(Boolean);
      index += 1;
    } else {
      vitestArgs.push(argument);
    }
  }
  const missing = files.filter((file) => !existsSync(join(projectRoot, file)));
  if (missing.length > 0) throw new Error(`test:cluster: test files not found: ${missing.join(', ')} (paths are relative to the project folder)`);
  return { files, vitestArgs };
}

function runVitest(files: string[], vitestArgs: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [join(projectRoot, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--project', 'temporal', ...vitestArgs, ...files], {
      cwd: projectRoot,
      env,
      stdio: 'inherit',
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolveRun(code ?? (signal ? 1 : 0)));
  });
}

async function main(): Promise<number> {
  const { files, vitestArgs } = parseArguments(process.argv.slice(2));
  mkdirSync(artifacts, { recursive: true });
  for (const log of ['postgres.log', 'temporal-server.log']) rmSync(join(artifacts, log), { force: true });
  // PostgreSQL runs as the `postgres` account under root: its folder must be reachable by it (a folder of its
  // own under the OS temp folder, not inside a private one).
  const root = mkdtempSync(join(tmpdir(), 'errand-cluster-'));
  chmodSync(root, 0o755);
  let postgres: PostgresCluster | undefined;
  let server: TemporalServer | undefined;
  let code = 1;
  const stopAll = async () => {
    await server?.stop();
    await postgres?.stop();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    void stopAll().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const timings: Record<string, string> = {};
  try {
    const started = Date.now();
    let step = Date.now();
    postgres = await initPostgresCluster({ folder: join(root, 'postgres'), logFile: join(artifacts, 'postgres.log') });
    timings.postgres = seconds(step);
    say(`PostgreSQL cluster on 127.0.0.1:${postgres.port} (initdb and start: ${timings.postgres})`);

    step = Date.now();
    const databases = temporalDatabaseNames('temporal');
    await createTemporalDatabases(postgres, databases);
    timings.schema = seconds(step);
    say(`databases ${databases.main} and ${databases.visibility} with the release's schema (temporal-sql-tool: ${timings.schema})`);

    step = Date.now();
    server = await startTemporalServer({ postgres, databases, folder: join(root, 'server'), logFile: join(artifacts, 'temporal-server.log') });
    timings.server = seconds(step);
    say(`Temporal server on ${server.address} (start: ${timings.server})`);

    step = Date.now();
    const namespace = process.env[clusterEnvironmentKeys.namespace] || 'default';
    await prepareTemporalNamespace(server.address, namespace);
    timings.namespace = seconds(step);
    timings.startup = seconds(started);
    say(`namespace ${namespace} with errand's search attributes (${timings.namespace}); cluster ready in ${timings.startup}`);

    step = Date.now();
    code = await runVitest(files, vitestArgs, {
      ...process.env,
      [clusterEnvironmentKeys.address]: server.address,
      [clusterEnvironmentKeys.httpUrl]: server.httpUrl,
      [clusterEnvironmentKeys.namespace]: namespace,
      [clusterEnvironmentKeys.logFile]: server.logFile,
      [clusterEnvironmentKeys.postgres]: JSON.stringify({ host: postgres.host, port: postgres.port, user: postgres.user, password: postgres.password }),
    });
    timings.tests = seconds(step);
    say(`${files.length} test files on the cluster: ${code === 0 ? 'passed' : 'FAILED'} in ${timings.tests}`);
  } finally {
    const stopping = Date.now();
    await stopAll();
    timings.shutdown = seconds(stopping);
    writeFileSync(join(artifacts, 'timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
    if (code === 0) rmSync(root, { recursive: true, force: true });
    else say(`logs: ${artifacts}; the cluster's folder is kept for inspection: ${root}`);
  }
  return code;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { bundleWorkflows } from '../../scripts/bundle-workflows';
import { startDevServer, type DevServer } from '../../src/dev/temporal-dev-server';
import { ensureBuiltArtifacts } from './built-artifacts';
import { clusterEnvironmentKeys } from './cluster-environment';

/**
 * One real Temporal dev server per test run: random free ports, its SQLite file in a temp folder, the
 * project's search attributes registered. Its log is kept in test-artifacts/ (git-ignored) and its path
 * is printed by the summary reporter when a test fails.
 *
 * On a cluster instead: when {@link clusterEnvironmentKeys}.address is set (scripts/test-cluster.ts sets it for
 * `npm run test:cluster`), no dev server starts and every test file uses that running server, in the
 * namespace the script created (its search attributes registered there).
 */
let server: DevServer | undefined;
let dataDirectory: string | undefined;

/**
 * Test files and the worker processes they spawn find the server through these environment variables
 * (set here, before vitest forks its test processes, so every fork inherits them).
 */
export const testEnvironmentKeys = {
  address: 'ERRAND_TEST_TEMPORAL_ADDRESS',
  uiUrl: 'ERRAND_TEST_TEMPORAL_UI_URL',
  httpUrl: 'ERRAND_TEST_TEMPORAL_HTTP_URL',
  logFile: 'ERRAND_TEST_TEMPORAL_LOG',
  workflowBundle: 'ERRAND_TEST_WORKFLOW_BUNDLE',
  namespace: 'ERRAND_TEST_TEMPORAL_NAMESPACE',
} as const;

export async function setup(): Promise<void> {
  dataDirectory = mkdtempSync(join(tmpdir(), 'errand-test-temporal-'));
  const logFile = resolve(__dirname, '..', '..', 'test-artifacts', 'temporal-dev-server.log');
  rmSync(logFile, { force: true });
  const directory = dataDirectory;
  // Bundle the workflow code once per run, while the server starts, the way `npm run build` does; every
  // test worker (and the production-image test's image) loads this file.
  const bundlePath = join(directory, 'workflow-bundle.js');
  const bundling = bundleWorkflows(bundlePath).then(() => bundlePath);
  // The artifacts that process tests run (bin/errand.js over the CLI bundle, node dist/worker/main.js), rebuilt
  // here once when a source is newer (test/support/built-artifacts.ts); a failed build fails the run.
  const artifacts = ensureBuiltArtifacts({ worker: true }).then((built) => {
    if (built.length > 0) process.stdout.write(`built for this run: ${built.join(', ')}\n`);
  });
  artifacts.catch(() => undefined); // awaited below; this only keeps an early failure from being "unhandled"
  const clusterAddress = process.env[clusterEnvironmentKeys.address];
  if (clusterAddress) {
    const httpUrl = process.env[clusterEnvironmentKeys.httpUrl];
    if (!httpUrl) throw new Error(`${clusterEnvironmentKeys.address} is set but ${clusterEnvironmentKeys.httpUrl} is not: give the cluster's HTTP API too (http://host:port)`);
    process.env[testEnvironmentKeys.workflowBundle] = await bundling;
    await artifacts;
    process.env[testEnvironmentKeys.address] = clusterAddress;
    process.env[testEnvironmentKeys.uiUrl] = '';
    process.env[testEnvironmentKeys.httpUrl] = httpUrl;
    process.env[testEnvironmentKeys.namespace] = process.env[clusterEnvironmentKeys.namespace] || 'default';
    process.env[testEnvironmentKeys.logFile] = process.env[clusterEnvironmentKeys.logFile] ?? '';
    return;
  }
  server = await startDevServer({ dbFile: join(dataDirectory, 'temporal.sqlite'), logFile });
  process.env[testEnvironmentKeys.workflowBundle] = await bundling;
  await artifacts;
  process.env[testEnvironmentKeys.address] = server.address;
  process.env[testEnvironmentKeys.uiUrl] = server.uiUrl ?? '';
  process.env[testEnvironmentKeys.httpUrl] = server.httpUrl;
  process.env[testEnvironmentKeys.logFile] = logFile;
}

export async function teardown(): Promise<void> {
  await server?.stop();
  if (dataDirectory) rmSync(dataDirectory, { recursive: true, force: true });
}

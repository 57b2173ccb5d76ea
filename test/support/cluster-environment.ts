/**
 * The settings that run the Temporal tests on an already running cluster instead of the run's dev server
 * (test/support/global-setup.ts reads them). scripts/test-cluster.ts sets them for `npm run test:cluster`;
 * they can also point a run at a cluster started by hand.
 */
export const clusterEnvironmentKeys = {
  /** `host:port` of the cluster's frontend: set, the run uses it and starts no dev server. */
  address: 'ERRAND_TEST_CLUSTER_ADDRESS',
  /** Its HTTP API (`http://host:port`); required with the address. */
  httpUrl: 'ERRAND_TEST_CLUSTER_HTTP_URL',
  /** Namespace with errand's search attributes (default `default`). */
  namespace: 'ERRAND_TEST_CLUSTER_NAMESPACE',
  /** The server's log file, printed when a test fails (optional). */
  logFile: 'ERRAND_TEST_CLUSTER_LOG',
  /**
   * The cluster's PostgreSQL as JSON `{ host, port, user, password }`: tests that need a server of their own
   * (to restart it, or with other dynamic config) start one on databases of their own there (optional).
   */
  postgres: 'ERRAND_TEST_CLUSTER_POSTGRES',
} as const;

import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { temporalDatabaseNames, temporalDynamicConfig, temporalServerConfig, type TemporalServerPorts } from '../../src/dev/temporal-cluster';

/**
 * The files `npm run test:cluster` gives the self-hosted Temporal server (src/dev/temporal-cluster.ts): the
 * server's config names the PostgreSQL databases, every service's ports and the dynamic config file, and the
 * dynamic config file has Temporal's shape (each key a list of constrained values). The run itself
 * (scripts/test-cluster.ts) shows that the server accepts them.
 */

const ports: TemporalServerPorts = {
  frontend: 17233,
  frontendHttp: 17243,
  frontendMembership: 16933,
  history: 17234,
  historyMembership: 16934,
  matching: 17235,
  matchingMembership: 16935,
  worker: 17239,
  workerMembership: 16939,
  metrics: 18000,
};

describe('temporal cluster config', () => {
  test('the server config points both stores at the cluster\'s PostgreSQL and every service at its ports', () => {
    const yaml = temporalServerConfig({
      postgres: { host: '127.0.0.1', port: 25432, user: 'temporal', password: 'secret' },
      databases: temporalDatabaseNames('temporal'),
      ports,
      dynamicConfigFile: 'dynamic-config.yaml',
      historyShards: 4,
    });
    const config = parse(yaml) as {
      persistence: { defaultStore: string; visibilityStore: string; numHistoryShards: number; datastores: Record<string, { sql: { pluginName: string; databaseName: string; connectAddr: string; user: string; password: string } }> };
      services: Record<string, { rpc: { grpcPort: number; membershipPort: number; httpPort?: number } }>;
      clusterMetadata: { clusterInformation: { active: { rpcAddress: string } } };
      dynamicConfigClient: { filepath: string };
    };
    const stores = config.persistence.datastores;
    expect(stores[config.persistence.defaultStore]?.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal', connectAddr: '127.0.0.1:25432', user: 'temporal', password: 'secret' });
    expect(stores[config.persistence.visibilityStore]?.sql).toMatchObject({ pluginName: 'postgres12', databaseName: 'temporal_visibility' });
    expect(config.persistence.numHistoryShards).toBe(4);
    expect(config.services.frontend?.rpc).toEqual({ grpcPort: 17233, membershipPort: 16933, bindOnLocalHost: true, httpPort: 17243 });
    expect(Object.keys(config.services).sort()).toEqual(['frontend', 'history', 'matching', 'worker']);
    expect(config.clusterMetadata.clusterInformation.active.rpcAddress).toBe('127.0.0.1:17233');
    expect(config.dynamicConfigClient.filepath).toBe('dynamic-config.yaml');
  });

  test('dynamic config values get Temporal\'s list-of-values shape', () => {
    expect(parse(temporalDynamicConfig({ 'limit.historyCount.suggestContinueAsNew': 60 }))).toEqual({
      'limit.historyCount.suggestContinueAsNew': [{ value: 60, constraints: {} }],
    });
  });

  test('a database name that PostgreSQL would need quoted is refused, naming what is valid', () => {
    expect(temporalDatabaseNames('restart_ab12').visibility).toBe('restart_ab12_visibility');
    expect(() => temporalDatabaseNames('Restart-1')).toThrow(/"Restart-1" is not valid: use 1-41 lower-case letters, digits or _/);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError as ClientConfigError, loadClientConfig } from '../../src/settings/client-config';
import { ConfigError, loadConfig } from '../../src/settings/config';

/** The client settings (client-config.ts) are the full configuration's, read without the worker's parts. */

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function scratch(): string {
  const folder = mkdtempSync(join(tmpdir(), 'errand-client-config-'));
  folders.push(folder);
  return folder;
}

function configFile(folder: string, content: unknown): string {
  const path = join(folder, 'errand.json');
  writeFileSync(path, JSON.stringify(content));
  return path;
}

describe('client configuration', () => {
  it('resolves Temporal and the data directory exactly as the full configuration does', () => {
    const folder = scratch();
    const file = configFile(folder, { temporal: { address: 'temporal.internal:7233', namespace: 'team', taskQueue: 'q', httpUrl: 'http://temporal.internal:7243/' }, dataDir: 'state' });
    const env = { HOME: folder, ERRAND_CONFIG: file };
    const client = loadClientConfig(env, folder);
    const full = loadConfig(env, folder);
    expect(client.temporal).toEqual(full.temporal);
    expect(client.dataDir).toBe(full.dataDir);
    expect(client).toEqual({
      temporal: {
        address: 'temporal.internal:7233',
        namespace: 'team',
        taskQueue: 'q',
        connection: { address: 'temporal.internal:7233' },
        summary: 'temporal.internal:7233 (namespace team, plaintext, no credentials)',
        httpUrl: 'http://temporal.internal:7243',
      },
      dataDir: join(folder, 'state'),
    });
    const fromEnv = { HOME: folder, ERRAND_CONFIG: file, ERRAND_TEMPORAL_NAMESPACE: 'other', ERRAND_TASK_QUEUE: 'env-q', ERRAND_DATA_DIR: '/srv/errand' };
    expect(loadClientConfig(fromEnv, folder).temporal).toEqual(loadConfig(fromEnv, folder).temporal);
    expect(loadClientConfig(fromEnv, folder).dataDir).toBe('/srv/errand');
  });

  it('fails on a bad client setting with the same error as the full configuration', () => {
    const folder = scratch();
    const cases: NodeJS.ProcessEnv[] = [
      { HOME: folder, ERRAND_TEMPORAL_ADDRESS: 'http://localhost:7233' },
      { HOME: folder, ERRAND_TEMPORAL_HTTP_URL: 'ftp://localhost:7243' },
      { HOME: folder, ERRAND_CONFIG: join(folder, 'missing.json') },
      { HOME: folder, ERRAND_CONFIG: configFile(folder, { temporal: { address: '' }, dataDir: '' }) },
    ];
    for (const env of cases) {
      const full = (() => {
        try {
          loadConfig(env, folder);
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(full).toBeInstanceOf(ConfigError);
      expect(() => loadClientConfig(env, folder)).toThrow(ClientConfigError);
      expect(() => loadClientConfig(env, folder)).toThrow((full as Error).message);
    }
  });

  it('leaves the worker settings to the full configuration', () => {
    const folder = scratch();
    const env = { HOME: folder, ERRAND_CONFIG: configFile(folder, { dataDir: 'state', toolPolicy: { default: 'sometimes' } }), ERRAND_SANDBOX: 'docker' };
    expect(loadClientConfig(env, folder).dataDir).toBe(join(folder, 'state'));
    expect(() => loadConfig(env, folder)).toThrow(/invalid configuration file\n.*toolPolicy/);
  });
});

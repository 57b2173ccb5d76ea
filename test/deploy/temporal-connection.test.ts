import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { describe, expect, test } from 'vitest';
import { loadSecretsIntoEnv } from '../../infra/lambda/api-handler';
import { temporalConnectionOptions } from '../../src/temporal/temporal-connection';
import { temporalAddress } from '../support/temporal';

/**
 * Connecting to a real cluster: settings from Temporal's environment configuration (TOML profile +
 * TEMPORAL_* variables), each missing or inconsistent piece named at start; and the deployed API's
 * secret loading.
 */

const pem = (label: string) => `-----BEGIN ${label}-----\nMIIBfake\n-----END ${label}-----\n`;
const isolated = { HOME: mkdtempSync(join(tmpdir(), 'errand-home-')) };

describe('temporalConnectionOptions', () => {
  test('nothing configured: the local dev server, plaintext', () => {
    const settings = temporalConnectionOptions(isolated);
    expect(settings.connection).toEqual({ address: '127.0.0.1:7233' });
    expect(settings.namespace).toBe('default');
  });

  test('Temporal Cloud with an API key: TLS on, key passed, summary without the secret', () => {
    const settings = temporalConnectionOptions({ ...isolated, TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct', TEMPORAL_API_KEY: 'sekret' });
    expect(settings.connection).toEqual({ address: 'ns.acct.tmprl.cloud:7233', tls: true, apiKey: 'sekret' });
    expect(settings.namespace).toBe('ns.acct');
    expect(settings.summary).not.toContain('sekret');
    expect(settings.summary).toContain('API key');
  });

  test('mTLS from a temporal CLI profile (TOML), cert and key from files', () => {
    const folder = mkdtempSync(join(tmpdir(), 'errand-profile-'));
    writeFileSync(join(folder, 'client.pem'), pem('CERTIFICATE'));
    writeFileSync(join(folder, 'client.key'), pem('PRIVATE KEY'));
    const file = join(folder, 'temporal.toml');
    writeFileSync(file, `[profile.prod]\naddress = "temporal.internal:7233"\nnamespace = "errand"\n[profile.prod.tls]\nclient_cert_path = "${join(folder, 'client.pem')}"\nclient_key_path = "${join(folder, 'client.key')}"\nserver_name = "temporal.internal"\n`);
    const settings = temporalConnectionOptions({ ...isolated, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' });
    expect(settings.connection.address).toBe('temporal.internal:7233');
    expect(settings.namespace).toBe('errand');
    const tls = settings.connection.tls;
    expect(tls === true || tls === undefined ? undefined : Buffer.from(tls.clientCertPair?.crt ?? []).toString()).toContain('BEGIN CERTIFICATE');
    expect(tls === true ? undefined : tls?.serverNameOverride).toBe('temporal.internal');
    // ERRAND_TEMPORAL_ADDRESS still wins over the profile.
    expect(temporalConnectionOptions({ ...isolated, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod', ERRAND_TEMPORAL_ADDRESS: 'other:7233' }).connection.address).toBe('other:7233');
  });

  test('each missing or inconsistent piece is named', () => {
    const cases: [NodeJS.ProcessEnv, RegExp][] = [
      [{ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_NAMESPACE: 'ns.acct' }, /Temporal Cloud, which needs credentials: set TEMPORAL_API_KEY/],
      [{ TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233', TEMPORAL_API_KEY: 'k' }, /set TEMPORAL_NAMESPACE/],
      [{ TEMPORAL_API_KEY: 'k' }, /credentials are configured .* but no address: set TEMPORAL_ADDRESS/],
      [{ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_TLS_CLIENT_CERT_DATA: pem('CERTIFICATE') }, /private key is missing: set TEMPORAL_TLS_CLIENT_KEY_PATH or TEMPORAL_TLS_CLIENT_KEY_DATA/],
      [{ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_TLS_CLIENT_KEY_DATA: pem('PRIVATE KEY') }, /certificate is missing: set TEMPORAL_TLS_CLIENT_CERT_PATH/],
      [{ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_TLS_CLIENT_CERT_PATH: '/nonexistent/c.pem', TEMPORAL_TLS_CLIENT_KEY_DATA: pem('PRIVATE KEY') }, /TEMPORAL_TLS_CLIENT_CERT_PATH names \/nonexistent\/c.pem, which does not exist/],
      [{ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_TLS_CLIENT_CERT_DATA: 'not pem', TEMPORAL_TLS_CLIENT_KEY_DATA: pem('PRIVATE KEY') }, /TEMPORAL_TLS_CLIENT_CERT_DATA is not PEM/],
      [{ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }, /TLS is turned off \(TEMPORAL_TLS\) but an API key is configured/],
      [{ TEMPORAL_ADDRESS: 'https://x:7233' }, /TEMPORAL_ADDRESS="https:\/\/x:7233" is not a Temporal address/],
      [{ TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' }, /TEMPORAL_CONFIG_FILE names \/nonexistent\/temporal.toml, which does not exist/],
    ];
    for (const [env, message] of cases) expect(() => temporalConnectionOptions({ ...isolated, ...env }), JSON.stringify(env)).toThrow(message);
  });

  test('the same options connect a client and a worker connection to the dev server', async () => {
    const settings = temporalConnectionOptions({ ...isolated, TEMPORAL_ADDRESS: temporalAddress() });
    const client = await Connection.connect(settings.connection);
    const native = await NativeConnection.connect(settings.connection);
    try {
      await client.workflowService.getSystemInfo({});
    } finally {
      await client.close();
      await native.close();
    }
  });
});

describe('the deployed API loads its secrets at cold start', () => {
  test('whole secrets and JSON fields land in the environment; a missing field is named', async () => {
    const env: NodeJS.ProcessEnv = {
      ERRAND_SECRET_ENV: JSON.stringify({ ERRAND_API_KEYS: { secretId: 'arn:keys' }, TEMPORAL_API_KEY: { secretId: 'arn:temporal', jsonKey: 'apiKey' } }),
    };
    const secrets: Record<string, string> = { 'arn:keys': '[{"tenant":"t","sha256":"00"}]', 'arn:temporal': '{"apiKey":"k-123"}' };
    await loadSecretsIntoEnv(env, async (secretId) => secrets[secretId] ?? '');
    expect(env.ERRAND_API_KEYS).toBe(secrets['arn:keys']);
    expect(env.TEMPORAL_API_KEY).toBe('k-123');
    secrets['arn:temporal'] = '{"other":"x"}';
    await expect(loadSecretsIntoEnv(env, async (secretId) => secrets[secretId] ?? '')).rejects.toThrow(/arn:temporal for TEMPORAL_API_KEY has no non-empty string field "apiKey"/);
  });
});

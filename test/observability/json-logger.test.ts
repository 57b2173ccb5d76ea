import { Runtime } from '@temporalio/worker';
import { describe, expect, test } from 'vitest';
import {
  configureLogging,
  createLogger,
  formatLogLine,
  logLevelFromEnvironment,
  providerApiKeys,
  redact,
  secretsFromEnvironment,
} from '../../src/observability/json-logger';
import { installLogging } from '../../src/observability/logging';

/** The JSON-lines format and the redaction rules, without a server. */

describe('redact', () => {
  test('values of secret-looking keys are replaced, at any depth', () => {
    expect(redact({ apiKey: 'abc', headers: { Authorization: 'Bearer x', accept: 'json' }, taskToken: 'tt', password: 'p', clientSecret: 's', sessionToken: 't' })).toEqual({
      apiKey: '[redacted]',
      headers: { Authorization: '[redacted]', accept: 'json' },
      taskToken: '[redacted]',
      password: '[redacted]',
      clientSecret: '[redacted]',
      sessionToken: '[redacted]',
    });
  });

  test('a configured secret is replaced where a value equals it or contains it', () => {
    const secret = 'sk-live-123456789';
    expect(redact({ value: secret, list: ['ok', secret], text: `header was Bearer ${secret}.` }, [secret])).toEqual({
      value: '[redacted]',
      list: ['ok', '[redacted]'],
      text: 'header was Bearer [redacted].',
    });
  });

  test('a short secret is redacted only where a value equals it, so ordinary words survive', () => {
    expect(redact({ a: 'abc', b: 'abcdef and abc' }, ['abc'])).toEqual({ a: '[redacted]', b: 'abcdef and abc' });
  });

  test('errors become plain objects whose message and stack are redacted', () => {
    const error = Object.assign(new Error('rejected key sk-live-123456789'), { type: 'ModelRequestRejected' });
    const result = redact({ error }, ['sk-live-123456789']) as { error: Record<string, unknown> };
    expect(result.error.name).toBe('Error');
    expect(result.error.message).toBe('rejected key [redacted]');
    expect(result.error.type).toBe('ModelRequestRejected');
    expect(String(result.error.stack)).not.toContain('sk-live-123456789');
  });

  test('bigints, dates, cycles and deep nesting are made JSON-safe', () => {
    const cyclic: Record<string, unknown> = { n: 1n, at: new Date(0) };
    cyclic.self = cyclic;
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let level = 0; level < 20; level += 1) deep = deep.next = {};
    const result = redact({ cyclic, root }) as { cyclic: Record<string, unknown>; root: unknown };
    expect(result.cyclic).toEqual({ n: '1', at: '1970-01-01T00:00:00.000Z', self: '[circular]' });
    expect(JSON.stringify(result.root)).toContain('[nested too deep]');
  });
});

describe('log lines', () => {
  test('one JSON object per line: time, level, message, then the meta fields', () => {
    const line = formatLogLine('INFO', 'Activity completed', { workflowId: 'errand-1', activityType: 'modelTurn', message: 'clash', [Symbol.for('log_timestamp')]: 1n }, [], new Date(0));
    expect(line.endsWith('\n')).toBe(true);
    expect(line.trimEnd()).not.toContain('\n');
    expect(JSON.parse(line)).toEqual({
      time: '1970-01-01T00:00:00.000Z',
      level: 'INFO',
      message: 'Activity completed',
      workflowId: 'errand-1',
      activityType: 'modelTurn',
      'meta.message': 'clash',
    });
  });

  test('createLogger writes through the configured destination, with the component and level filter', () => {
    const written: string[] = [];
    configureLogging({ level: 'WARN', destination: (line) => written.push(line), secrets: ['my-secret-value'], secretsFromEnvironment: false });
    const logger = createLogger('api').child({ requestId: 'r1' });
    logger.info('dropped below WARN');
    logger.warn('slow request', { detail: 'used my-secret-value' });
    expect(written).toHaveLength(1);
    expect(JSON.parse(written[0] ?? '')).toMatchObject({ level: 'WARN', message: 'slow request', component: 'api', requestId: 'r1', detail: 'used [redacted]' });
  });

  test('ERRAND_LOG_LEVEL sets the level; unset means INFO; a wrong value names the setting', () => {
    expect(logLevelFromEnvironment({})).toBe('INFO');
    expect(logLevelFromEnvironment({ ERRAND_LOG_LEVEL: 'warn' })).toBe('WARN');
    expect(() => logLevelFromEnvironment({ ERRAND_LOG_LEVEL: 'loud' })).toThrow(/ERRAND_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR \(got "loud"\)/);
  });

  test('secrets come from secret-looking variable names and from the providers configuration', () => {
    expect(secretsFromEnvironment({ OPENAI_API_KEY: 'k1', GITHUB_TOKEN: 't1', PATH: '/bin', EMPTY_SECRET: '' }).sort()).toEqual(['k1', 't1']);
    const providers = [
      { name: 'a', kind: 'openai-compatible' as const, baseUrl: 'http://localhost/v1', apiKeyEnv: 'LLM_CREDENTIAL', models: ['m'] },
      { name: 'b', kind: 'anthropic' as const, models: ['m'] },
      { name: 'c', kind: 'openai-compatible' as const, baseUrl: 'http://localhost/v1', models: ['m'] },
    ];
    expect(providerApiKeys(providers, { LLM_CREDENTIAL: 'c1', ANTHROPIC_API_KEY: 'a1' })).toEqual(['c1', 'a1']);
  });
});

describe('installLogging', () => {
  test('installs the SDK runtime once; its logger writes errand lines; a second call only reconfigures', async () => {
    const written: string[] = [];
    const runtime = installLogging({ level: 'INFO', destination: (line) => written.push(line), secretsFromEnvironment: false });
    expect(installLogging({ level: 'INFO', destination: (line) => written.push(line), secrets: ['tok-123456'], secretsFromEnvironment: false })).toBe(runtime);
    expect(Runtime.instance()).toBe(runtime);
    runtime.logger.info('from the sdk', { workflowId: 'errand-9', runId: 'run-1', value: 'tok-123456' });
    runtime.logger.debug('below the level');
    // The SDK buffers entries briefly to order them by time.
    const deadline = Date.now() + 5_000;
    while (written.length === 0 && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    expect(written).toHaveLength(1);
    expect(JSON.parse(written[0] ?? '')).toMatchObject({ level: 'INFO', message: 'from the sdk', workflowId: 'errand-9', runId: 'run-1', value: '[redacted]' });
  });
});

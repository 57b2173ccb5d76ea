import { afterAll, beforeAll, expect, it } from 'vitest';
import { createApp } from '../../src/api/app';
import { createApiDependencies } from '../../src/api/default-dependencies';
import { fixedTemporalClient } from '../../src/api/temporal-client-provider';
import { createCliContext } from '../../src/cli/cli-context';
import { devCommand } from '../../src/cli/stack-commands';
import { configureLogging } from '../../src/observability/json-logger';
import { testClient } from '../support/temporal';
import type { Client, Connection } from '@temporalio/client';

/**
 * A fault inside the API: the client gets a 500 with no stack and no server path; the stack goes to the
 * redacting JSON logger, not raw to stderr. And `errand dev` will not serve without keys beyond loopback.
 */

const lines: string[] = [];
let client: Client;
let connection: Connection;
beforeAll(async () => {
  configureLogging({ destination: (line: string) => lines.push(line), level: 'INFO', secrets: ['super-secret-value-123'], secretsFromEnvironment: false });
  ({ client, connection } = await testClient());
});
afterAll(async () => {
  configureLogging({});
  await connection?.close();
});

it('answers a fault with a bare 500 and logs its stack through the redacting logger', async () => {
  const deps = createApiDependencies({ env: { ERRAND_API_AUTH: 'off', ERRAND_WORKING_DIR: '/srv/errand/work', ERRAND_PROVIDERS: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: ['scripted-model'] }]) }, cwd: '/srv', temporal: fixedTemporalClient(client) });
  const app = createApp({
    ...deps,
    plan: () => Promise.reject(new Error('cannot open /srv/errand/state/blobs/x with token super-secret-value-123')),
  });
  const stderr: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  let response: Response;
  try {
    response = await app.request('/v1/delegations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ instructions: 'x' }) });
  } finally {
    process.stderr.write = write;
  }
  expect(response.status).toBe(500);
  const body = await response.text();
  expect(JSON.parse(body)).toEqual({ type: 'urn:errand:problem:internal-error', title: 'Internal server error', status: 500, detail: 'the server failed to answer; the failure was logged', instance: '/v1/delegations' });
  expect(stderr.join('')).not.toContain('/srv/errand');
  const logged = lines.map((line) => JSON.parse(line) as { message: string; error?: { message: string; stack?: string } }).find((entry) => entry.message === 'request failed');
  expect(logged?.error?.message).toContain('/srv/errand/state/blobs/x');
  expect(logged?.error?.stack).toContain('error-answers.test.ts');
  expect(lines.join('\n')).not.toContain('super-secret-value-123');
});

it('answers a session route of an API built without sessions with 503 not-available-here, not a Temporal outage', async () => {
  const deps = createApiDependencies({ env: { ERRAND_API_AUTH: 'off', ERRAND_WORKING_DIR: '/srv/errand/work', ERRAND_PROVIDERS: JSON.stringify([{ name: 'scripted', kind: 'scripted', models: ['scripted-model'] }]) }, cwd: '/srv', temporal: fixedTemporalClient(client) });
  const { sessions: _sessions, ...withoutSessions } = deps;
  const app = createApp(withoutSessions);
  const response = await app.request('/v1/sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'hello' }) });
  expect(response.status).toBe(503);
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  const problem = (await response.json()) as { type: string; title: string; detail: string };
  expect(problem.type).toBe('urn:errand:problem:not-available-here');
  expect(problem.title).toBe('Sessions are not available in this deployment');
  expect(problem.detail).toContain('/v1/delegations');
});

it('errand dev refuses --host 0.0.0.0 without API keys, before starting anything', async () => {
  const output: string[] = [];
  const io = { stdout: (text: string) => void output.push(text), stderr: (text: string) => void output.push(text), interactive: false };
  const context = createCliContext(io, { HOME: '/nonexistent-home' }, process.cwd());
  await expect(devCommand(['--host', '0.0.0.0', '--headless'], context)).rejects.toThrow(/--host=0.0.0.0 would serve the API without authentication to other machines; authentication may be off only on a loopback address/);
  expect(output.join('')).not.toContain('starting the Temporal dev server');
});

import { afterAll, beforeAll, expect, it } from 'vitest';
import { configureLogging } from '../../src/observability/json-logger';
import { json, keys, postJson, startApiStack, type ApiStack } from './api-harness';

/** The API writes one JSON line per request, with the workflow it touched, and never an API key. */

const lines: string[] = [];
let stack: ApiStack;
beforeAll(async () => {
  configureLogging({ destination: (line: string) => lines.push(line), level: 'INFO' });
  stack = await startApiStack();
});
afterAll(async () => {
  configureLogging({});
  await stack?.stop();
});

it('logs method, path, status, tenant and workflow id as JSON, and no key', async () => {
  const started = await stack.request('/v1/delegations?wait=15s', postJson({ instructions: 'say something for the log' }));
  const { id } = (await json(started)) as { id: string };
  await stack.request(`/v1/delegations/${encodeURIComponent(id)}`);
  await stack.request('/v1/delegations', { key: 'not-a-real-key' });
  const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const get = entries.find((entry) => entry.message === 'request' && entry.method === 'GET' && entry.workflowId === id);
  expect(get).toMatchObject({ component: 'api', status: 200, tenant: 'acme', level: 'INFO' });
  expect(entries.some((entry) => entry.status === 401)).toBe(true);
  const all = lines.join('\n');
  expect(all).not.toContain(keys.acme);
  expect(all).not.toContain('not-a-real-key');
});

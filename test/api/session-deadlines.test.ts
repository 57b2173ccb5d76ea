import { afterAll, beforeAll, expect, it } from 'vitest';
import { json, postJson, startApiStack, type ApiStack } from './api-harness';

/**
 * Reads of sessions are answered by a worker (queries), which may be absent: `GET /v1/sessions/{id}` waits
 * for it within a deadline, as a delegation's peek does, and then says so (503) instead of hanging.
 */

let stack: ApiStack;
beforeAll(async () => {
  stack = await startApiStack({ withoutWorker: true });
});
afterAll(async () => {
  await stack?.stop();
});

it('answers 503 "the session did not answer" when no worker answers its queries, and still serves', async () => {
  const started = await stack.request('/v1/sessions', postJson({ label: 'nobody runs me' }));
  expect(started.status).toBe(201);
  const { id } = (await json(started)) as { id: string };
  const read = await stack.request(`/v1/sessions/${encodeURIComponent(id)}`);
  expect(read.status).toBe(503);
  expect(read.headers.get('retry-after')).toBe('5');
  expect(await json(read)).toMatchObject({ type: 'urn:errand:problem:temporal-unavailable', title: 'The session did not answer', detail: expect.stringContaining(id) });
  expect((await stack.request('/v1/approvals')).status).toBe(200);
  await stack.client.workflow.getHandle(id).terminate('test over');
});

import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json, keys, postJson, startApiStack, type ApiStack } from './api-harness';

/** Sessions and approvals over real HTTP: start a session, message it, read it; list and decide approvals. */

let stack: ApiStack;
beforeAll(async () => {
  stack = await startApiStack({ extraEnv: { ERRAND_TOOL_POLICY: JSON.stringify({ default: 'allow', rules: { developer__write_file: 'ask' } }), ERRAND_MAX_QUEUED_MESSAGES: '2' } });
});
afterAll(async () => {
  await stack?.stop();
});

async function transcriptOf(id: string, key: string = keys.acme): Promise<Record<string, unknown>> {
  return json(await stack.request(`/v1/sessions/${encodeURIComponent(id)}`, { key }));
}

function replies(body: Record<string, unknown>): string[] {
  const transcript = body.transcript as { entries: { role: string; text: string }[] };
  return transcript.entries.filter((entry) => entry.role === 'assistant').map((entry) => entry.text);
}

describe('sessions', () => {
  it('starts a session with a first message, takes more messages, and shows the transcript; other tenants get 404', async () => {
    const started = await stack.request('/v1/sessions', postJson({ label: 'api session', message: 'hello there' }));
    expect(started.status).toBe(201);
    const { id } = (await json(started)) as { id: string };
    expect(id).toMatch(/^errand-[0-9a-f]{16}$/);
    await eventually(async () => (replies(await transcriptOf(id)).length === 1 ? true : undefined));
    const sent = await stack.request(`/v1/sessions/${encodeURIComponent(id)}/messages`, postJson({ message: 'and again' }));
    expect(sent.status).toBe(202);
    await eventually(async () => (replies(await transcriptOf(id)).length === 2 ? true : undefined));
    expect(replies(await transcriptOf(id))).toEqual(['done: hello there', 'done: hello there']);
    expect((await stack.request(`/v1/sessions/${encodeURIComponent(id)}`, { key: keys.globex })).status).toBe(404);
    expect((await stack.request(`/v1/sessions/${encodeURIComponent(id)}/messages`, postJson({ message: 'x' }, { key: keys.globex }))).status).toBe(404);
    const empty = await stack.request(`/v1/sessions/${encodeURIComponent(id)}/messages`, postJson({ message: '' }));
    expect(empty.status).toBe(400);
    await stack.client.workflow.getHandle(id).cancel();
  });

  it('takes an Idempotency-Key on a start and on a message: a retry is the same session, and the message is queued once', async () => {
    const start = (body: unknown, key: string, tenantKey: string = keys.acme) => stack.request('/v1/sessions', postJson(body, { key: tenantKey, headers: { 'idempotency-key': key } }));
    const startKey = `start-${randomUUID()}`;
    const first = await start({ label: 'keyed', message: 'hello keyed' }, startKey);
    expect(first.status).toBe(201);
    const { id, created } = (await json(first)) as { id: string; created: boolean };
    expect(created).toBe(true);
    const retried = await start({ label: 'keyed', message: 'hello keyed' }, startKey);
    expect(retried.status).toBe(200);
    expect(await json(retried)).toMatchObject({ id, created: false });
    const reused = await start({ label: 'another body' }, startKey);
    expect(reused.status).toBe(422);
    expect(await json(reused)).toMatchObject({ errors: [{ in: 'header', field: 'Idempotency-Key' }] });
    // Another tenant's equal key is another session.
    const theirs = await start({ label: 'keyed' }, startKey, keys.globex);
    expect(theirs.status).toBe(201);
    const theirId = ((await json(theirs)) as { id: string }).id;
    expect(theirId).not.toBe(id);
    await eventually(async () => (replies(await transcriptOf(id)).length === 1 ? true : undefined));
    const messageKey = `message-${randomUUID()}`;
    const send = () => stack.request(`/v1/sessions/${encodeURIComponent(id)}/messages`, postJson({ message: 'only once' }, { headers: { 'idempotency-key': messageKey } }));
    expect((await send()).status).toBe(202);
    expect((await send()).status).toBe(202);
    await eventually(async () => (replies(await transcriptOf(id)).length === 2 ? true : undefined));
    const users = ((await transcriptOf(id)).transcript as { entries: { role: string; text: string }[] }).entries.filter((entry) => entry.role === 'user').map((entry) => entry.text);
    expect(users).toEqual(['hello keyed', 'only once']);
    await stack.client.workflow.getHandle(id).cancel();
    await stack.client.workflow.getHandle(theirId).cancel();
  });

  it('queues messages behind a running turn up to ERRAND_MAX_QUEUED_MESSAGES, then answers 429 naming the limit', async () => {
    const started = await stack.request('/v1/sessions', postJson({ label: 'busy', message: 'slow please' }));
    const { id } = (await json(started)) as { id: string };
    const path = `/v1/sessions/${encodeURIComponent(id)}`;
    await eventually(async () => (((await transcriptOf(id)).transcript as { state: string }).state === 'running' ? true : undefined));
    const first = await stack.request(`${path}/messages`, postJson({ message: 'one' }));
    expect(first.status).toBe(202);
    expect(await json(first)).toMatchObject({ queuedTurns: 1 });
    expect((await stack.request(`${path}/messages`, postJson({ message: 'two' }))).status).toBe(202);
    const refused = await stack.request(`${path}/messages`, postJson({ message: 'three' }));
    expect(refused.status).toBe(429);
    const problem = (await json(refused)) as { type: string; detail: string };
    expect(problem.type).toContain('limit-exceeded');
    expect(problem.detail).toContain('2 messages are already queued; the limit is 2 (ERRAND_MAX_QUEUED_MESSAGES)');
    expect(((await transcriptOf(id)).transcript as { queuedMessages: number }).queuedMessages).toBe(2);
    await stack.client.workflow.getHandle(id).cancel();
  });

  it('cancels a session: 202, then it ends cancelled and takes no more messages; other tenants get 404', async () => {
    const started = await stack.request('/v1/sessions', postJson({ label: 'to cancel', message: 'hello' }));
    const { id } = (await json(started)) as { id: string };
    const path = `/v1/sessions/${encodeURIComponent(id)}`;
    await eventually(async () => (replies(await transcriptOf(id)).length === 1 ? true : undefined));
    expect((await stack.request(`${path}/cancel`, postJson({}, { key: keys.globex }))).status).toBe(404);
    const cancelled = await stack.request(`${path}/cancel`, postJson({ reason: 'done for today' }));
    expect(cancelled.status).toBe(202);
    expect(await json(cancelled)).toEqual({ id, cancelling: true });
    const result = (await stack.client.workflow.getHandle(id).result()) as { status: string; diagnostic?: string };
    expect(result.status).toBe('cancelled');
    expect(result.diagnostic).toBe('done for today');
    expect((await stack.request(`${path}/cancel`, postJson({}))).status).toBe(409);
    expect((await stack.request(`${path}/messages`, postJson({ message: 'still there?' }))).status).toBe(409);
  });
});

describe('approvals', () => {
  it('lists a pending tool call and approves it through the API; the tool then runs; other tenants see nothing', async () => {
    const start = await stack.request('/v1/delegations', postJson({ instructions: 'write a file please' }));
    expect(start.status).toBe(201);
    const { id } = (await json(start)) as { id: string };
    type Approval = { id: string; workflowId: string; tool: string; argumentsPreview: string };
    const pending = await eventually(async () => {
      const body = (await json(await stack.request('/v1/approvals'))) as { approvals: Approval[] };
      return body.approvals.find((approval) => approval.workflowId === id);
    }, 20_000);
    expect(pending.tool).toBe('developer__write_file');
    expect(pending.argumentsPreview).toContain('from-api.txt');
    // The delegation's own status shows the wait and the pending call (M2).
    const status = (await json(await stack.request(`/v1/delegations/${encodeURIComponent(id)}`))) as { state: string; peek: { state: string; pendingApprovals?: Approval[]; elapsedMs?: number } | null; peekError?: string };
    expect(status.peekError).toBeUndefined();
    expect(status.state).toBe('waiting_approval');
    expect(status.peek?.state).toBe('waiting_approval');
    expect(status.peek?.pendingApprovals?.map((approval) => approval.id)).toEqual([pending.id]);
    expect(status.peek?.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(existsSync(join(stack.workDir, 'acme', 'from-api.txt'))).toBe(false);
    const foreign = (await json(await stack.request('/v1/approvals', { key: keys.globex }))) as { approvals: Approval[] };
    expect(foreign.approvals.some((approval) => approval.workflowId === id)).toBe(false);
    const path = `/v1/approvals/${encodeURIComponent(pending.id)}`;
    expect((await stack.request(path, postJson({ decision: 'approve' }, { key: keys.globex }))).status).toBe(404);
    expect((await stack.request(path, postJson({ decision: 'maybe' }))).status).toBe(400);
    const decided = await stack.request(path, postJson({ decision: 'approve', reason: 'looks fine' }));
    expect(decided.status).toBe(200);
    const result = (await json(await stack.request(`/v1/delegations/${encodeURIComponent(id)}/result?wait=15s`))) as { result: { status: string } };
    expect(result.result.status).toBe('completed');
    // Tenant acme's delegations work in <working root>/acme, made by the worker on first use.
    expect(readFileSync(join(stack.workDir, 'acme', 'from-api.txt'), 'utf8')).toBe('written via the API');
    expect((await stack.request(path, postJson({ decision: 'approve' }))).status).toBe(409);
  });
});

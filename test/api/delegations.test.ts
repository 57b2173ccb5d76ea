import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpTransport } from '../../src/cli/api-transport';
import { defaultMaxQueuedMessages } from '../../src/contracts/limits/workflow';
import type { CliContext } from '../../src/cli/cli-context';
import { delegateCommand, resultCommand } from '../../src/cli/delegation-commands';
import { eventually, json, keys, listItems, postJson, startApiStack, type ApiStack } from './api-harness';

/** Every /v1/delegations route over real HTTP: Node server, dev server, in-process worker, scripted model. */

let stack: ApiStack;
beforeAll(async () => {
  stack = await startApiStack();
});
afterAll(async () => {
  await stack?.stop();
});

const path = (id: string, suffix = '') => `/v1/delegations/${encodeURIComponent(id)}${suffix}`;

async function start(body: Record<string, unknown>, query = '', headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown>; response: Response }> {
  const response = await stack.request(`/v1/delegations${query}`, postJson(body, { headers }));
  return { status: response.status, body: await json(response), response };
}

async function waitForTurn(id: string): Promise<Record<string, unknown>> {
  return eventually(async () => {
    const body = await json(await stack.request(path(id)));
    const peek = body.peek;
    return typeof peek === 'object' && peek !== null && 'turns' in peek && typeof peek.turns === 'number' && peek.turns >= 1 ? body : undefined;
  });
}

describe('POST /v1/delegations', () => {
  it('starts a subagent and answers 201 with its id, state and links', async () => {
    const { status, body, response } = await start({ instructions: 'say hello', description: 'greeting' });
    expect(status).toBe(201);
    expect(body.id).toMatch(/^errand-[0-9a-f]{16}$/);
    expect(body).toMatchObject({ created: true, state: 'running' });
    expect(response.headers.get('location')).toBe(path(String(body.id)));
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('waits for the result with ?wait=', async () => {
    const { status, body } = await start({ instructions: 'count to three' }, '?wait=15s');
    expect(status).toBe(201);
    expect(body).toMatchObject({ state: 'completed', result: { status: 'completed', output: 'done: count to three', turns: 1 } });
  });

  it('says so in Errand-Wait-Capped when a ?wait= is longer than the server waits (ERRAND_API_MAX_WAIT_MS, 20 s here)', async () => {
    const long = await start({ instructions: 'count to four' }, '?wait=1m');
    expect(long.body).toMatchObject({ state: 'completed' });
    expect(long.response.headers.get('errand-wait-capped')).toBe("waited at most 20000 ms (the server's longest wait, ERRAND_API_MAX_WAIT_MS), not the 60000 ms asked for");
    const result = await stack.request(path(String(long.body.id), '/result?wait=30s'));
    expect(result.status).toBe(200);
    expect(result.headers.get('errand-wait-capped')).toContain('not the 30000 ms asked for');
    const within = await start({ instructions: 'count to five' }, '?wait=15s');
    expect(within.body).toMatchObject({ state: 'completed' });
    expect(within.response.headers.get('errand-wait-capped')).toBeNull();
  });

  it('sets the search attributes, static summary and details of the workflow', async () => {
    const { body } = await start({ instructions: 'describe the search attributes please', description: 'attributes check' }, '?wait=15s');
    const handle = stack.client.workflow.getHandle(String(body.id));
    const description = await handle.describe();
    expect(description.type).toBe('subagentWorkflow');
    expect(description.taskQueue).toBe(stack.taskQueue);
    expect(await description.staticSummary()).toBe('attributes check — describe the search attributes please');
    expect(await description.staticDetails()).toContain('**Tenant:** acme');
    const attributes = Object.fromEntries(description.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]));
    expect(attributes).toMatchObject({ ErrandKind: 'subagent', ErrandSource: 'ad-hoc', ErrandTenant: 'acme', ErrandModel: 'scripted/scripted-model', ErrandStatus: 'completed', ErrandTurns: 1 });
  });

  it('uses a requested model when it is on the allow-list', async () => {
    const { body } = await start({ instructions: 'which model', model: 'other-model' }, '?wait=15s');
    expect(body.state).toBe('completed');
    const status = await json(await stack.request(path(String(body.id))));
    expect(status.model).toBe('scripted/other-model');
  });

  it('returns the same delegation for a retried request with the same Idempotency-Key', async () => {
    const key = randomUUID();
    const request = { instructions: 'idempotent task', max_turns: 3 };
    const first = await start(request, '', { 'Idempotency-Key': key });
    const second = await start(request, '', { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    expect(first.body.created).toBe(true);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ id: first.body.id, runId: first.body.runId, created: false });
    // After it closed, REJECT_DUPLICATE keeps answering with the same (closed) delegation.
    await stack.request(path(String(first.body.id), '/result?wait=15s'));
    const third = await start(request, '?wait=5s', { 'Idempotency-Key': key });
    expect(third.status).toBe(200);
    expect(third.body).toMatchObject({ id: first.body.id, created: false, state: 'completed', result: { output: 'done: idempotent task' } });
    // The same key with another tenant is another delegation.
    const other = await stack.request('/v1/delegations', postJson(request, { key: keys.globex, headers: { 'Idempotency-Key': key } }));
    expect(other.status).toBe(201);
    expect((await json(other)).id).not.toBe(first.body.id);
  });

  it('refuses an Idempotency-Key reused with a different body (422)', async () => {
    const key = randomUUID();
    await start({ instructions: 'first body' }, '', { 'Idempotency-Key': key });
    const reused = await stack.request('/v1/delegations', postJson({ instructions: 'another body' }, { headers: { 'Idempotency-Key': key } }));
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await json(reused)).toMatchObject({ type: 'urn:errand:problem:idempotency-key-reused', errors: [{ in: 'header', field: 'Idempotency-Key' }] });
  });
});

describe('GET /v1/delegations/{id} and /result', () => {
  it('shows status and a live peek of a running delegation, and 202 from /result while it runs', async () => {
    const { body } = await start({ instructions: 'slow work for peeking' });
    const id = String(body.id);
    const status = await waitForTurn(id);
    expect(status).toMatchObject({ id, kind: 'subagent', state: 'running', temporalStatus: 'RUNNING', source: 'ad-hoc', model: 'scripted/scripted-model', closedAt: null });
    expect(status.peek).toMatchObject({ workflowId: id, state: 'running', turns: 1, maxTurns: 25, toolCalls: 0 });
    expect(status.summary).toBe('slow work for peeking');

    const pending = await stack.request(path(id, '/result'));
    expect(pending.status).toBe(202);
    expect(await json(pending)).toMatchObject({ id, done: false, state: 'running', peek: { turns: 1 } });

    const waited = await stack.request(path(id, '/result?wait=300ms'));
    expect(waited.status).toBe(202);
    await stack.request(path(id, '/cancel'), postJson({}));
  });

  it('returns the result of a finished delegation, with tool calls counted', async () => {
    const { body } = await start({ instructions: 'use a tool then answer' });
    const id = String(body.id);
    const result = await stack.request(path(id, '/result?wait=15s'));
    expect(result.status).toBe(200);
    expect(await json(result)).toMatchObject({ id, done: true, result: { status: 'completed', toolCalls: 1, turns: 2, output: 'done: use a tool then answer' } });
    const status = await json(await stack.request(path(id)));
    expect(status).toMatchObject({ state: 'completed', temporalStatus: 'COMPLETED', turns: 2 });
    expect(status.peek).toMatchObject({ lastToolCall: { name: 'developer__list_directory' } });
    expect(typeof status.closedAt).toBe('string');
  });

  it('reports 404 for an unknown id', async () => {
    const response = await stack.request(path('errand-0000000000000000'));
    expect(response.status).toBe(404);
    expect(await json(response)).toMatchObject({ type: 'urn:errand:problem:not-found', status: 404 });
  });
});

describe('POST /v1/delegations/{id}/cancel', () => {
  it('cancels a running delegation; the result says cancelled with the reason', async () => {
    const { body } = await start({ instructions: 'slow work to cancel' });
    const id = String(body.id);
    await waitForTurn(id);
    const cancelled = await stack.request(path(id, '/cancel'), postJson({ reason: 'test is done with it' }));
    expect(cancelled.status).toBe(202);
    expect(await json(cancelled)).toMatchObject({ id, cancelRequested: true });
    const result = await json(await stack.request(path(id, '/result?wait=15s')));
    expect(result).toMatchObject({ done: true, result: { status: 'cancelled', diagnostic: 'test is done with it', partialOutput: '' } });
    // Cancelling again is harmless: nothing left to cancel.
    const again = await stack.request(path(id, '/cancel'), { method: 'POST' });
    expect(again.status).toBe(202);
    expect(await json(again)).toMatchObject({ cancelRequested: false, state: 'cancelled' });
  });
});

describe('POST /v1/delegations/{id}/messages', () => {
  it('delivers a message to a continuable delegation (202) and it answers again', async () => {
    const { body } = await start({ instructions: 'first question', continuable: true });
    const id = String(body.id);
    await eventually(async () => ((await json(await stack.request(path(id)))).state === 'waiting' ? true : undefined));
    const callsBefore = stack.model.calls.length;
    const sent = await stack.request(path(id, '/messages'), postJson({ message: 'second question' }));
    expect(sent.status).toBe(202);
    expect(await json(sent)).toMatchObject({ id, accepted: true });
    await eventually(async () => (stack.model.calls.length > callsBefore ? true : undefined));
    await stack.request(path(id, '/cancel'), postJson({}));
  });

  it('a long message goes by reference: the model gets it whole, workflow history never holds its body', async () => {
    const { body } = await start({ instructions: 'first question', continuable: true });
    const id = String(body.id);
    await eventually(async () => ((await json(await stack.request(path(id)))).state === 'waiting' ? true : undefined));
    const long = `a long follow-up ${'with many words '.repeat(200)}end`;
    const callsBefore = stack.model.calls.length;
    expect((await stack.request(path(id, '/messages'), postJson({ message: long }))).status).toBe(202);
    const request = await eventually(async () => stack.model.requests.slice(callsBefore).find((call) => call.messages.some((message) => message.role === 'user' && message.content === long)));
    expect(request).toBeDefined();
    // Every payload of the history, decoded (payload data is base64 JSON).
    const raw = JSON.stringify(await stack.client.workflow.getHandle(id).fetchHistory());
    const history = [...raw.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map((match) => Buffer.from(match[1] ?? '', 'base64').toString('utf8')).join('\n');
    expect(history).not.toContain('with many words with many words');
    expect(history).toContain('inbound/');
    await stack.request(path(id, '/cancel'), postJson({}));
  });

  it('answers 429 naming ERRAND_MAX_QUEUED_MESSAGES once 100 messages wait behind a running turn', async () => {
    const { body } = await start({ instructions: 'slow but continuable', continuable: true });
    const id = String(body.id);
    await waitForTurn(id);
    for (let batch = 0; batch < defaultMaxQueuedMessages / 10; batch += 1) {
      const sent = await Promise.all(Array.from({ length: 10 }, (_, index) => stack.request(path(id, '/messages'), postJson({ message: `queued ${batch * 10 + index}` }))));
      expect(sent.map((response) => response.status)).toEqual(Array.from({ length: 10 }, () => 202));
    }
    const refused = await stack.request(path(id, '/messages'), postJson({ message: 'one too many' }));
    expect(refused.status).toBe(429);
    const problem = await json(refused);
    expect(problem).toMatchObject({ type: 'urn:errand:problem:limit-exceeded' });
    expect(String(problem.detail)).toContain(`the limit is ${defaultMaxQueuedMessages} (ERRAND_MAX_QUEUED_MESSAGES)`);
    await stack.request(path(id, '/cancel'), postJson({}));
  });

  it('answers 409 for a delegation that is not continuable', async () => {
    const { body } = await start({ instructions: 'slow and not continuable' });
    const id = String(body.id);
    await waitForTurn(id);
    const sent = await stack.request(path(id, '/messages'), postJson({ message: 'hello?' }));
    expect(sent.status).toBe(409);
    expect(await json(sent)).toMatchObject({ type: 'urn:errand:problem:conflict' });
    await stack.request(path(id, '/cancel'), postJson({}));
  });

  it('answers 409 for a delegation that has ended, and 404 for an unknown one', async () => {
    const { body } = await start({ instructions: 'quick one' }, '?wait=15s');
    const ended = await stack.request(path(String(body.id), '/messages'), postJson({ message: 'too late' }));
    expect(ended.status).toBe(409);
    expect(String((await json(ended)).detail)).toContain('has ended');
    const unknown = await stack.request(path('errand-ffffffffffffffff', '/messages'), postJson({ message: 'anyone?' }));
    expect(unknown.status).toBe(404);
  });
});

describe('GET /v1/delegations', () => {
  it('lists the tenant\'s delegations, filtered by status and source, one page at a time', async () => {
    const finished = await start({ instructions: 'listed and finished' }, '?wait=15s');
    const running = await start({ instructions: 'slow and listed' });
    await waitForTurn(String(running.body.id));

    const runningIds = await eventually(async () => {
      const ids = listItems(await json(await stack.request('/v1/delegations?status=running&pageSize=100'))).map((item) => item.id);
      return ids.includes(String(running.body.id)) ? ids : undefined;
    });
    expect(runningIds).not.toContain(finished.body.id);

    const completed = await eventually(async () => {
      const items = listItems(await json(await stack.request('/v1/delegations?status=completed&source=ad-hoc&pageSize=100')));
      return items.some((item) => item.id === finished.body.id) ? items : undefined;
    });
    expect(completed.every((item) => item.state === 'completed' && item.source === 'ad-hoc')).toBe(true);

    const none = await json(await stack.request('/v1/delegations?source=no-such-source'));
    expect(none).toEqual({ items: [], nextPageToken: null });

    // Paging: pages of one, following nextPageToken, visit distinct delegations.
    const seen: string[] = [];
    let token: string | null = null;
    for (let page = 0; page < 3; page += 1) {
      const query: string = token ? `?pageSize=1&pageToken=${token}` : '?pageSize=1';
      const body = await json(await stack.request(`/v1/delegations${query}`));
      const items = listItems(body);
      expect(items).toHaveLength(1);
      seen.push(...items.map((item) => item.id));
      token = typeof body.nextPageToken === 'string' ? body.nextPageToken : null;
      expect(token).not.toBeNull();
    }
    expect(new Set(seen).size).toBe(3);

    // A token is only good for the listing that issued it: other filters or another tenant get a 400.
    const otherFilter = await stack.request(`/v1/delegations?pageSize=1&status=completed&pageToken=${token ?? ''}`);
    expect(otherFilter.status).toBe(400);
    const otherTenant = await stack.request(`/v1/delegations?pageSize=1&pageToken=${token ?? ''}`, { key: keys.globex });
    expect(otherTenant.status).toBe(400);

    // Another tenant sees none of them.
    const otherIds = listItems(await json(await stack.request('/v1/delegations?pageSize=100', { key: keys.globex }))).map((item) => item.id);
    expect(otherIds).not.toContain(finished.body.id);
    expect(otherIds).not.toContain(running.body.id);

    await stack.request(path(String(running.body.id), '/cancel'), postJson({}));
  });

  it('answers 400 for a page token it did not issue', async () => {
    const response = await stack.request('/v1/delegations?pageToken=bm90LWEtdG9rZW4');
    expect(response.status).toBe(400);
    expect(await json(response)).toMatchObject({ errors: [{ in: 'query', field: 'pageToken' }] });
  });
});

describe('POST /v1/delegations from a source', () => {
  it('runs a recipe with its parameters rendered, and records the source', async () => {
    const { status, body } = await start({ source: 'deploy', parameters: { service: 'billing' } }, '?wait=15s');
    expect(status).toBe(201);
    expect(body).toMatchObject({ state: 'completed', result: { status: 'completed', output: 'done: Deploy billing' } });
    const detail = await json(await stack.request(path(String(body.id))));
    expect(detail.source).toBe('deploy');
  });

  it('an unknown source is a 422 with suggestions; a missing parameter names it', async () => {
    const unknown = await start({ source: 'dpeloy' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.suggestions).toEqual(['deploy']);
    const missing = await start({ source: 'deploy' });
    expect(missing.status).toBe(422);
    expect(JSON.stringify(missing.body)).toMatch(/service/);
  });
});

describe('structured results and worktrees through the API and the CLI', () => {
  const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };

  function cli(): { context: CliContext; stdout: string[]; stderr: string[] } {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const io = { stdout: (text: string) => void stdout.push(text), stderr: (text: string) => void stderr.push(text), interactive: false };
    return { context: { io, env: {}, cwd: stack.workDir, transport: () => httpTransport(stack.url, keys.acme), close: () => Promise.resolve() }, stdout, stderr };
  }

  it('errand delegate names the unit of a budget that is not a number', async () => {
    await expect(delegateCommand(['x', '--time-budget', '20s'], cli().context)).rejects.toThrow('--time-budget "20s" is not a whole number of seconds (e.g. --time-budget 600)');
    await expect(delegateCommand(['x', '--cost-budget-usd', '$1'], cli().context)).rejects.toThrow('--cost-budget-usd "$1" is not a number of US dollars (e.g. --cost-budget-usd 0.50)');
  });

  it('output_schema: result.structured holds the validated JSON; errand delegate and errand result print it with --json', async () => {
    const { body } = await start({ instructions: 'give a structured answer', output_schema: schema }, '?wait=15s');
    expect(body).toMatchObject({ state: 'completed', result: { status: 'completed', structured: { answer: 'forty-two' }, output: '{\n  "answer": "forty-two"\n}' } });

    const schemaFile = join(mkdtempSync(join(tmpdir(), 'errand-schema-')), 'schema.json');
    writeFileSync(schemaFile, JSON.stringify(schema));
    const delegated = cli();
    expect(await delegateCommand(['answer in structure', '--output-schema', schemaFile, '--json'], delegated.context)).toBe(0);
    expect(JSON.parse(delegated.stdout.join(''))).toMatchObject({ done: true, result: { structured: { answer: 'forty-two' } } });
    const read = cli();
    expect(await resultCommand([String(body.id), '--json'], read.context)).toBe(0);
    expect(JSON.parse(read.stdout.join(''))).toMatchObject({ done: true, result: { structured: { answer: 'forty-two' } } });
    const plain = cli();
    expect(await resultCommand([String(body.id)], plain.context)).toBe(0);
    expect(plain.stdout.join('')).toBe('{\n  "answer": "forty-two"\n}\n');
  });

  it('isolation worktree: result.worktree names the branch errand/<id> and the folder, relative to the working directory', async () => {
    const repo = join(stack.workDir, 'acme', 'repo');
    mkdirSync(repo, { recursive: true });
    const git = (args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.invalid' } });
    git(['init', '--quiet', '--initial-branch=main']);
    writeFileSync(join(repo, 'README.md'), '# repo\n');
    git(['add', '--all']);
    git(['commit', '--quiet', '-m', 'initial']);
    const { body } = await start({ instructions: 'write a file please', isolation: 'worktree', working_dir: 'repo' }, '?wait=15s');
    const id = String(body.id);
    expect(body).toMatchObject({ state: 'completed', result: { worktree: { branch: `errand/${id}`, changed: true } } });
    const worktree = (body.result as { worktree: { path: string } }).worktree;
    expect(worktree.path).toMatch(/^\.git\/errand-worktrees\//);
    expect(readFileSync(join(repo, worktree.path, 'from-api.txt'), 'utf8')).toBe('written via the API');
    expect(git(['status', '--porcelain'])).toBe('');
    const shown = cli();
    expect(await resultCommand([id], shown.context)).toBe(0);
    expect(shown.stderr.join('')).toContain(`errand: ${id}: Worktree: the changes are on branch errand/${id}, in ${worktree.path}`);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, keys, startApiStack, type ApiStack } from './api-harness';

/** Malformed requests: every one is a 4xx problem+json naming what is wrong; none is a 5xx. */

let stack: ApiStack;
beforeAll(async () => {
  stack = await startApiStack({ withoutWorker: true });
});
afterAll(async () => {
  await stack?.stop();
});

interface BadCase {
  name: string;
  method: 'GET' | 'POST' | 'DELETE' | 'PUT';
  path: string;
  /** Raw body text (sent as is). */
  raw?: string;
  contentType?: string | null;
  headers?: Record<string, string>;
  status: number;
  /** Expected `errors[].field` (with `in`), when the problem names a field. */
  field?: { in: string; field: string };
  /** Expected words in the problem's detail or error messages. */
  says?: RegExp;
}

const body = (value: unknown) => JSON.stringify(value);
const cases: BadCase[] = [
  { name: 'malformed JSON', method: 'POST', path: '/v1/delegations', raw: '{"instructions": ', status: 400, says: /not valid JSON/ },
  { name: 'a JSON array', method: 'POST', path: '/v1/delegations', raw: '[]', status: 400, field: { in: 'body', field: '' } },
  { name: 'a JSON string', method: 'POST', path: '/v1/delegations', raw: '"do it"', status: 400 },
  { name: 'JSON null', method: 'POST', path: '/v1/delegations', raw: 'null', status: 400 },
  { name: 'an empty body', method: 'POST', path: '/v1/delegations', raw: '', status: 400, says: /body is required/ },
  { name: 'instructions of the wrong type', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 5 }), status: 400, field: { in: 'body', field: 'instructions' } },
  { name: 'an unknown field', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', bogus: 1 }), status: 400, field: { in: 'body', field: 'bogus' }, says: /unknown field "bogus"; valid: instructions, source/ },
  { name: 'max_turns 0', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', max_turns: 0 }), status: 400, field: { in: 'body', field: 'max_turns' } },
  { name: 'max_turns not whole', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', max_turns: 1.5 }), status: 400, field: { in: 'body', field: 'max_turns' } },
  { name: 'temperature too high', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', temperature: 3 }), status: 400, field: { in: 'body', field: 'temperature' } },
  { name: 'a parameter of the wrong type', method: 'POST', path: '/v1/delegations', raw: body({ source: 'deploy', parameters: { service: { nested: true } } }), status: 400, field: { in: 'body', field: 'parameters.service' } },
  { name: 'neither instructions nor source', method: 'POST', path: '/v1/delegations', raw: body({}), status: 422, field: { in: 'body', field: 'instructions' } },
  { name: 'a model not on the allow-list', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', model: 'gpt-9' }), status: 422, field: { in: 'body', field: 'model' }, says: /allowed: scripted-model, other-model/ },
  { name: 'a provider not configured', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', provider: 'nope' }), status: 422, field: { in: 'body', field: 'provider' } },
  { name: 'an output_schema that is not a map', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', output_schema: 'json please' }), status: 400, field: { in: 'body', field: 'output_schema' } },
  { name: 'an output_schema that is not an object schema', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', output_schema: { type: 'array' } }), status: 422, field: { in: 'body', field: 'output_schema' }, says: /output_schema\.type: expected "object"/ },
  { name: 'an output_schema that is not valid JSON Schema', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', output_schema: { type: 'object', properties: { a: { type: 'text' } } } }), status: 422, field: { in: 'body', field: 'output_schema' }, says: /not a valid JSON Schema: properties\.a\.type/ },
  { name: 'an unknown isolation', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', isolation: 'docker' }), status: 400, field: { in: 'body', field: 'isolation' } },
  { name: 'a worktree outside any git repository', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x', isolation: 'worktree' }), status: 422, field: { in: 'body', field: 'isolation' }, says: /needs a git repository/ },
  { name: 'an oversized body', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x'.repeat(5_000) }), status: 413, says: /ERRAND_API_MAX_BODY_BYTES/ },
  { name: 'a body that is not JSON', method: 'POST', path: '/v1/delegations', raw: 'instructions=x', contentType: 'application/x-www-form-urlencoded', status: 415, field: { in: 'header', field: 'Content-Type' } },
  { name: 'a bad wait', method: 'POST', path: '/v1/delegations?wait=forever', raw: body({ instructions: 'x' }), status: 400, field: { in: 'query', field: 'wait' } },
  { name: 'an unknown query parameter', method: 'POST', path: '/v1/delegations?colour=blue', raw: body({ instructions: 'x' }), status: 400, field: { in: 'query', field: 'colour' } },
  { name: 'an Idempotency-Key with spaces', method: 'POST', path: '/v1/delegations', raw: body({ instructions: 'x' }), headers: { 'Idempotency-Key': 'two words' }, status: 400, field: { in: 'header', field: 'Idempotency-Key' } },
  { name: 'an id with bad characters', method: 'GET', path: '/v1/delegations/bad%20id', status: 400, field: { in: 'path', field: 'id' } },
  { name: 'an unknown status filter', method: 'GET', path: '/v1/delegations?status=sleeping', status: 400, field: { in: 'query', field: 'status' } },
  { name: 'pageSize 0', method: 'GET', path: '/v1/delegations?pageSize=0', status: 400, field: { in: 'query', field: 'pageSize' } },
  { name: 'pageSize too large', method: 'GET', path: '/v1/delegations?pageSize=1000', status: 400, field: { in: 'query', field: 'pageSize' } },
  { name: 'pageSize not a number', method: 'GET', path: '/v1/delegations?pageSize=ten', status: 400, field: { in: 'query', field: 'pageSize' } },
  { name: 'a garbage page token', method: 'GET', path: '/v1/delegations?pageToken=bm90LWEtdG9rZW4', status: 400, field: { in: 'query', field: 'pageToken' } },
  { name: 'a source filter with quotes', method: 'GET', path: "/v1/delegations?source=x'%20OR%20'1'='1", status: 400, field: { in: 'query', field: 'source' } },
  { name: 'a negative result wait', method: 'GET', path: '/v1/delegations/errand-0123456789abcdef/result?wait=-1', status: 400, field: { in: 'query', field: 'wait' } },
  { name: 'a cancel reason of the wrong type', method: 'POST', path: '/v1/delegations/errand-0123456789abcdef/cancel', raw: body({ reason: 5 }), status: 400, field: { in: 'body', field: 'reason' } },
  { name: 'a message missing', method: 'POST', path: '/v1/delegations/errand-0123456789abcdef/messages', raw: body({}), status: 400, field: { in: 'body', field: 'message' } },
  { name: 'an empty message', method: 'POST', path: '/v1/delegations/errand-0123456789abcdef/messages', raw: body({ message: '' }), status: 400, field: { in: 'body', field: 'message' } },
  { name: 'a refresh flag that is not a boolean', method: 'GET', path: '/v1/sources?refresh=yes', status: 400, field: { in: 'query', field: 'refresh' } },
  { name: 'an unknown route', method: 'GET', path: '/v1/nothing-here', status: 404 },
  { name: 'an unsupported method', method: 'DELETE', path: '/v1/delegations', status: 405, says: /\/v1\/delegations does not take DELETE; it takes POST, GET, HEAD/ },
  { name: 'an unsupported method on a path with an id', method: 'PUT', path: '/v1/sessions/errand-0123456789abcdef/cancel', status: 405, says: /it takes POST$/ },
  { name: 'a body of whitespace only', method: 'POST', path: '/v1/delegations/errand-0123456789abcdef/cancel', raw: '\n', status: 400, field: { in: 'body', field: '' } },
  { name: 'an unknown delegation', method: 'GET', path: '/v1/delegations/errand-0123456789abcdef', status: 404 },
  { name: 'an unknown source', method: 'GET', path: '/v1/sources/dpeloy', status: 404, field: { in: 'path', field: 'name' }, says: /deploy/ },
];

describe('bad requests', () => {
  for (const bad of cases) {
    it(`${bad.name}: ${bad.status}`, async () => {
      const headers: Record<string, string> = { ...bad.headers };
      if (bad.raw !== undefined && bad.contentType !== null) headers['content-type'] = bad.contentType ?? 'application/json';
      const response = await stack.request(bad.path, { method: bad.method, headers, ...(bad.raw === undefined ? {} : { body: bad.raw }) });
      expect(response.status).toBe(bad.status);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      // A 405 names the methods the path does take (RFC 9110).
      if (bad.status === 405) expect(response.headers.get('allow')).toBe(String((/it takes (.+)$/.exec(String((await response.clone().json() as { detail?: string }).detail)) ?? [])[1]));
      const problem = await json(response);
      expect(problem).toMatchObject({ status: bad.status, type: expect.stringMatching(/^urn:errand:problem:/), title: expect.any(String) });
      if (bad.field) expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining(bad.field)]));
      if (bad.says) {
        const messages = Array.isArray(problem.errors) ? problem.errors.map((error: { message?: string }) => error.message ?? '') : [];
        expect([String(problem.detail ?? ''), ...messages].join('\n')).toMatch(bad.says);
      }
    });
  }
});

describe('an oversized body without a declared length', () => {
  const oversized = JSON.stringify({ instructions: 'x'.repeat(5_000) });
  const chunks = () => new ReadableStream<Uint8Array>({
    start(controller) {
      const bytes = new TextEncoder().encode(oversized);
      for (let at = 0; at < bytes.length; at += 1_000) controller.enqueue(bytes.slice(at, at + 1_000));
      controller.close();
    },
  });

  it('sent chunked to the Node server: 413 naming the setting', async () => {
    const response = await stack.request('/v1/delegations', { method: 'POST', headers: { 'content-type': 'application/json' }, body: chunks(), duplex: 'half' } as RequestInit);
    expect(response.status).toBe(413);
    expect(String((await json(response)).detail)).toMatch(/ERRAND_API_MAX_BODY_BYTES/);
  });

  it('handed to the app without Node (as the Lambda adapter does): 413 as well', async () => {
    const request = new Request('http://api.test/v1/delegations', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${keys.acme}` },
      body: chunks(),
      duplex: 'half',
    } as RequestInit);
    const response = await stack.app.fetch(request);
    expect(response.status).toBe(413);
    expect(String((await json(response)).detail)).toMatch(/ERRAND_API_MAX_BODY_BYTES/);
  });
});

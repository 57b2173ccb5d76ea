import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadApiConfig } from '../../src/api/api-config';
import { hashApiKey } from '../../src/api/auth-config';
import { eventually, json, keys, listItems, postJson, startApiStack, type ApiStack } from './api-harness';

/** Bearer keys, 401s that reveal nothing, and tenant isolation on every route. */

let stack: ApiStack;
beforeAll(async () => {
  stack = await startApiStack();
});
afterAll(async () => {
  await stack?.stop();
});

const protectedRoutes: { method: string; path: string; body?: unknown }[] = [
  { method: 'POST', path: '/v1/delegations', body: { instructions: 'x' } },
  { method: 'GET', path: '/v1/delegations' },
  { method: 'GET', path: '/v1/delegations/errand-0123456789abcdef' },
  { method: 'GET', path: '/v1/delegations/errand-0123456789abcdef/result' },
  { method: 'POST', path: '/v1/delegations/errand-0123456789abcdef/cancel', body: {} },
  { method: 'POST', path: '/v1/delegations/errand-0123456789abcdef/messages', body: { message: 'x' } },
  { method: 'GET', path: '/v1/sources' },
  { method: 'GET', path: '/v1/sources/deploy' },
  { method: 'GET', path: '/v1/models' },
  // A route that does not exist looks exactly like one that does.
  { method: 'GET', path: '/v1/no-such-route' },
];

function init(route: (typeof protectedRoutes)[number], key: string | null, authorization?: string): RequestInit & { key: string | null } {
  const headers = new Headers();
  if (authorization !== undefined) headers.set('authorization', authorization);
  if (route.body === undefined) return { method: route.method, key, headers };
  headers.set('content-type', 'application/json');
  return { method: route.method, key, headers, body: JSON.stringify(route.body) };
}

describe('authentication', () => {
  for (const route of protectedRoutes) {
    it(`${route.method} ${route.path}: 401 without a key, with a wrong key, and with a non-bearer header`, async () => {
      const answers = [
        await stack.request(route.path, init(route, null)),
        await stack.request(route.path, init(route, 'not-a-valid-key')),
        await stack.request(route.path, init(route, null, `Basic ${Buffer.from('a:b').toString('base64')}`)),
      ];
      const bodies = [];
      for (const answer of answers) {
        expect(answer.status).toBe(401);
        expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="errand"');
        const body = await json(answer);
        expect(body).toMatchObject({ type: 'urn:errand:problem:unauthorized', status: 401, title: 'Authentication required' });
        // `instance` echoes the caller's own request path; everything else must be the same for every route.
        const { instance: _instance, ...rest } = body;
        bodies.push(rest);
      }
      expect(JSON.stringify(bodies)).not.toMatch(/acme|globex|tenant|errand-0123|deploy/);
    });
  }

  it('leaves /healthz and /openapi.json public', async () => {
    expect((await stack.request('/healthz', { key: null })).status).toBe(200);
    expect((await stack.request('/openapi.json', { key: null })).status).toBe(200);
  });
});

describe('tenant isolation', () => {
  it('answers 404 on every route for another tenant\'s delegation, and leaves it untouched', async () => {
    const started = await json(await stack.request('/v1/delegations', postJson({ instructions: 'slow secret work of acme' })));
    const id = encodeURIComponent(String(started.id));
    await eventually(async () => {
      const status = await json(await stack.request(`/v1/delegations/${id}`));
      return status.state === 'running' && status.peek !== null ? true : undefined;
    });
    const asGlobex = { key: keys.globex };
    const answers = [
      await stack.request(`/v1/delegations/${id}`, asGlobex),
      await stack.request(`/v1/delegations/${id}/result?wait=1s`, asGlobex),
      await stack.request(`/v1/delegations/${id}/cancel`, postJson({ reason: 'hostile' }, asGlobex)),
      await stack.request(`/v1/delegations/${id}/messages`, postJson({ message: 'hostile' }, asGlobex)),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(await json(answer)).toMatchObject({ type: 'urn:errand:problem:not-found', title: 'No such delegation' });
    }
    const globexList = listItems(await json(await stack.request('/v1/delegations?pageSize=100', asGlobex)));
    expect(globexList.map((item) => item.id)).not.toContain(started.id);
    // The hostile cancel did nothing: the owner still sees it running and can cancel it.
    expect(await json(await stack.request(`/v1/delegations/${id}`))).toMatchObject({ state: 'running' });
    expect(await json(await stack.request(`/v1/delegations/${id}/cancel`, postJson({})))).toMatchObject({ cancelRequested: true });
  });
});

describe('API key configuration', () => {
  const sha = hashApiKey('k');

  it('refuses to start without keys unless ERRAND_API_AUTH=off, naming both settings', () => {
    expect(() => loadApiConfig({})).toThrow(/ERRAND_API_KEYS.*ERRAND_API_AUTH=off/s);
    expect(loadApiConfig({ ERRAND_API_AUTH: 'off' }).auth).toEqual({ mode: 'off', tenant: 'local' });
    expect(loadApiConfig({}, process.cwd(), { localDefault: true }).auth).toEqual({ mode: 'off', tenant: 'local' });
  });

  it('names the bad field of a key entry', () => {
    expect(() => loadApiConfig({ ERRAND_API_KEYS: '[{"tenant":"acme","sha256":"the-key-itself"}]' })).toThrow(/ERRAND_API_KEYS\[0\]\.sha256: sha256 must be the 64 hex digits/);
    expect(() => loadApiConfig({ ERRAND_API_KEYS: `[{"tenant":"a b","sha256":"${sha}"}]` })).toThrow(/ERRAND_API_KEYS\[0\]\.tenant/);
    expect(() => loadApiConfig({ ERRAND_API_KEYS: `[{"tenant":"a","sha256":"${sha}","extra":1}]` })).toThrow(/extra/);
    expect(() => loadApiConfig({ ERRAND_API_KEYS: '{not json' })).toThrow(/ERRAND_API_KEYS is not valid JSON/);
    expect(() => loadApiConfig({ ERRAND_API_KEYS: `[{"tenant":"a","sha256":"${sha}"},{"tenant":"b","sha256":"${sha}"}]` })).toThrow(/ERRAND_API_KEYS\[1\]\.sha256: the same key hash/);
  });

  it('refuses contradictory settings', () => {
    expect(() => loadApiConfig({ ERRAND_API_AUTH: 'off', ERRAND_API_KEYS: `[{"tenant":"a","sha256":"${sha}"}]` })).toThrow(/ERRAND_API_AUTH=off, but API keys are configured/);
    expect(() => loadApiConfig({ ERRAND_API_AUTH: 'maybe' })).toThrow(/ERRAND_API_AUTH="maybe" is not valid/);
    expect(() => loadApiConfig({ ERRAND_API_KEYS: '[]', ERRAND_API_KEYS_FILE: 'keys.json' })).toThrow(/keep one of them/);
    expect(() => loadApiConfig({ ERRAND_API_KEYS_FILE: 'no/such/keys.json' })).toThrow(/ERRAND_API_KEYS_FILE points to .*keys\.json, which cannot be read/);
    expect(() => loadApiConfig({ ERRAND_API_AUTH: 'off', ERRAND_API_MAX_BODY_BYTES: '12' })).toThrow(/ERRAND_API_MAX_BODY_BYTES="12" is not valid/);
  });
});

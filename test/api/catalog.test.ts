import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startApiStack, type ApiStack } from './api-harness';

/** Sources (the `load` listing and content, with suggestions), models and health. */

let stack: ApiStack;
beforeAll(async () => {
  stack = await startApiStack({ withoutWorker: true });
});
afterAll(async () => {
  await stack?.stop();
});

describe('GET /v1/sources', () => {
  it('lists the recipes found in the project folders', async () => {
    const response = await stack.request('/v1/sources?refresh=true');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.items).toEqual(
      expect.arrayContaining([
        { name: 'deploy', kind: 'recipe', description: 'Deploy a service', requiredParameters: ['service'] },
        { name: 'summarize', kind: 'recipe', description: 'Summarize the project', requiredParameters: [] },
      ]),
    );
    expect(body.searched).toEqual(expect.arrayContaining(['project .goose/recipes']));
  });

  it('reads one source: what load() shows, the raw file and its parameters', async () => {
    const response = await stack.request('/v1/sources/deploy');
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toMatchObject({
      name: 'deploy',
      kind: 'recipe',
      path: 'deploy.yaml',
      parameters: [{ key: 'service', input_type: 'string', requirement: 'required', description: 'Service name' }],
    });
    expect(String(body.text)).toContain('# deploy (recipe): Deploy');
    expect(String(body.content)).toContain('prompt: Deploy {{ service }}');
    expect(String(body.contentHash)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('answers 404 with suggestions for an unknown name (edit distance, not only substrings)', async () => {
    const response = await stack.request('/v1/sources/dpeloy');
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = await json(response);
    expect(problem).toMatchObject({ type: 'urn:errand:problem:source-not-found', suggestions: ['deploy'] });
    expect(String(problem.detail)).toContain('Did you mean: deploy?');
  });
});

describe('GET /v1/models and /healthz', () => {
  it('lists the allowed models and the default', async () => {
    const body = await json(await stack.request('/v1/models'));
    expect(body).toEqual({
      providers: [{ provider: 'scripted', kind: 'scripted', models: ['scripted-model', 'other-model'], defaultModel: null }],
      default: { provider: 'scripted', model: 'scripted-model' },
    });
  });

  it('answers the health check without a key', async () => {
    const response = await stack.request('/healthz', { key: null });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ ok: true, version: '1.0.0' });
  });
});

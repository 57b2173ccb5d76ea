import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpTransport } from '../../src/cli/api-transport';
import { modelsCommand } from '../../src/cli/catalog-commands';
import { json, keys, postJson, startApiStack, type ApiStack } from './api-harness';

/**
 * Sources (the `load` listing and content, with suggestions), models (the route catalog, as
 * `list_subagent_models` reads it) and health; model-route fields a top-level delegation cannot use.
 */

let stack: ApiStack;
beforeAll(async () => {
  stack = await startApiStack({
    withoutWorker: true,
    extraEnv: {
      ERRAND_PROVIDERS: JSON.stringify([
        { name: 'scripted', kind: 'scripted', models: ['scripted-model', { id: 'other-model', contextWindow: 64_000, maxOutputTokens: 2_000, reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'high' }] },
      ]),
    },
  });
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
  it('lists the allowed models with their settings, and the default', async () => {
    const body = await json(await stack.request('/v1/models'));
    expect(body).toEqual({
      providers: [{
        provider: 'scripted',
        kind: 'scripted',
        models: ['scripted-model', 'other-model'],
        defaultModel: null,
        entries: [
          { id: 'scripted-model', contextWindow: 128_000, maxOutputTokens: null, reasoningEfforts: [], defaultReasoningEffort: null, prices: null },
          { id: 'other-model', contextWindow: 64_000, maxOutputTokens: 2_000, reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'high', prices: null },
        ],
      }],
      default: { provider: 'scripted', model: 'scripted-model' },
    });
  });

  it('narrows to one provider with ?provider=; an unknown one is a 404 with suggestions', async () => {
    const one = await json(await stack.request('/v1/models?provider=scripted'));
    expect((one.providers as unknown[]).length).toBe(1);
    const unknown = await stack.request('/v1/models?provider=scriptd');
    expect(unknown.status).toBe(404);
    expect(await json(unknown)).toMatchObject({ suggestions: ['scripted'], errors: [{ in: 'query', field: 'provider', message: 'no provider named "scriptd"; did you mean scripted?' }] });
  });

  it('errand models prints each model, with the efforts of those that take any', async () => {
    const stdout: string[] = [];
    const io = { stdout: (text: string) => void stdout.push(text), stderr: () => undefined, interactive: false };
    const code = await modelsCommand([], { io, env: {}, cwd: stack.workDir, transport: () => httpTransport(stack.url, keys.acme), close: () => Promise.resolve() });
    expect(code).toBe(0);
    expect(stdout.join('')).toBe('scripted/scripted-model  (default)\nscripted/other-model  efforts: low, high (default)\n');
  });

  it('answers the health check without a key', async () => {
    const response = await stack.request('/healthz', { key: null });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({ ok: true, version: '1.0.0' });
  });
});

describe('model-route fields of POST /v1/delegations', () => {
  it('fork needs a parent conversation, and an effort must be one the model takes: 422 naming the field', async () => {
    const fork = await stack.request('/v1/delegations', postJson({ instructions: 'x', fork: true }));
    expect(fork.status).toBe(422);
    expect(await json(fork)).toMatchObject({ errors: [{ field: 'fork', message: expect.stringContaining('fork: true needs a conversation to fork') }] });
    const effort = await stack.request('/v1/delegations', postJson({ instructions: 'x', model: 'other-model', reasoning_effort: 'medium' }));
    expect(effort.status).toBe(422);
    expect(await json(effort)).toMatchObject({ errors: [{ field: 'reasoning_effort', message: expect.stringContaining('valid efforts: low, high (default)') }] });
  });

  it('a persona over the limit is refused with the limit named', async () => {
    const long = await stack.request('/v1/delegations', postJson({ instructions: 'x', persona: 'p'.repeat(4_001) }));
    expect(long.status).toBe(400);
    expect(JSON.stringify(await json(long))).toContain('persona must be at most 4000 characters');
  });
});

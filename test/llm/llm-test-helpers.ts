import { expect } from 'vitest';
import type { ModelRequest, ModelRoute, ToolSpec } from '../../src/contracts/model';
import { type ProviderConfig } from '../../src/llm/provider-config';
import { createModelRegistry } from '../../src/llm/model-registry';
import type { ChatModel } from '../../src/llm/model-port';
import type { ScriptedOpenAIServer } from '../support/scripted-openai-server';

/** The API key tests put in the environment of a registry. */
export const testApiKey = 'sk-test-key';

/** A chat model of `kind` talking to the scripted server. */
export function modelAgainst(
  server: Pick<ScriptedOpenAIServer, 'url'>,
  kind: 'openai-compatible' | 'anthropic',
  extra: Partial<ProviderConfig> = {},
): { model: ChatModel; route: ModelRoute } {
  const provider: ProviderConfig = {
    name: 'local',
    kind,
    baseUrl: server.url,
    apiKeyEnv: 'ERRAND_TEST_API_KEY',
    models: ['scripted-model-1'],
    headers: { 'x-errand-test': 'yes' },
    ...extra,
  };
  const registry = createModelRegistry([provider], { env: { ERRAND_TEST_API_KEY: testApiKey } });
  const route: ModelRoute = { provider: 'local', model: 'scripted-model-1' };
  return { model: registry.resolve(route), route };
}

/** A small tool spec. */
export const listDirectoryTool: ToolSpec = {
  name: 'developer__list_directory',
  description: 'List a directory',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

/** A second tool spec. */
export const readFileTool: ToolSpec = {
  name: 'developer__read_file',
  description: 'Read a file',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
};

/** A one-turn request. */
export function simpleRequest(route: ModelRoute, text = 'Say hello', tools: ToolSpec[] = []): ModelRequest {
  return { route, messages: [{ role: 'system', content: 'You are a test.' }, { role: 'user', content: text }], tools };
}

/** Awaits a promise that must reject and returns what it rejected with. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  expect.fail('expected the call to reject, but it resolved');
}

import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/contracts/model';
import { createDemoModel, demoModelId, demoProviderConfig, demoProviderName } from '../../src/llm/demo-model';
import { createModelRegistry } from '../../src/llm/model-registry';
import { listDirectoryTool } from './llm-test-helpers';

const route = { provider: demoProviderName, model: demoModelId };

describe('demo model', () => {
  it('announces itself and summarises the task when it has no tools', async () => {
    const model = createDemoModel();
    const response = await model.generate(
      { route, tools: [], messages: [{ role: 'system', content: 'You are a subagent.' }, { role: 'user', content: 'Write a haiku\nabout Temporal.' }] },
      {},
    );
    expect(response.toolCalls).toEqual([]);
    expect(response.finishReason).toBe('stop');
    expect(response.text).toMatch(/^\[demo model\] /);
    expect(response.text).toContain('The task I was given: "Write a haiku about Temporal."');
  });

  it('lists the working directory once, then answers with a summary of the listing', async () => {
    const model = createDemoModel();
    const request: ModelRequest = { route, tools: [listDirectoryTool], messages: [{ role: 'user', content: 'Look at the project' }] };

    const first = await model.generate(request, {});
    expect(first.toolCalls).toEqual([{ id: 'call_0_0', name: 'developer__list_directory', arguments: { path: '.' } }]);

    request.messages.push(
      { role: 'assistant', content: first.text, toolCalls: first.toolCalls },
      { role: 'tool', toolCallId: 'call_0_0', toolName: 'developer__list_directory', content: 'package.json\nsrc/\ntest/' },
    );
    const second = await model.generate(request, {});
    expect(second.toolCalls).toEqual([]);
    expect(second.text).toContain('The working directory has 3 entries: package.json, src/, test/.');
    expect(second.text).toContain('The task I was given: "Look at the project"');
  });

  it('plugs into the registry as a scripted provider', async () => {
    const model = createDemoModel();
    const registry = createModelRegistry([demoProviderConfig], { env: {}, scripted: { [demoProviderName]: model } });
    // The registry wraps every model it resolves (to price its answers): the demo model answers through it, unpriced.
    const answer = await registry.resolve(route).generate({ route, tools: [], messages: [{ role: 'user', content: 'Say hello' }] }, {});
    expect(answer.text).toContain('[demo model]');
    expect(answer.usage.unpricedCalls).toBe(1);
    expect(registry.providers()).toEqual([{ name: 'demo', kind: 'scripted', models: ['demo'], defaultModel: 'demo' }]);
  });
});

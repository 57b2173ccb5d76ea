import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SessionInput } from '../../src/contracts/session';
import type { ChatMessage, ModelRequest } from '../../src/contracts/model';
import { peekQuery, sendMessageUpdate, transcriptQuery, type TranscriptView } from '../../src/contracts/subagent-messages';
import type { SubagentInput } from '../../src/contracts/subagent';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { ConversationScripts, toolResults } from '../support/conversation-scripts';
import { startScriptedOpenAIServer, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { useWorkerStack } from '../support/worker-stack';

/**
 * Model routes (SEMANTICS §5, issue 16 item 3) against the real dev server: a session delegates with
 * `reasoning_effort` (precedence, and a model change that takes the new model's default), discovers routes
 * in three levels, gives a child a persona, and forks with its completed turns by reference. The model is
 * the strict in-process stand-in; one test goes over HTTP to see `reasoning_effort` and Anthropic's
 * thinking budget on the wire.
 */

const anthropicKeyVariable = 'ERRAND_TEST_ROUTES_ANTHROPIC_KEY';
process.env[anthropicKeyVariable] = 'sk-test-routes';

let server: ScriptedOpenAIServer;
const scripts = new ConversationScripts();

/** The session's own route: a reasoning model on low effort. */
const sessionRoute = { provider: 'scripted', model: 'thinker', reasoningEffort: 'low' };

beforeAll(async () => {
  server = await startScriptedOpenAIServer();
});
afterAll(async () => {
  await server?.close();
});

const stack = useWorkerStack(() => ({
  label: 'routes',
  scripted: {
    scripted: {
      model: scripts.model,
      models: [
        'scripted-model',
        { id: 'thinker', reasoningEfforts: ['low', 'medium', 'high'], defaultReasoningEffort: 'medium' },
        { id: 'deep', contextWindow: 200_000, maxOutputTokens: 16_000, reasoningEfforts: ['high', 'max'], defaultReasoningEffort: 'max' },
      ],
    },
    other: { model: scripts.model, models: ['other-model'] },
  },
  providers: [
    { name: 'wire', kind: 'openai-compatible', baseUrl: server.url, models: [{ id: 'wire-thinker', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'high' }] },
    { name: 'wire-claude', kind: 'anthropic', baseUrl: server.url, apiKeyEnv: anthropicKeyVariable, models: [{ id: 'claude-thinker', reasoningEfforts: ['low', 'medium', 'high'], defaultReasoningEffort: 'medium' }], defaultModel: 'claude-thinker' },
  ],
  // The session's model is also the default route, so a child that names nothing keeps it (SEMANTICS §3).
  env: { ERRAND_DEFAULT_MODEL: 'scripted/thinker' },
}));
beforeAll(() => {
  writeFileSync(join(stack.workingDir, 'zebra-file-4417.txt'), 'stripes');
  mkdirSync(join(stack.workingDir, '.goose', 'recipes'), { recursive: true });
  writeFileSync(join(stack.workingDir, '.goose', 'recipes', 'careful.yaml'), [
    'version: 1.0.0',
    'title: Careful',
    'description: Work carefully',
    'instructions: Think before you answer.',
    'prompt: Work carefully.',
    'settings:',
    '  reasoning_effort: high',
    '',
  ].join('\n'));
});

/** Starts a session on the session's own route unless `overrides` name another. */
const startSession = (overrides: Partial<SessionInput> = {}) => stack.startSession({ route: sessionRoute, ...overrides }, 'routes');

/** Sends a message and waits until the session has answered it (bounded). */
async function ask(handle: WorkflowHandle, message: string, replies = 1): Promise<void> {
  await handle.executeUpdate(sendMessageUpdate, { args: [{ message }] });
  const deadline = Date.now() + 60_000;
  for (;;) {
    const view: TranscriptView = await handle.query(transcriptQuery);
    if (view.entries.filter((entry) => entry.role === 'assistant').length >= replies && view.state === 'waiting') return;
    if (Date.now() > deadline) throw new Error(`the session did not answer (state ${view.state})`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
}

function delegateCall(args: Record<string, unknown>): NonNullable<ScriptStep['toolCalls']>[number] {
  return { name: 'delegate', arguments: args as never };
}

function firstRequest(name: string): ModelRequest {
  const request = scripts.of(name)[0];
  if (!request) throw new Error(`conversation ${name} made no model call`);
  return request;
}

/** Every payload of a workflow's history, decoded (payload data is base64 JSON). */
async function decodedHistory(workflowId: string): Promise<string> {
  const raw = JSON.stringify(await stack.client.workflow.getHandle(workflowId).fetchHistory());
  return [...raw.matchAll(/"data":"([A-Za-z0-9+/=]+)"/g)].map((match) => Buffer.from(match[1] ?? '', 'base64').toString('utf8')).join('\n');
}

describe('reasoning_effort', () => {
  test('precedence: delegate > recipe settings > the parent on the same model > the model default; a model change takes the new default', async () => {
    const names = ['keep', 'named', 'model-change', 'provider-change', 'no-efforts', 'recipe', 'recipe-named'] as const;
    const markers = Object.fromEntries(names.map((name) => [name, scripts.add(`prec-${name}`, [{ text: `${name} done` }])]));
    const session = scripts.add('prec', [
      {
        toolCalls: [
          delegateCall({ instructions: `keep ${markers.keep}` }),
          delegateCall({ instructions: `named ${markers.named}`, reasoning_effort: 'high' }),
          delegateCall({ instructions: `deep ${markers['model-change']}`, model: 'deep' }),
          delegateCall({ instructions: `other ${markers['provider-change']}`, provider: 'other', model: 'other-model' }),
          delegateCall({ instructions: `plain ${markers['no-efforts']}`, model: 'scripted-model' }),
          delegateCall({ source: 'careful', instructions: markers.recipe }),
          delegateCall({ source: 'careful', instructions: markers['recipe-named'], reasoning_effort: 'medium' }),
        ],
      },
      { text: 'all done' },
    ]);
    const handle = await startSession();
    await ask(handle, `Route them ${session}`);

    const seen = (name: string) => {
      const request = firstRequest(`prec-${name}`);
      // The route carries the effort, and the model call sends it.
      expect(request.route.reasoningEffort).toBe(request.reasoningEffort);
      return { route: `${request.route.provider}/${request.route.model}`, effort: request.reasoningEffort };
    };
    expect(seen('keep')).toEqual({ route: 'scripted/thinker', effort: 'low' });
    expect(seen('named')).toEqual({ route: 'scripted/thinker', effort: 'high' });
    expect(seen('model-change')).toEqual({ route: 'scripted/deep', effort: 'max' });
    expect(seen('provider-change')).toEqual({ route: 'other/other-model', effort: undefined });
    expect(seen('no-efforts')).toEqual({ route: 'scripted/scripted-model', effort: undefined });
    expect(seen('recipe')).toEqual({ route: 'scripted/thinker', effort: 'high' });
    expect(seen('recipe-named')).toEqual({ route: 'scripted/thinker', effort: 'medium' });
    // The session's own calls send its route's effort too.
    expect(scripts.of('prec').map((request) => request.reasoningEffort)).toEqual(['low', 'low']);
    expect(toolResults(scripts.of('prec')[1]).map((result) => result.content)).toEqual(names.map((name, index) => `<task-output task="task-${index + 1}">\n${name} done\n</task-output>`));
    expect(scripts.model.rejectedCalls).toEqual([]);
    await handle.cancel();
  });

  test('an effort the chosen model does not take is an error naming the valid efforts, and starts nothing', async () => {
    const session = scripts.add('bad-effort', [
      {
        toolCalls: [
          delegateCall({ instructions: 'x', reasoning_effort: 'extreme' }),
          delegateCall({ instructions: 'x', model: 'scripted-model', reasoning_effort: 'high' }),
          delegateCall({ instructions: 'x', model: 'deep', reasoning_effort: 'low' }),
        ],
      },
      { text: 'none started' },
    ]);
    const handle = await startSession();
    await ask(handle, `Try ${session}`);
    const results = toolResults(scripts.of('bad-effort')[1]);
    expect(results.map((result) => result.isError)).toEqual([true, true, true]);
    expect(results[0]?.content).toBe('delegate was not started: reasoning_effort "extreme" is not one model scripted/thinker takes; valid efforts: low, medium (default), high (see list_subagent_models("scripted", "thinker"))');
    expect(results[1]?.content).toMatch(/^delegate was not started: reasoning_effort "high" cannot be used: model scripted\/scripted-model takes no reasoning effort/);
    expect(results[2]?.content).toMatch(/valid efforts: high, max \(default\)/);
    expect((await handle.query(peekQuery)).tasks ?? []).toEqual([]);
    await handle.cancel();
  });

  test('on the wire: reasoning_effort to an OpenAI-compatible provider, a thinking budget to Anthropic (its default effort)', async () => {
    server.reset();
    server.setResponder(() => ({ text: 'wire answer' }));
    const session = scripts.add('wire', [
      { toolCalls: [delegateCall({ instructions: 'to openai', provider: 'wire', model: 'wire-thinker', reasoning_effort: 'low' }), delegateCall({ instructions: 'to anthropic', provider: 'wire-claude' })] },
      { text: 'both answered' },
    ]);
    const handle = await startSession();
    await ask(handle, `Wire ${session}`);
    expect(toolResults(scripts.of('wire')[1]).map((result) => result.content)).toEqual(['<task-output task="task-1">\nwire answer\n</task-output>', '<task-output task="task-2">\nwire answer\n</task-output>']);
    const openai = server.requests.find((request) => request.api === 'chat-completions');
    const anthropic = server.requests.find((request) => request.api === 'messages');
    expect(openai?.body).toMatchObject({ model: 'wire-thinker', reasoning_effort: 'low' });
    expect(anthropic?.body).toMatchObject({ model: 'claude-thinker', thinking: { type: 'enabled', budget_tokens: 4_096 } });
    expect(server.rejectedRequests).toEqual([]);
    server.setResponder(undefined);
    await handle.cancel();
  });
});

describe('route discovery', () => {
  test('three levels: providers, a provider\'s models, a model\'s efforts; unknown names get suggestions', async () => {
    const list = (args: Record<string, unknown>) => ({ name: 'list_subagent_models', arguments: args as never });
    const session = scripts.add('discover', [
      { toolCalls: [list({}), list({ provider: 'scripted' }), list({ provider: 'scripted', model: 'thinker' }), list({ provider: 'scriptd' }), list({ provider: 'scripted', model: 'thinkr' })] },
      { text: 'found them' },
    ]);
    const handle = await startSession();
    await ask(handle, `Which routes? ${session}`);
    const [providers, models, efforts, unknownProvider, unknownModel] = toolResults(scripts.of('discover')[1]).map((result) => result.content);
    expect(providers).toContain('- scripted (scripted): 3 models, no default model (name one)');
    expect(providers).toContain('- wire (openai-compatible): 1 model, no default model (name one)');
    expect(providers).toContain('- wire-claude (anthropic): 1 model, default model claude-thinker');
    expect(providers).toContain('A delegation that names no route runs on scripted/thinker.');
    expect(providers).not.toContain('thinker:');
    expect(models).toContain('- thinker (the default route): context window 128000 tokens, output limit 8192 (the configured default) tokens, reasoning efforts: low, medium (default), high');
    expect(models).toContain('- deep: context window 200000 tokens, output limit 16000 tokens, reasoning efforts: high, max (default)');
    expect(efforts?.split('\n').slice(0, 4)).toEqual(['Reasoning efforts of scripted/thinker:', '- low', '- medium (default)', '- high']);
    expect(unknownProvider).toMatch(/^No provider named "scriptd" is configured\. Did you mean "scripted"\?/);
    expect(unknownModel).toMatch(/^Provider scripted has no model named "thinkr"\. Did you mean "thinker"\?/);
    await handle.cancel();
  });
});

describe('persona', () => {
  test('a persona is a section of the child\'s system prompt only, apart from instructions and context', async () => {
    const child = scripts.add('persona-child', [{ text: 'reviewed' }]);
    const session = scripts.add('persona', [
      { toolCalls: [delegateCall({ instructions: `Review the notes ${child}`, persona: 'You are Ada, a meticulous reviewer.', context: 'The notes are in notes.md.' }), delegateCall({ instructions: 'x', persona: 'p'.repeat(4_001) })] },
      { text: 'done' },
    ]);
    const handle = await startSession();
    await ask(handle, `Review ${session}`);
    const request = firstRequest('persona-child');
    const [system, task] = request.messages;
    expect(system?.role).toBe('system');
    expect(system?.content).toContain('# Persona\n\nYou are Ada, a meticulous reviewer.\n\n# Reference material\n\nThe notes are in notes.md.');
    expect(task).toEqual({ role: 'user', content: `Review the notes ${child}` });
    // The parent's prompt never carries it (only the delegate call's arguments do).
    for (const parentRequest of scripts.of('persona')) {
      expect(parentRequest.messages.filter((message) => message.role !== 'assistant').some((message) => message.content.includes('Ada'))).toBe(false);
    }
    const results = toolResults(scripts.of('persona')[1]);
    expect(results[0]).toMatchObject({ content: '<task-output task="task-1">\nreviewed\n</task-output>' });
    expect(results[1]?.content).toBe('delegate was not started: persona: persona must be at most 4000 characters: a persona says who the subagent is in a few paragraphs; put reference material into context');
    await handle.cancel();
  });
});

describe('fork', () => {
  test('the fork starts from exactly the parent\'s completed turns, by reference, on the parent\'s route', async () => {
    scripts.add('fork-child', [{ text: 'The fork summarised the listing.' }]);
    const session = scripts.add('fork-parent', [
      { toolCalls: [{ name: 'developer__list_directory', arguments: { path: '.' } }] },
      // The fork call has a sibling in the same turn: neither is in the fork's prefix.
      { toolCalls: [delegateCall({ fork: true, instructions: '[fork-script:fork-child] Summarise the listing.' }), { name: 'developer__read_file', arguments: { path: 'zebra-file-4417.txt' } }] },
      { text: 'The fork is done.' },
    ]);
    const handle = await startSession();
    await ask(handle, `Look around unique-parent-words-7731 ${session}`);

    const parentSecond = scripts.of('fork-parent')[1];
    const child = firstRequest('fork-child');
    if (!parentSecond) throw new Error('the parent made no second call');
    // The parent's messages 0..n-1 (system, task, the listing call and its result), then the fork's task.
    expect(child.messages.slice(0, -1)).toEqual(parentSecond.messages);
    expect(parentSecond.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    const task = child.messages[child.messages.length - 1];
    expect(task?.role).toBe('user');
    expect(task?.content).toMatch(/^\[errand\] You are now a fork of this conversation/);
    expect(task?.content).toContain('# Your task\n\n[fork-script:fork-child] Summarise the listing.');
    expect(child.messages.filter((message: ChatMessage) => message.role === 'system')).toHaveLength(1);
    expect(child.messages.some((message) => message.role === 'assistant' && (message.toolCalls ?? []).some((call) => call.name === 'delegate'))).toBe(false);
    // Same provider, model and effort as the parent.
    expect(child.route).toEqual(sessionRoute);
    expect(child.reasoningEffort).toBe('low');
    expect(toolResults(scripts.of('fork-parent')[2]).find((result) => result.toolName === 'delegate')?.content).toBe('<task-output task="task-1">\nThe fork summarised the listing.\n</task-output>');

    // By reference: the fork's history names the parent's conversation and a length, and holds none of its messages.
    const forkId = `${handle.workflowId}~task-1`;
    const history = await decodedHistory(forkId);
    expect(history).not.toContain('unique-parent-words-7731');
    expect(history).not.toContain('zebra-file-4417');
    const started = (await stack.client.workflow.getHandle(forkId).fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    const input = JSON.parse(Buffer.from(started ?? new Uint8Array()).toString('utf8')) as SubagentInput;
    expect(input.fork).toEqual({ conversationId: `${handle.workflowId}@${handle.firstExecutionRunId}`, length: 4 });
    // The Web UI says what the child is: a fork, on the parent's route and effort.
    const details = await (await stack.client.workflow.getHandle(forkId).describe()).staticDetails();
    expect(details).toContain('model: scripted/thinker (reasoning effort low)');
    expect(details).toContain(`fork of: ${handle.workflowId} (its first 4 messages)`);
    expect(scripts.model.rejectedCalls).toEqual([]);
    await handle.cancel();
  });

  test('fork with a route change, continuable, source or persona is an error that says why, and starts nothing', async () => {
    const session = scripts.add('fork-refused', [
      {
        toolCalls: [
          delegateCall({ fork: true, instructions: 'x', model: 'deep' }),
          delegateCall({ fork: true, instructions: 'x', reasoning_effort: 'high' }),
          delegateCall({ fork: true, instructions: 'x', continuable: true }),
          delegateCall({ fork: true, source: 'careful' }),
          delegateCall({ fork: true, instructions: 'x', persona: 'Ada' }),
        ],
      },
      { text: 'nothing forked' },
    ]);
    const handle = await startSession();
    await ask(handle, `Fork badly ${session}`);
    const results = toolResults(scripts.of('fork-refused')[1]);
    expect(results.map((result) => result.isError)).toEqual([true, true, true, true, true]);
    expect(results[0]?.content).toBe(
      "delegate was not started: fork cannot be combined with model: a fork keeps your route (scripted/thinker with reasoning effort low), because a different provider, model or reasoning effort would not reuse the provider's prompt cache of the conversation it continues; leave them out, or delegate without fork",
    );
    expect(results[1]?.content).toMatch(/fork cannot be combined with reasoning_effort: a fork keeps your route/);
    expect(results[2]?.content).toMatch(/fork and continuable cannot be combined: a fork is one-shot/);
    expect(results[3]?.content).toMatch(/fork cannot be combined with source/);
    expect(results[4]?.content).toMatch(/fork cannot be combined with persona: a fork keeps your system prompt unchanged/);
    expect((await handle.query(peekQuery)).tasks ?? []).toEqual([]);
    await handle.cancel();
  });
});

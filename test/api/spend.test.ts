import { childWorkflowId } from '../../src/contracts/workflow-ids';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { httpTransport } from '../../src/cli/api-transport';
import { modelsCommand } from '../../src/cli/catalog-commands';
import type { CliContext } from '../../src/cli/cli-context';
import { peekCommand } from '../../src/cli/delegation-commands';
import { sessionsCommand } from '../../src/cli/session-commands';
import { usageCommand } from '../../src/cli/usage-command';
import { isJsonObject } from '../../src/llm/json-value';
import type { ScriptStep } from '../../src/llm/scripted-step';
import { startScriptedOpenAIServer, type RecordedRequest, type ScriptedOpenAIServer } from '../support/scripted-openai-server';
import { eventually, json, keys, postJson, startApiStack, type ApiStack } from './api-harness';

/**
 * Spend (SEMANTICS §6): a delegation with two model calls and a child, over the OpenAI wire of the scripted
 * vendor (cached prompt tokens reported as OpenAI reports them), priced by the model entry. Exact
 * micro-dollars at each level: the child, the parent's own calls, the parent with its child — in the API,
 * the result, the session view and the CLI.
 *
 * Prices (USD per million tokens): input 2, output 8, cached input 0.5. Per call, in micro-dollars:
 * - parent, call 1 (delegates): 600 plain × 2 + 400 cached × 0.5 + 50 out × 8 = 1,800
 * - child, its one call:        600 plain × 2 + 20 out × 8                      = 1,360
 * - parent, call 2 (answers):   200 plain × 2 + 1,000 cached × 0.5 + 30 out × 8 = 1,140
 * Parent's own: 2,940; with its child: 4,300.
 */

const parentFirst: ScriptStep['usage'] = { inputTokens: 1_000, outputTokens: 50, cachedInputTokens: 400 };
const childOnly: ScriptStep['usage'] = { inputTokens: 600, outputTokens: 20 };
const parentSecond: ScriptStep['usage'] = { inputTokens: 1_200, outputTokens: 30, cachedInputTokens: 1_000 };

const ownParent = { inputTokens: 2_200, outputTokens: 80, cachedInputTokens: 1_400, costMicroUsd: 2_940, costUsd: 0.00294 };
const ownChild = { inputTokens: 600, outputTokens: 20, costMicroUsd: 1_360, costUsd: 0.00136 };
const withChild = { inputTokens: 2_800, outputTokens: 100, cachedInputTokens: 1_400, costMicroUsd: 4_300, costUsd: 0.0043 };

/** The conversation: the first user message that holds `[child]` is the child's; the parent delegates once, then answers. */
function answer(request: RecordedRequest): ScriptStep {
  const body = isJsonObject(request.body) ? request.body : {};
  const messages = Array.isArray(body.messages) ? body.messages.filter(isJsonObject) : [];
  const firstUser = messages.find((message) => message.role === 'user');
  const task = typeof firstUser?.content === 'string' ? firstUser.content : JSON.stringify(firstUser?.content ?? '');
  if (task.includes('[child]')) return { text: 'three files', usage: childOnly };
  if (!messages.some((message) => message.role === 'tool')) {
    return { toolCalls: [{ id: 'call_delegate_1', name: 'delegate', arguments: { instructions: 'count the files [child]', description: 'count the files' } }], usage: parentFirst };
  }
  return { text: 'done: there are three files', usage: parentSecond };
}

let vendor: ScriptedOpenAIServer;
let stack: ApiStack;
beforeAll(async () => {
  vendor = await startScriptedOpenAIServer({ responder: answer });
  stack = await startApiStack({
    extraEnv: {
      ERRAND_PROVIDERS: JSON.stringify([
        { name: 'vendor', kind: 'openai-compatible', baseUrl: vendor.url, models: [{ id: 'priced-model', prices: { input: 2, output: 8, cachedInput: 0.5 } }], defaultModel: 'priced-model' },
      ]),
      ERRAND_MAX_DEPTH: '2',
    },
  });
});
afterAll(async () => {
  await stack?.stop();
  await vendor?.close();
});

function cli(): { context: CliContext; stdout: string[] } {
  const stdout: string[] = [];
  const io = { stdout: (text: string) => void stdout.push(text), stderr: () => undefined, interactive: false };
  return { context: { io, env: {}, cwd: stack.workDir, transport: () => httpTransport(stack.url, keys.acme), close: () => Promise.resolve() }, stdout };
}

const path = (id: string, suffix = '') => `/v1/delegations/${encodeURIComponent(id)}${suffix}`;
const usageTreeSchema: z.ZodType<{ id: string; state: string; turns: number; usage: unknown; totalUsage: unknown; tasks: unknown[] }> = z.looseObject({
  id: z.string(),
  state: z.string(),
  turns: z.number(),
  usage: z.unknown(),
  totalUsage: z.unknown(),
  tasks: z.array(z.unknown()),
});

describe('cost of a delegation with two model calls and a child', () => {
  let id = '';
  beforeAll(async () => {
    const started = await stack.request('/v1/delegations?wait=20s', postJson({ instructions: 'find out how many files there are' }));
    const body = await json(started);
    expect(body).toMatchObject({ state: 'completed', result: { status: 'completed', output: 'done: there are three files' } });
    id = String(body.id);
  });

  it('the result holds its own cost and the cost with its child, in whole micro-dollars', async () => {
    const body = await json(await stack.request(path(id, '/result')));
    expect(body).toMatchObject({ done: true, result: { usage: ownParent, totalUsage: withChild } });
    expect(vendor.rejectedRequests).toEqual([]);
    expect(vendor.exhaustedRequests).toEqual([]);
    expect(vendor.requests).toHaveLength(3);
  });

  it('GET /v1/delegations/{id}: usage, totalUsage and each task with its cost; the child answers for itself', async () => {
    const parent = await json(await stack.request(path(id)));
    expect(parent).toMatchObject({ state: 'completed', peek: { usage: ownParent, totalUsage: withChild, tasks: [{ taskId: 'task-1', state: 'completed', turns: 1, usage: ownChild }] } });
    const child = await json(await stack.request(path(childWorkflowId(id, 'task-1'))));
    expect(child).toMatchObject({ state: 'completed', peek: { usage: ownChild, totalUsage: ownChild } });
  });

  it('errand peek shows tokens and cost, and errand usage the tree with each level exact', async () => {
    const peek = cli();
    expect(await peekCommand([id], peek.context)).toBe(0);
    const shown = peek.stdout.join('');
    expect(shown).toContain('Tokens: 2200 in (1400 cached), 80 out · $0.00294');
    expect(shown).toContain(`With subagents: 2800 in (1400 cached), 100 out · $0.0043 (errand usage ${id} shows each)`);

    const tree = cli();
    expect(await usageCommand([id, '--json'], tree.context)).toBe(0);
    const root = usageTreeSchema.parse(JSON.parse(tree.stdout.join('')));
    expect(root).toMatchObject({ id, state: 'completed', turns: 2, usage: ownParent, totalUsage: withChild });
    expect(root.tasks).toEqual([{ id: childWorkflowId(id, 'task-1'), description: 'count the files', state: 'completed', turns: 1, usage: ownChild, totalUsage: ownChild, tasks: [] }]);

    const text = cli();
    expect(await usageCommand([id], text.context)).toBe(0);
    expect(text.stdout.join('')).toBe(
      [
        `${id} · completed · 2 turns · 2200 in (1400 cached), 80 out · $0.00294`,
        '  with its tasks: 2800 in (1400 cached), 100 out · $0.0043',
        '  task-1 "count the files" · completed · 1 turn · 600 in, 20 out · $0.00136',
        '',
      ].join('\n'),
    );
  });

  it('errand usage of an id nobody has: the API error, not a tree', async () => {
    const run = cli();
    await expect(usageCommand(['errand-0000000000000000', '--json'], run.context)).rejects.toThrow('no delegation or session has the id errand-0000000000000000 (for this API key)');
    expect(run.stdout).toEqual([]);
  });
});

describe('prices in the model catalog', () => {
  it('GET /v1/models and errand models show the entry\'s prices', async () => {
    const body = await json(await stack.request('/v1/models'));
    expect(body).toMatchObject({ providers: [{ provider: 'vendor', entries: [{ id: 'priced-model', prices: { input: 2, output: 8, cachedInput: 0.5 } }] }] });
    const run = cli();
    expect(await modelsCommand([], run.context)).toBe(0);
    expect(run.stdout.join('')).toBe('vendor/priced-model  (default)  $/M tokens: 2 in, 8 out, 0.5 cached\n');
  });
});

describe('cost of a session and its task', () => {
  it('GET /v1/sessions/{id}, errand sessions show and errand usage show the session with its task', async () => {
    vendor.reset();
    vendor.setResponder(answer);
    const started = await json(await stack.request('/v1/sessions', postJson({ label: 'spend session', message: 'find out how many files there are' })));
    const id = String(started.id);
    const session = await eventually(async () => {
      const body = await json(await stack.request(`/v1/sessions/${encodeURIComponent(id)}`));
      const entries = z.object({ transcript: z.object({ entries: z.array(z.object({ role: z.string(), text: z.string() })) }) }).parse(body).transcript.entries;
      // The reply and the roll-up of the child's cost are written in separate workflow tasks: wait for both.
      const rolledUp = z.object({ peek: z.object({ totalUsage: z.object({ costMicroUsd: z.number() }) }) }).safeParse(body).data?.peek.totalUsage.costMicroUsd === withChild.costMicroUsd;
      return entries.some((entry) => entry.role === 'assistant' && entry.text === 'done: there are three files') && rolledUp ? body : undefined;
    }, 20_000);
    expect(session).toMatchObject({ peek: { usage: ownParent, totalUsage: withChild, tasks: [{ taskId: 'task-1', usage: ownChild }] } });

    const shown = cli();
    expect(await sessionsCommand(['show', id], shown.context)).toBe(0);
    expect(shown.stdout.join('')).toContain(`Tokens (with its subagents): 2800 in (1400 cached), 100 out · $0.0043 · errand usage ${id} shows each task`);

    const tree = cli();
    expect(await usageCommand([id, '--json'], tree.context)).toBe(0);
    const root = usageTreeSchema.parse(JSON.parse(tree.stdout.join('')));
    expect(root).toMatchObject({ id, usage: ownParent, totalUsage: withChild });
    expect(root.tasks).toMatchObject([{ id: childWorkflowId(id, 'task-1'), state: 'completed', usage: ownChild, totalUsage: ownChild }]);
    expect(vendor.rejectedRequests).toEqual([]);
    await stack.request(`/v1/sessions/${encodeURIComponent(id)}/cancel`, postJson({}));
  });
});

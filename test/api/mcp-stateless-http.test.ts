import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { TaskEnabledSession, TaskView } from '@modelcontextprotocol/ext-tasks/client';
import { taskId as asTaskId, type TaskId } from '@modelcontextprotocol/ext-tasks/core';
import { connectTaskSession } from '../support/mcp-task-client';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/api/auth-config';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { startedTask } from '../support/mcp-errand-client';
import { keys, scriptedAnswer, startApiStack, type ApiStack } from './api-harness';

/**
 * `/v1/mcp` at protocol revision 2026-07-28 (stateless, decision 0042) with the MCP TypeScript SDK's second
 * generation client (`@modelcontextprotocol/client`), over real HTTP against the Node API server, a worker
 * with the scripted model and the run's Temporal dev server; a 2025-11-25 client (the first generation's)
 * beside it on the same endpoint.
 */

let stack: ApiStack;
const sessions = new Set<string>();
const clients: { close(): Promise<void> }[] = [];
/** Every request the modern client sent: its headers, by method. */
const sent: { method: string; headers: Headers }[] = [];

beforeAll(async () => {
  // A long foreground subagent (for progress notifications) answers after 12 s; the rest as the harness scripts them.
  // Tenants of this file alone (the MCP session cap counts a tenant's sessions across the Temporal server, which
  // other test files share), with room for the sessions its calls without a handle start.
  stack = await startApiStack({
    extraEnv: {
      ERRAND_API_MAX_MCP_SESSIONS: '40',
      ERRAND_API_KEYS: JSON.stringify([{ tenant: 'stateless-a', sha256: hashApiKey(keys.acme) }, { tenant: 'stateless-b', sha256: hashApiKey(keys.globex) }]),
    },
    answer: (request) => (request.messages.find((message) => message.role === 'user')?.content ?? '').includes('long foreground') ? { text: 'done after a long while', delayMs: 12_000 } : scriptedAnswer(request),
  });
  for (const tenant of ['stateless-a', 'stateless-b']) mkdirSync(join(stack.workDir, tenant), { recursive: true });
});
afterAll(async () => {
  expect(stack.model.rejectedCalls).toHaveLength(0);
  for (const client of clients) await client.close().catch(() => undefined);
  for (const id of sessions) await stack.client.workflow.getHandle(id).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  await stack?.stop();
});

async function connectModern(key: string = keys.acme, withTasks = false): Promise<Client> {
  const recordingFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    sent.push({ method: headers.get('mcp-method') ?? '', headers });
    return fetch(url, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } }, fetch: recordingFetch });
  const client = new Client({ name: 'errand-stateless-test-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, ...(withTasks ? { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } } : {}) });
  clients.push(client);
  await client.connect(transport);
  return client;
}

interface ToolAnswer {
  texts: string[];
  isError: boolean;
  session: string | undefined;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  const result = (await client.callTool({ name, arguments: args })) as { content: { type: string; text?: string }[]; isError?: boolean; _meta?: Record<string, unknown> };
  const session = result._meta?.['errand/session'];
  if (typeof session === 'string') sessions.add(session);
  return { texts: result.content.map((item) => item.text ?? ''), isError: result.isError === true, session: typeof session === 'string' ? session : undefined };
}

describe('/v1/mcp at 2026-07-28 (stateless)', () => {
  it('negotiates 2026-07-28 with server/discover, lists the tools with the session handle and keeps a conversation by handle', async () => {
    const client = await connectModern();
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models']);
    for (const tool of tools) expect(Object.keys(tool.inputSchema.properties ?? {})).toContain('session');

    const first = await call(client, 'delegate', { instructions: 'take a moment statelessly', async: true });
    expect(first.isError).toBe(false);
    expect(first.session).toMatch(/^errand-[0-9a-f]{16}$/);
    expect(first.texts.at(-1)).toContain(`errand started session ${first.session}`);
    const taskId = startedTask(first.texts[0] ?? '');

    // The same session by its handle, as an argument and as _meta: it knows the task, and its notice comes.
    const listed = await call(client, 'load', { session: first.session });
    expect(listed.session).toBe(first.session);
    expect(listed.texts[0]).toContain(taskId);
    const loaded = await call(client, 'load', { source: taskId, session: first.session });
    expect(loaded.texts.join('\n')).toContain('done: take a moment statelessly');
    const byMeta = (await client.callTool({ name: 'load', arguments: {}, _meta: { 'errand/session': first.session } })) as { _meta?: Record<string, unknown>; content: { text?: string }[] };
    expect(byMeta._meta?.['errand/session']).toBe(first.session);
    expect(byMeta.content[0]?.text).toContain(taskId);

    // No request of this client carried a session header; each carried the revision in its headers.
    expect(sent.length).toBeGreaterThan(4);
    for (const request of sent) {
      expect(request.headers.get('mcp-session-id')).toBeNull();
      expect(request.headers.get('mcp-protocol-version')).toBe('2026-07-28');
    }
    expect(sent.map((request) => request.method)).not.toContain('initialize');
  });

  it('refuses a malformed handle naming the argument, and another tenant\'s session', async () => {
    const acme = await connectModern();
    const started = await call(acme, 'list_subagent_models', {});
    expect(started.session).toBeDefined();
    const malformed = await call(acme, 'load', { session: 'not-a-session' });
    expect(malformed.isError).toBe(true);
    expect(malformed.texts[0]).toContain('"session" (or _meta "errand/session") must be an errand session id');
    const globex = await connectModern(keys.globex);
    const foreign = await call(globex, 'load', { session: started.session });
    expect(foreign.isError).toBe(true);
    expect(foreign.texts[0]).toContain(`load did not run: No such session`);
  });

  it('sends progress notifications (turns, cost) while a foreground delegate runs, to a client that sent a progress token', async () => {
    const client = await connectModern();
    const progress: { progress: number; message?: string }[] = [];
    const result = (await client.callTool({ name: 'delegate', arguments: { instructions: 'a long foreground errand' } }, { onprogress: (update) => progress.push(update), resetTimeoutOnProgress: true })) as { content: { text?: string }[] };
    expect(result.content[0]?.text).toContain('done after a long while');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]?.message).toMatch(/~task-1 running: 0 turns/);
    expect(progress.map((update) => update.progress)).toEqual(progress.map((_update, index) => index + 1));
  });

  it('still serves a 2025-11-25 client on the same endpoint: initialize, Mcp-Session-Id, tools', async () => {
    const transport = new LegacyTransport(new URL(`${stack.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${keys.acme}` } } });
    const client = new LegacyClient({ name: 'errand-legacy-test-client', version: '1.0.0' });
    clients.push(client);
    await client.connect(transport);
    expect(transport.sessionId).toMatch(/^errand-[0-9a-f]{16}$/);
    sessions.add(transport.sessionId ?? '');
    const { tools } = await client.listTools();
    for (const tool of tools) expect(Object.keys((tool.inputSchema as { properties?: object }).properties ?? {})).not.toContain('session');
    const result = (await client.callTool({ name: 'delegate', arguments: { instructions: 'summarise for the old client' } })) as { content: { text: string }[] };
    expect(result.content[0]?.text).toContain('done: summarise for the old client');
  });

  describe('the Tasks extension (io.modelcontextprotocol/tasks), with the official Tasks requester', () => {
    const tasksClient = async (key: string = keys.acme) => {
      const connected = await connectTaskSession([stack.url], key);
      clients.push({ close: connected.close });
      // server/discover (at connect) advertised the extension.
      expect(JSON.stringify(connected.client.getServerCapabilities())).toContain('io.modelcontextprotocol/tasks');
      return connected.session;
    };
    const until = async (session: TaskEnabledSession, taskId: TaskId, done: (task: TaskView & { statusMessage?: string }) => boolean): Promise<TaskView & { statusMessage?: string }> => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const task = await session.task(taskId).snapshot();
        if (done(task)) return task;
        if (Date.now() > deadline) throw new Error(`task ${taskId} stayed ${JSON.stringify(task)}`);
        await new Promise((resolveWait) => setTimeout(resolveWait, 300));
      }
    };
    type Settled = { content: { text: string }[]; isError?: boolean };

    it('advertises the extension in server/discover and answers an async delegate with a task whose id is the delegation\'s, read to its result', async () => {
      const session = await tasksClient();
      const execution = await session.callTool('delegate', { instructions: 'take a moment as a task', async: true });
      const taskId = execution.handle?.taskId ?? asTaskId('');
      expect(taskId).toMatch(/^errand-/);
      expect((await stack.request(`/v1/delegations/${taskId}`)).status).toBe(200);
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('completed');
      const result = (outcome as { result: Settled }).result;
      expect(result.isError).toBe(false);
      expect(result.content[0]?.text).toContain('done: take a moment as a task');
      expect((await until(session, taskId, () => true)).statusMessage).toMatch(/completed: \d+ turns?/);
      // A client that does not declare the extension gets the plain answer.
      const answer = await call(await connectModern(), 'delegate', { instructions: 'no task for me', async: true });
      expect(answer.texts[0]).toMatch(/^Started task-\d+ in the background/);
    });

    it('shows a waiting continuable as input_required; tasks/update delivers the next message; tasks/cancel cancels it', async () => {
      const session = await tasksClient();
      const execution = await session.callTool('delegate', { instructions: 'keep talking as a task', async: true, continuable: true });
      const taskId = execution.handle?.taskId ?? asTaskId('');
      const controller = session.task(taskId);
      await until(session, taskId, (task) => task.status === 'input_required');
      await controller.updateJson({ 'message-after-turn-1': { action: 'accept', content: { message: 'and one more thing' } } });
      await until(session, taskId, (task) => task.status === 'input_required' && (task.statusMessage ?? '').includes('2 turns'));
      await controller.cancel();
      await until(session, taskId, (task) => task.status === 'cancelled');
    });

    it('answers an unknown task, or another tenant\'s, with invalid params', async () => {
      const acme = await tasksClient();
      const execution = await acme.callTool('delegate', { instructions: 'mine alone', async: true });
      const taskId = execution.handle?.taskId ?? asTaskId('');
      const globex = await tasksClient(keys.globex);
      await expect(globex.task(taskId).snapshot()).rejects.toThrow(/Task not found/);
      await expect(acme.task(asTaskId('errand-0000000000000000')).snapshot()).rejects.toThrow(/Task not found/);
    });
  });
});

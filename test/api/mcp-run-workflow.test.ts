import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { TaskEnabledSession, TaskView } from '@modelcontextprotocol/ext-tasks/client';
import { taskId as asTaskId, type TaskId } from '@modelcontextprotocol/ext-tasks/core';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/api/auth-config';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { connectTaskSession } from '../support/mcp-task-client';
import { keys, scriptedAnswer, startApiStack, type ApiStack } from './api-harness';

/**
 * `run_workflow` over MCP (SEMANTICS §7, decision 0045), over real HTTP against the Node API server, a worker
 * with the scripted model and the run's Temporal dev server: a 2025-11-25 client (the SDK's first
 * generation) and a 2026-07-28 client (its second) run a workflow source and an inline script, in the
 * foreground and in the background; with the Tasks extension an async run is a task whose id is the run's,
 * read through tasks/get (agents and cost) and cancelled through tasks/cancel.
 */

let stack: ApiStack;
const sessions = new Set<string>();
const clients: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  // Tenants of this file alone: the MCP session cap counts a tenant's sessions across the shared Temporal server.
  stack = await startApiStack({
    extraEnv: { ERRAND_API_MAX_MCP_SESSIONS: '20', ERRAND_API_KEYS: JSON.stringify([{ tenant: 'runwf-a', sha256: hashApiKey(keys.acme) }, { tenant: 'runwf-b', sha256: hashApiKey(keys.globex) }]) },
    // A long agent (for progress notifications) answers after 11 s; the rest as the harness scripts them.
    answer: (request) => ((request.messages.find((message) => message.role === 'user')?.content ?? '').includes('a long star') ? { text: 'counted a long star', delayMs: 11_000 } : scriptedAnswer(request)),
  });
  for (const tenant of ['runwf-a', 'runwf-b']) mkdirSync(join(stack.workDir, tenant), { recursive: true });
  // A workflow source of tenant runwf-a's project: `.claude/workflows/greet.js`.
  mkdirSync(join(stack.workDir, 'runwf-a', '.claude', 'workflows'), { recursive: true });
  writeFileSync(join(stack.workDir, 'runwf-a', '.claude', 'workflows', 'greet.js'), "const greeting = await agent('greet ' + args.who, { label: 'greet' });\nreturn { greeting };\n");
});
afterAll(async () => {
  expect(stack.model.rejectedCalls).toHaveLength(0);
  for (const client of clients) await client.close().catch(() => undefined);
  for (const id of sessions) await stack.client.workflow.getHandle(id).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  await stack?.stop();
});

type Answer = { content: { type: string; text?: string }[]; isError?: boolean; _meta?: Record<string, unknown> };

async function legacyClient(): Promise<{ client: LegacyClient; sessionId: string }> {
  const transport = new LegacyTransport(new URL(`${stack.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${keys.acme}` } } });
  const client = new LegacyClient({ name: 'errand-runwf-legacy-client', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  const sessionId = transport.sessionId ?? '';
  sessions.add(sessionId);
  return { client, sessionId };
}

async function modernClient(): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${keys.acme}` } } });
  const client = new Client({ name: 'errand-runwf-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  clients.push(client);
  await client.connect(transport);
  return client;
}

function text(answer: Answer): string {
  return answer.content.map((item) => item.text ?? '').join('\n');
}

describe('run_workflow over MCP', () => {
  it('2025-11-25: listed with the session tools; a workflow source in the foreground, an inline script in the background read with load', async () => {
    const { client, sessionId } = await legacyClient();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models']);
    const listed = tools.find((tool) => tool.name === 'run_workflow');
    expect(Object.keys((listed?.inputSchema as { properties?: object }).properties ?? {})).toEqual(expect.arrayContaining(['name', 'script', 'args', 'async', 'cost_budget_usd']));

    const named = (await client.callTool({ name: 'run_workflow', arguments: { name: 'greet', args: { who: 'ada' } } })) as Answer;
    expect(named.isError ?? false).toBe(false);
    expect(text(named)).toContain(`Workflow run ${sessionId}~task-1 (greet) ended completed: 1 agents`);
    expect(text(named)).toContain('"greeting": "done: greet ada"');
    // The run is the tenant's: the workflows API shows it to this key, not to another tenant's.
    expect((await stack.request(`/v1/workflows/${sessionId}~task-1`)).status).toBe(200);
    expect((await stack.request(`/v1/workflows/${sessionId}~task-1`, { key: keys.globex })).status).toBe(404);

    const unknown = (await client.callTool({ name: 'run_workflow', arguments: { name: 'gret' } })) as Answer;
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toMatch(/^run_workflow was not started: name: .*gret/);

    const background = (await client.callTool({ name: 'run_workflow', arguments: { script: "return await agent('count the stars');", async: true } })) as Answer;
    expect(text(background)).toMatch(new RegExp(`^Started task-3 in the background: workflow run ${sessionId}~task-3 \\(inline script\\)`));
    const loaded = (await client.callTool({ name: 'load', arguments: { source: 'task-3' } })) as Answer;
    expect(text(loaded)).toContain('Status: completed');
    expect(text(loaded)).toContain('"done: count the stars"');
  });

  it('2026-07-28: an inline script in the foreground answers with its result and the session handle', async () => {
    const client = await modernClient();
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('run_workflow');
    const answer = (await client.callTool({ name: 'run_workflow', arguments: { script: "const [a, b] = await parallel([() => agent('left'), () => agent('right')]);\nreturn a + ' | ' + b;" } })) as Answer;
    const session = answer._meta?.['errand/session'];
    expect(typeof session).toBe('string');
    sessions.add(String(session));
    expect(answer.isError ?? false).toBe(false);
    expect(text(answer)).toContain('ended completed: 2 agents');
    expect(text(answer)).toContain('"done: left | done: right"');
  });

  it('2026-07-28: a foreground run sends progress notifications (agents by state, tokens, cost) to a client that sent a progress token', async () => {
    const client = await modernClient();
    const progress: { progress: number; message?: string }[] = [];
    const answer = (await client.callTool(
      { name: 'run_workflow', arguments: { script: "const first = await agent('count a long star', { label: 'stars' });\nconst second = await agent('name it');\nreturn [first, second];" } },
      { onprogress: (update) => progress.push(update), resetTimeoutOnProgress: true },
    )) as Answer;
    sessions.add(String(answer._meta?.['errand/session']));
    expect(answer.isError ?? false).toBe(false);
    expect(text(answer)).toContain('ended completed: 2 agents');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]?.message).toMatch(/^errand-[0-9a-f]{16}~task-1 running: 0 agents done, 1 running, 0 waiting, 0 failed; \d+ tokens, /);
    expect(progress.map((update) => update.progress)).toEqual(progress.map((_update, index) => index + 1));
  });

  describe('with the Tasks extension: an async run is a task whose id is the run id', () => {
    const tasksClient = async (): Promise<TaskEnabledSession> => {
      const connected = await connectTaskSession([stack.url], keys.acme);
      clients.push({ close: connected.close });
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

    it('tasks/get reads the run to its result (agents done, cost)', async () => {
      const session = await tasksClient();
      const execution = await session.callTool('run_workflow', { script: "return await agent('take a moment in a run', { label: 'moment' });", async: true });
      const taskId = execution.handle?.taskId ?? asTaskId('');
      expect(taskId).toMatch(/^errand-[0-9a-f]{16}~task-1$/);
      expect((await stack.request(`/v1/workflows/${taskId}`)).status).toBe(200);
      const { outcome } = await execution.settle();
      expect(outcome, JSON.stringify(outcome)).toMatchObject({ status: 'completed' });
      const result = (outcome as { result: { content: { text: string }[]; isError?: boolean } }).result;
      expect(result.isError).toBe(false);
      expect(result.content[0]?.text).toMatch(new RegExp(`^workflow run ${taskId} completed: 1 agents done, 0 failed, \\d+ tokens, \\$`));
      expect(result.content[0]?.text).toContain('"done: take a moment in a run"');
      expect((await until(session, taskId, () => true)).statusMessage).toMatch(/^completed: 1 agents done, 0 running, 0 waiting, 0 failed; \d+ tokens, \$/);
    });

    it('tasks/get shows the running agent; tasks/cancel cancels the run and its agent', async () => {
      const session = await tasksClient();
      const execution = await session.callTool('run_workflow', { script: "return await agent('a slow survey', { label: 'survey' });", async: true });
      const taskId = execution.handle?.taskId ?? asTaskId('');
      const running = await until(session, taskId, (task) => (task.statusMessage ?? '').includes('1 running'));
      expect(running.status).toBe('working');
      expect(running.statusMessage).toMatch(/^running: 0 agents done, 1 running, 0 waiting, 0 failed; 0 tokens/);
      await session.task(taskId).cancel();
      await until(session, taskId, (task) => task.status === 'cancelled');
      const shown = (await (await stack.request(`/v1/workflows/${taskId}`)).json()) as { view: { status: string } };
      expect(shown.view.status).toBe('cancelled');
      const agent = (await stack.client.workflow.getHandle(`${taskId}~agent-1`).result()) as { status: string };
      expect(agent.status).toBe('cancelled');
    });
  });
});

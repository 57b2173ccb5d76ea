import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { TaskEnabledSession, TaskView } from '@modelcontextprotocol/ext-tasks/client';
import { taskId as asTaskId, type TaskId } from '@modelcontextprotocol/ext-tasks/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/api/auth-config';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { keys, scriptedAnswer, startApiStack, type ApiStack, errandMcpEnv } from '../api/api-harness';
import { callErrandTool, connectErrandMcp, errandBin, nextNotice, startedTask } from '../support/mcp-errand-client';
import { connectModernStdio, type ModernStdioConnection } from '../support/mcp-stdio-modern-client';

/**
 * `errand mcp` (the CLI bundle) at both MCP protocol revisions over stdio, in both of its modes: in process
 * (straight to Temporal) and bridged to an API's `/v1/mcp` (`ERRAND_API_URL`). The 2025-11-25 client is the
 * MCP TypeScript SDK's first generation (initialize, one session per connection); the 2026-07-28 client is
 * its second generation pinned to that revision (server/discover, a session handle per call), with the
 * official Tasks requester. A worker with the scripted model runs the sessions and subagents (api-harness).
 */

let stack: ApiStack;
let baseEnv: Record<string, string>;
const sessions = new Set<string>();
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  // A long foreground subagent (for progress notifications, sent every 5 s) answers after 8 s.
  stack = await startApiStack({
    answer: (request) => ((request.messages.find((message) => message.role === 'user')?.content ?? '').includes('long foreground') ? { text: 'done after a long while', delayMs: 8_000 } : scriptedAnswer(request)),
    // Tenants of this file alone: the MCP session cap counts a tenant's sessions across the shared Temporal server.
    extraEnv: { ERRAND_API_KEYS: JSON.stringify([{ tenant: 'stdio-revisions-a', sha256: hashApiKey(keys.acme) }, { tenant: 'stdio-revisions-b', sha256: hashApiKey(keys.globex) }]) },
  });
  for (const tenant of ['stdio-revisions-a', 'stdio-revisions-b']) mkdirSync(join(stack.workDir, tenant), { recursive: true });
  baseEnv = errandMcpEnv(stack);
});
afterAll(async () => {
  expect(stack.model.rejectedCalls).toHaveLength(0);
  for (const close of closers) await close().catch(() => undefined);
  for (const id of sessions) await stack.client.workflow.getHandle(id).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  await stack?.stop();
});

const modes = [
  { mode: 'in process', env: () => baseEnv },
  { mode: 'bridged to /v1/mcp', env: () => ({ ...baseEnv, ERRAND_API_URL: stack.url, ERRAND_API_KEY: keys.acme }) },
];

type Settled = { content: { text: string }[]; isError?: boolean };

async function until(session: TaskEnabledSession, taskId: TaskId, done: (task: TaskView & { statusMessage?: string }) => boolean): Promise<TaskView & { statusMessage?: string }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const task = await session.task(taskId).snapshot();
    if (done(task)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stayed ${JSON.stringify(task)}`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 300));
  }
}

/** The 2026-07-28 envelope of a raw request. */
const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
};

/** Writes each message to a fresh `errand mcp` and waits for its answer in turn; resolves with the answers and the exit status. */
async function rawExchange(env: Record<string, string>, messages: { id: number }[]): Promise<{ answers: Record<string, unknown>[]; code: number | null }> {
  const child = spawn(process.execPath, [errandBin, 'mcp'], { env, cwd: stack.workDir, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.resume();
  const exited = new Promise<number | null>((resolveExit) => child.once('close', (code) => resolveExit(code)));
  const answers: Record<string, unknown>[] = [];
  for (const message of messages) {
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    const deadline = Date.now() + 30_000;
    const answered = () => stdout.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Record<string, unknown>).find((answer) => answer.id === message.id);
    while (answered() === undefined && Date.now() < deadline && child.exitCode === null) await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    answers.push(answered() ?? {});
  }
  child.stdin.end();
  return { answers, code: await exited };
}

describe.each(modes)('errand mcp over stdio, $mode', ({ env }) => {
  it('lets the opening exchange choose the revision: server/discover is a probe, a 2026-07-28 request pins it, and a later initialize is refused as the revision says', async () => {
    const initialize = { method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    const modern = await rawExchange(env(), [
      { id: 1, method: 'server/discover', params: { _meta: envelope } } as never,
      { id: 2, method: 'tools/list', params: { _meta: envelope } } as never,
      { id: 3, ...initialize } as never,
    ]);
    expect(modern.code).toBe(0);
    const [discovered, listed, refused] = modern.answers;
    expect(discovered?.result).toMatchObject({ supportedVersions: ['2026-07-28'], capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
    expect((listed?.result as { tools: { name: string }[] }).tools.map((tool) => tool.name)).toContain('delegate');
    expect(refused?.error).toMatchObject({ code: -32022 });

    // A client that probes and then initializes gets 2025-11-25 (and its session).
    const legacy = await rawExchange(env(), [{ id: 1, method: 'server/discover', params: { _meta: envelope } } as never, { id: 2, ...initialize } as never]);
    expect(legacy.code).toBe(0);
    const result = legacy.answers[1]?.result as { protocolVersion: string; instructions: string };
    expect(result.protocolVersion).toBe('2025-11-25');
    const session = /errand session (errand-[0-9a-f]{16})/.exec(result.instructions)?.[1];
    expect(session).toBeDefined();
    sessions.add(session ?? '');
  });

  it('serves a 2025-11-25 client as before: tools, a foreground and a background delegate, a continuable talked to and cancelled', async () => {
    const { client, sessionId } = await connectErrandMcp(env(), stack.workDir);
    closers.push(() => (client as LegacyClient).close());
    sessions.add(sessionId);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models']);
    for (const tool of tools) expect(Object.keys((tool.inputSchema as { properties?: object }).properties ?? {})).not.toContain('session');
    const foreground = await callErrandTool(client, 'delegate', { instructions: 'summarise for the old stdio client' });
    expect(foreground.texts[0]).toContain('done: summarise for the old stdio client');
    // A long foreground delegate reports progress to a client that asked for it (stdio carries it at 2025-11-25 too).
    const progress: { progress: number; message?: string }[] = [];
    const long = (await client.callTool({ name: 'delegate', arguments: { instructions: 'a long foreground errand, old client' } }, undefined, { onprogress: (update) => progress.push(update), resetTimeoutOnProgress: true })) as { content: Array<{ text?: string }> };
    expect(long.content[0]?.text).toContain('done after a long while');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]?.message).toMatch(/~task-\d+ running: 0 turns/);

    const background = startedTask((await callErrandTool(client, 'delegate', { instructions: 'take a moment in the background', async: true })).texts[0] ?? '');
    const loaded = await callErrandTool(client, 'load', { source: background });
    expect(loaded.texts.join('\n')).toContain('done: take a moment in the background');

    const continuable = startedTask((await callErrandTool(client, 'delegate', { instructions: 'stay around over stdio', continuable: true })).texts[0] ?? '');
    const answered = (text: string) => text.includes(`Background task ${continuable} answered and is waiting for your next send_message`);
    await nextNotice(client, answered);
    const sent = await callErrandTool(client, 'send_message', { task_id: continuable, message: 'one more question' });
    expect(sent.texts[0]).toBe(`Message delivered to ${continuable}. Its answer will arrive as a task notice.`);
    await nextNotice(client, answered);
    const cancelled = await callErrandTool(client, 'load', { source: continuable, cancel: true });
    expect(cancelled.isError).toBe(false);
    expect(cancelled.texts.join('\n')).toContain(continuable);
  });

  describe('a 2026-07-28 client', () => {
    let connection: ModernStdioConnection;
    beforeAll(async () => {
      connection = await connectModernStdio(env(), stack.workDir);
      closers.push(connection.close);
    });

    it('negotiates 2026-07-28 with server/discover (the Tasks extension advertised) and lists the tools with the session handle', async () => {
      const { client } = connection;
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(JSON.stringify(client.getServerCapabilities())).toContain('io.modelcontextprotocol/tasks');
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models']);
      for (const tool of tools) expect(Object.keys(tool.inputSchema.properties ?? {})).toContain('session');
    });

    it('runs a foreground delegate in a session it starts and names, with progress to a client that asked for it, and keeps the session by handle', async () => {
      const { client } = connection;
      const progress: { progress: number; message?: string }[] = [];
      const first = (await client.callTool({ name: 'delegate', arguments: { instructions: 'a long foreground errand over stdio' } }, { onprogress: (update) => progress.push(update), resetTimeoutOnProgress: true })) as Settled & { _meta?: Record<string, unknown> };
      expect(first.content[0]?.text).toContain('done after a long while');
      const session = first._meta?.['errand/session'];
      expect(session).toMatch(/^errand-[0-9a-f]{16}$/);
      sessions.add(String(session));
      expect(first.content.at(-1)?.text).toContain(`errand started session ${String(session)}`);
      expect(progress.length).toBeGreaterThanOrEqual(1);
      expect(progress[0]?.message).toMatch(/~task-1 running: 0 turns/);
      // The same session by its handle: no new one starts.
      const again = (await client.callTool({ name: 'list_subagent_models', arguments: { session } })) as Settled & { _meta?: Record<string, unknown> };
      expect(again._meta?.['errand/session']).toBe(session);
      expect(again.content[0]?.text).toContain('scripted');
      expect(again.content.map((item) => item.text).join('\n')).not.toContain('errand started session');

      // `errand mcp --session <id>`: a call that names no session uses that one.
      const pinned = await connectModernStdio(env(), stack.workDir, ['--session', String(session)]);
      closers.push(pinned.close);
      const unnamed = (await pinned.client.callTool({ name: 'list_subagent_models', arguments: {} })) as Settled & { _meta?: Record<string, unknown> };
      expect(unnamed._meta?.['errand/session']).toBe(session);
      expect(unnamed.content.map((item) => item.text).join('\n')).not.toContain('errand started session');
    });

    it('answers a background delegate with a task (the delegation), read with tasks/get to its result', async () => {
      const execution = await connection.session.callTool('delegate', { instructions: 'take a moment as a stdio task', async: true });
      const taskId = execution.handle?.taskId ?? asTaskId('');
      expect(taskId).toMatch(/^errand-/);
      // The task is the delegation: a subagent workflow of that id.
      expect((await stack.client.workflow.getHandle(taskId).describe()).workflowId).toBe(taskId);
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe('completed');
      const result = (outcome as { result: Settled }).result;
      expect(result.isError).toBe(false);
      expect(result.content[0]?.text).toContain('done: take a moment as a stdio task');
      expect((await until(connection.session, taskId, () => true)).statusMessage).toMatch(/completed: \d+ turns?/);
    });

    it('shows a waiting continuable as input_required; tasks/update delivers the next message; tasks/cancel cancels it', async () => {
      const { session } = connection;
      const execution = await session.callTool('delegate', { instructions: 'keep talking as a stdio task', async: true, continuable: true });
      const taskId = execution.handle?.taskId ?? asTaskId('');
      const controller = session.task(taskId);
      await until(session, taskId, (task) => task.status === 'input_required');
      await controller.updateJson({ 'message-after-turn-1': { action: 'accept', content: { message: 'and one more thing' } } });
      await until(session, taskId, (task) => task.status === 'input_required' && (task.statusMessage ?? '').includes('2 turns'));
      await controller.cancel();
      await until(session, taskId, (task) => task.status === 'cancelled');
      await expect(session.task(asTaskId('errand-0000000000000000')).snapshot()).rejects.toThrow(/Task not found/);
    });
  });
});

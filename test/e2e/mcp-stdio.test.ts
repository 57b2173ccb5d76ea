import { spawn } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { orchestrationToolSpecs } from '../../src/domain/orchestration-tools';
import { startApiStack, type ApiStack, errandMcpEnv } from '../api/api-harness';
import { callErrandTool, connectErrandMcp, errandBin, nextNotice, startedTask, type ErrandMcpConnection } from '../support/mcp-errand-client';

/**
 * `errand mcp` as an MCP client runs it: the MCP TypeScript SDK's client spawns the command as a real
 * process, which talks to the run's Temporal dev server, where a worker with the scripted model runs the
 * session and its subagents (api-harness: "take a moment" answers after 2.5 s, anything else at once).
 */

let stack: ApiStack;
let env: Record<string, string>;
const sessions: string[] = [];
const clients: Client[] = [];

beforeAll(async () => {
  stack = await startApiStack();
  env = errandMcpEnv(stack);
});
afterAll(async () => {
  // The scripted model saw only valid conversations (as strict as the strictest provider).
  expect(stack.model.rejectedCalls).toHaveLength(0);
  for (const client of clients) await client.close().catch(() => undefined);
  for (const id of sessions) await stack.client.workflow.getHandle(id).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  await stack?.stop();
});

/** Spawns `errand mcp` (with `args`); the client and its session are cleaned up after the file. */
async function connect(args: string[] = []): Promise<ErrandMcpConnection> {
  const connection = await connectErrandMcp(env, stack.workDir, args);
  clients.push(connection.client);
  if (!sessions.includes(connection.sessionId)) sessions.push(connection.sessionId);
  return connection;
}

const call = callErrandTool;

describe('errand mcp (stdio)', () => {
  it('lists the session tools with the same input schemas and descriptions as a session model gets, with hints', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models']);
    for (const tool of tools) {
      const spec = orchestrationToolSpecs[tool.name as keyof typeof orchestrationToolSpecs];
      expect(tool.inputSchema).toEqual(spec.inputSchema);
      expect(tool.description).toBe(spec.description);
    }
    expect(tools.find((tool) => tool.name === 'list_subagent_models')?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(tools.find((tool) => tool.name === 'delegate')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true });
    const models = await call(client, 'list_subagent_models');
    expect(models.isError).toBe(false);
    expect(models.texts[0]).toContain('scripted');
  });

  it('runs a foreground delegate and returns the subagent\'s answer', async () => {
    const { client } = await connect();
    const result = await call(client, 'delegate', { instructions: 'summarise the readme' });
    expect(result.isError).toBe(false);
    expect(result.texts[0]).toContain('done: summarise the readme');
  });

  it('starts an async delegate and appends its notice to a later tool result; load(task id) returns a result', async () => {
    const { client } = await connect();
    const started = await call(client, 'delegate', { instructions: 'take a moment, then report', async: true });
    expect(started.isError).toBe(false);
    const taskId = startedTask(started.texts[0] ?? '');
    const notice = await nextNotice(client, (text) => text.includes(`Background task ${taskId} completed`));
    expect(notice).toContain('[task notice]');
    expect(notice).toContain('done: take a moment, then report');

    const second = startedTask((await call(client, 'delegate', { instructions: 'take a moment for the second one', async: true })).texts[0] ?? '');
    const loaded = await call(client, 'load', { source: second });
    expect(loaded.isError).toBe(false);
    expect(loaded.texts.join('\n')).toContain('done: take a moment for the second one');
  });

  it('sends a notice also as an MCP logging notification, without a tool call, and still with the next tool result', async () => {
    const { client } = await connect();
    const logged: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      if (notification.params.logger === 'errand' && typeof notification.params.data === 'string') logged.push(notification.params.data);
    });
    const taskId = startedTask((await call(client, 'delegate', { instructions: 'take a moment before the notification', async: true })).texts[0] ?? '');
    const deadline = Date.now() + 30_000;
    while (!logged.some((text) => text.includes(`Background task ${taskId} completed`)) && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 200));
    const notified = logged.filter((text) => text.includes(`Background task ${taskId} completed`));
    expect(notified).toHaveLength(1);
    expect(notified[0]).toContain('done: take a moment before the notification');
    const next = await call(client, 'list_subagent_models');
    expect(next.texts.slice(1)).toEqual(notified);
  });

  it('talks to a continuable task with send_message; its answers arrive as notices; a reconnect finds the tasks', async () => {
    const { client, sessionId } = await connect(['--label', 'continuable test']);
    const taskId = startedTask((await call(client, 'delegate', { instructions: 'stay around for questions', continuable: true })).texts[0] ?? '');
    const answered = (text: string) => text.includes(`Background task ${taskId} answered and is waiting for your next send_message`);
    await nextNotice(client, answered);
    const sent = await call(client, 'send_message', { task_id: taskId, message: 'one more question' });
    expect(sent.isError).toBe(false);
    expect(sent.texts[0]).toBe(`Message delivered to ${taskId}. Its answer will arrive as a task notice.`);
    expect(await nextNotice(client, answered)).toContain("Final message (the task's own words):");
    await client.close();

    const again = await connect(['--session', sessionId]);
    expect(again.sessionId).toBe(sessionId);
    const listing = await call(again.client, 'load');
    expect(listing.texts[0]).toContain(taskId);
    const cancelled = await call(again.client, 'load', { source: taskId, cancel: true });
    expect(cancelled.isError).toBe(false);
    expect(cancelled.texts.join('\n')).toContain(taskId);
  });

  it('refuses what it cannot do with errors that say why', async () => {
    const { client } = await connect();
    const fork = await call(client, 'delegate', { instructions: 'continue from here', fork: true });
    expect(fork.isError).toBe(true);
    expect(fork.texts[0]).toContain('`fork` is not available through MCP');
    const unknown = await call(client, 'approve', { approval_id: 'x', decision: 'approve' });
    expect(unknown.isError).toBe(true);
    expect(unknown.texts[0]).toBe('Unknown tool "approve". The tools are load, delegate, run_workflow, send_message, list_subagent_models.');
    const nothing = await call(client, 'delegate', {});
    expect(nothing.isError).toBe(true);
    expect(nothing.texts[0]).toBe('delegate was not started: give `instructions`, a `source`, or both.');
  });

  it('applies the operator\'s tool policy to the client\'s own calls: a denied tool is neither listed nor run, one under ask is refused saying why', async () => {
    const connection = await connectErrandMcp({ ...env, ERRAND_TOOL_POLICY: JSON.stringify({ rules: { delegate: 'deny', send_message: 'ask' } }) }, stack.workDir);
    clients.push(connection.client);
    sessions.push(connection.sessionId);
    const { client } = connection;
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['load', 'run_workflow', 'send_message', 'list_subagent_models']);
    const denied = await call(client, 'delegate', { instructions: 'should never start' });
    expect(denied.isError).toBe(true);
    expect(denied.texts[0]).toBe('Unknown tool "delegate". The tools are load, run_workflow, send_message, list_subagent_models.');
    const asked = await call(client, 'send_message', { task_id: 'task-1', message: 'hello' });
    expect(asked.isError).toBe(true);
    expect(asked.texts[0]).toContain("send_message did not run: the operator's tool policy says a person approves each call of send_message");
    // Nothing reached the session: it has no task.
    const listing = await call(client, 'load');
    expect(listing.isError).toBe(false);
    expect(listing.texts[0]).not.toContain('task-1');
  });

  it('answers on stdout with protocol messages only and exits 0 when the client closes stdin', async () => {
    const child = spawn(process.execPath, [errandBin, 'mcp'], { env, cwd: stack.workDir, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolveExit) => child.once('close', (code) => resolveExit(code)));
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };
    child.stdin.write(`${JSON.stringify(initialize)}\n`);
    const deadline = Date.now() + 30_000;
    while (!stdout.includes('\n') && Date.now() < deadline && child.exitCode === null) await new Promise((resolveWait) => setTimeout(resolveWait, 100));
    child.stdin.end();
    expect(await exited).toBe(0);
    const lines = stdout.trim().split('\n').map((line) => z.object({ jsonrpc: z.literal('2.0'), id: z.literal(1), result: z.object({ serverInfo: z.object({ name: z.string() }), instructions: z.string() }).loose() }).parse(JSON.parse(line)));
    expect(lines).toHaveLength(1);
    expect(lines[0]?.result.serverInfo.name).toBe('errand');
    const sessionId = /session (errand-[0-9a-f]{16}) started/.exec(stderr)?.[1];
    expect(sessionId).toBeDefined();
    if (sessionId) sessions.push(sessionId);
    expect(lines[0]?.result.instructions).toContain(`errand session ${sessionId ?? ''}`);
  });

  it('refuses a malformed --session and one that does not exist, naming the flag', async () => {
    const run = (args: string[]) => new Promise<{ code: number | null; stderr: string }>((resolveRun, reject) => {
      const child = spawn(process.execPath, [errandBin, 'mcp', ...args], { env, cwd: stack.workDir, stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.once('error', reject);
      child.once('close', (code) => resolveRun({ code, stderr }));
    });
    const malformed = await run(['--session', 'not-a-session']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('--session "not-a-session" is not a session id');
    const missing = await run(['--session', 'errand-0123456789abcdef']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('session errand-0123456789abcdef does not exist');
  });
});

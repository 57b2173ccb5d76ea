import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, type Task } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { until } from '../support/polling';
import { callErrandTool, connectErrandMcp } from '../support/mcp-errand-client';
import { errandMcpEnv, keys, startApiStack, type ApiStack } from './api-harness';

/**
 * MCP tasks at protocol revision 2025-11-25 (the revision's experimental Tasks), with the MCP TypeScript
 * SDK's own task client (its first generation, which speaks 2025-11-25): a background `delegate` as a task
 * over `/v1/mcp` (real HTTP, the Node API server) and over `errand mcp`'s stdio (the CLI as users run it),
 * read with `tasks/get`, `tasks/result` and `tasks/list`, and cancelled with `tasks/cancel`. A task is the
 * delegation: every request builds a new server over the session, so nothing of a task is kept in a process.
 */

let stack: ApiStack;
const clients: Client[] = [];
const sessions: string[] = [];

beforeAll(async () => {
  // A short longest wait: a tasks/result of a task still running answers within it.
  stack = await startApiStack({ extraEnv: { ERRAND_API_MAX_WAIT_MS: '3000' } });
});
afterAll(async () => {
  expect(stack.model.rejectedCalls).toHaveLength(0);
  for (const client of clients) await client.close().catch(() => undefined);
  for (const id of sessions) await stack.client.workflow.getHandle(id).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  await stack?.stop();
});

async function overHttp(key: string = keys.acme, sessionId?: string): Promise<{ client: Client; sessionId: string }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } }, ...(sessionId ? { sessionId } : {}) });
  const client = new Client({ name: 'errand-legacy-tasks-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  // A client given a session id reconnects without a new initialize (the SDK's rule).
  if (!sessionId) expect(client.getServerVersion()?.name).toBe('errand');
  const id = transport.sessionId ?? '';
  if (!sessions.includes(id)) sessions.push(id);
  return { client, sessionId: id };
}

/** A `tools/call` with `task`: the answer is the task. */
async function startTask(client: Client, name: string, args: Record<string, unknown>): Promise<Task> {
  const created = await client.request({ method: 'tools/call', params: { name, arguments: args, task: { ttl: 600_000 } } }, CreateTaskResultSchema);
  return created.task;
}

async function untilEnded(client: Client, taskId: string): Promise<Task> {
  return until(() => client.experimental.tasks.getTask(taskId), (task) => ['completed', 'failed', 'cancelled'].includes(task.status), `task ${taskId} to end`, 60_000);
}

describe('MCP 2025-11-25 tasks', () => {
  it('over HTTP: the server offers tasks, delegate runs as a task whose id is the delegation, read with tasks/get, tasks/result and tasks/list from a new connection', async () => {
    const { client, sessionId } = await overHttp();
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    expect(Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport ?? 'forbidden']))).toEqual({
      load: 'forbidden', delegate: 'optional', run_workflow: 'optional', send_message: 'forbidden', list_subagent_models: 'forbidden',
    });
    const task = await startTask(client, 'delegate', { instructions: 'take a moment, then answer as a task' });
    expect(task.status).toBe('working');
    expect(task.statusMessage).toMatch(/^Started task-\d+ in the background/);
    expect(task.pollInterval).toBeGreaterThan(0);
    // The task is the delegation: a child of this session, running in Temporal.
    const description = await stack.client.workflow.getHandle(task.taskId).describe();
    expect(description.type).toBe('subagentWorkflow');
    // A new connection to the same session (another server instance, as another API process would build) reads it.
    const { client: again } = await overHttp(keys.acme, sessionId);
    const ended = await untilEnded(again, task.taskId);
    expect(ended.status).toBe('completed');
    const result = await again.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(false);
    expect(result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n')).toContain('done: take a moment, then answer as a task');
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({ taskId: task.taskId });
    const listed = await again.experimental.tasks.listTasks();
    expect(listed.tasks.map((listedTask) => [listedTask.taskId, listedTask.status])).toEqual([[task.taskId, 'completed']]);
  });

  it('over HTTP: tasks/cancel cancels the delegation; another tenant finds no such task; a tool that is not a task refuses one', async () => {
    const { client, sessionId } = await overHttp();
    const task = await startTask(client, 'delegate', { instructions: 'slow work as a task' });
    await until(() => client.experimental.tasks.getTask(task.taskId), (current) => current.status === 'working', 'the task to run', 30_000);
    // tasks/result of a running task waits at most as long as the API answers a request, then says to poll.
    await expect(client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema)).rejects.toThrow(/has not ended \(working\) within the 3 s this server waits in one request; ask tasks\/get/);
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.status).toBe('cancelled');
    await until(async () => (await stack.client.workflow.getHandle(task.taskId).describe()).status.name, (status) => status !== 'RUNNING', 'the delegation to end', 30_000);
    expect((await untilEnded(client, task.taskId)).status).toBe('cancelled');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    // Another tenant's session, given the id, finds nothing.
    const { client: other } = await overHttp(keys.globex);
    await expect(other.experimental.tasks.getTask(task.taskId)).rejects.toThrow(/Task not found/);
    await expect(other.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(/not found/i);
    // A tool that starts no background work is not run as a task, and says which are.
    await expect(startTask(client, 'list_subagent_models', {})).rejects.toThrow(/list_subagent_models does not run as a task.*only delegate and run_workflow do/);
    // A task request that the tool refuses is an error with the tool's words, not a task.
    await expect(startTask(client, 'delegate', { instructions: 'x', max_turns: -3 })).rejects.toThrow(/delegate did not start a task: .*max_turns/);
    expect(sessionId).toMatch(/^errand-/);
  });

  it('over HTTP: a continuable that answered is a completed task whose result is its answer so far; send_message goes on with it', async () => {
    const { client } = await overHttp();
    const task = await startTask(client, 'delegate', { instructions: 'keep a note as a continuable task', continuable: true });
    const ended = await untilEnded(client, task.taskId);
    expect(ended.status).toBe('completed');
    expect(ended.statusMessage).toContain('continuable: send it more with send_message');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n')).toContain('done: keep a note as a continuable task');
    const errandTaskId = /^Started (task-\d+)/.exec(task.statusMessage ?? '')?.[1] ?? '';
    const sent = await callErrandTool(client, 'send_message', { task_id: errandTaskId, message: 'and one more' });
    expect(sent.isError).toBe(false);
    expect((await stack.client.workflow.getHandle(task.taskId).describe()).status.name).toBe('RUNNING');
  });

  it('over HTTP: run_workflow as a task is the run, its result the script\'s', async () => {
    const { client } = await overHttp();
    const task = await startTask(client, 'run_workflow', { script: "const [a, b] = await parallel([() => agent('left as a task'), () => agent('right as a task')]);\nreturn a + ' | ' + b;" });
    expect((await stack.client.workflow.getHandle(task.taskId).describe()).type).toBe('workflowRunWorkflow');
    expect((await untilEnded(client, task.taskId)).status).toBe('completed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n')).toContain('done: left as a task | done: right as a task');
  });

  it("over errand mcp's stdio: delegate as a task, read to its end and its result", async () => {
    const connection = await connectErrandMcp(errandMcpEnv(stack), stack.workDir);
    clients.push(connection.client);
    sessions.push(connection.sessionId);
    const { client } = connection;
    expect(client.getServerCapabilities()?.tasks?.requests?.tools?.call).toEqual({});
    const task = await startTask(client, 'delegate', { instructions: 'answer as a stdio task' });
    expect((await untilEnded(client, task.taskId)).status).toBe('completed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content.map((item) => (item.type === 'text' ? item.text : '')).join('\n')).toContain('done: answer as a stdio task');
    expect((await client.experimental.tasks.listTasks()).tasks.map((listed) => listed.taskId)).toEqual([task.taskId]);
  });
});

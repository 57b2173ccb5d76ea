import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callToolUpdate, pendingNoticesQuery } from '../../src/contracts/mcp-session-messages';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { until } from '../support/polling';
import { orchestrationToolSpecs } from '../../src/domain/orchestration-tools';
import { callErrandTool, nextNotice, startedTask } from '../support/mcp-errand-client';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { hashApiKey } from '../../src/api/auth-config';
import { keys, startApiStack, type ApiStack } from './api-harness';

/**
 * `/v1/mcp` (MCP Streamable HTTP) with the MCP TypeScript SDK's client over real HTTP against the Node API
 * server, a worker with the scripted model and the run's Temporal dev server (api-harness).
 */

let stack: ApiStack;
/** The key of the tenant only the session-cap test uses. */
const capKey = 'test-key-mcp-http-cap-0123456789';
/** This file's tenants: the cap counts a tenant's MCP sessions across the run's shared Temporal server, which other files use at once. */
const tenants = { [keys.acme]: 'mcp-http-a', [keys.globex]: 'mcp-http-b', [capKey]: 'mcp-http-cap' };
const clients: Client[] = [];
const sessions: string[] = [];

beforeAll(async () => {
  // A short longest wait, so a call past it answers "still running" quickly; few MCP sessions per tenant.
  stack = await startApiStack({
    extraEnv: {
      ERRAND_API_MAX_WAIT_MS: '8000',
      ERRAND_API_MAX_MCP_SESSIONS: '8',
      ERRAND_API_KEYS: JSON.stringify(Object.entries(tenants).map(([key, tenant]) => ({ tenant, sha256: hashApiKey(key) }))),
    },
  });
  for (const tenant of Object.values(tenants)) mkdirSync(join(stack.workDir, tenant), { recursive: true });
});
afterAll(async () => {
  expect(stack.model.rejectedCalls).toHaveLength(0);
  for (const client of clients) await client.close().catch(() => undefined);
  for (const id of sessions) await stack.client.workflow.getHandle(id).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  await stack?.stop();
});

async function connect(key: string = keys.acme, sessionId?: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/v1/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    ...(sessionId ? { sessionId } : {}),
  });
  const client = new Client({ name: 'errand-http-test-client', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  if (transport.sessionId && !sessions.includes(transport.sessionId)) sessions.push(transport.sessionId);
  return { client, transport };
}

/** Posts one JSON-RPC message to /v1/mcp (with a session id when given). */
async function postMcp(sessionId: string | undefined, message: Record<string, unknown>, key: string = keys.acme): Promise<Response> {
  return stack.request('/v1/mcp', {
    method: 'POST',
    key,
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sessionId ? { 'mcp-session-id': sessionId } : {}) },
    body: JSON.stringify(message),
  });
}

/** The first text of a tool call's JSON-RPC answer. */
function toolText(response: Response): Promise<string> {
  return response.json().then((body: unknown) => {
    const answer = body as { result?: { content?: Array<{ text?: string }> } };
    return answer.result?.content?.[0]?.text ?? JSON.stringify(answer);
  });
}

describe('/v1/mcp (Streamable HTTP)', () => {
  it('needs an API key', async () => {
    const response = await stack.request('/v1/mcp', { method: 'POST', key: null, headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(401);
  });

  it('initializes a session (its id in Mcp-Session-Id), lists the tools with their schemas and runs a foreground delegate', async () => {
    const { client, transport } = await connect();
    expect(transport.sessionId).toMatch(/^errand-[0-9a-f]{16}$/);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['load', 'delegate', 'run_workflow', 'send_message', 'list_subagent_models']);
    for (const tool of tools) expect(tool.inputSchema).toEqual(orchestrationToolSpecs[tool.name as keyof typeof orchestrationToolSpecs].inputSchema);
    const result = await callErrandTool(client, 'delegate', { instructions: 'summarise over http' });
    expect(result.isError).toBe(false);
    expect(result.texts[0]).toContain('done: summarise over http');
  });

  it('brings an async task\'s notice with a later tool result; a reconnect with the session id finds the task; another tenant cannot', async () => {
    const { client, transport } = await connect();
    const sessionId = transport.sessionId ?? '';
    const taskId = startedTask((await callErrandTool(client, 'delegate', { instructions: 'take a moment over http', async: true })).texts[0] ?? '');
    const notice = await nextNotice(client, (text) => text.includes(`Background task ${taskId} completed`));
    expect(notice).toContain('done: take a moment over http');

    const again = await connect(keys.acme, sessionId);
    expect(again.transport.sessionId).toBe(sessionId);
    expect((await callErrandTool(again.client, 'load')).texts[0]).toContain(taskId);
    const loaded = await callErrandTool(again.client, 'load', { source: taskId });
    expect(loaded.texts.join('\n')).toContain('done: take a moment over http');

    const other = await stack.request('/v1/mcp', {
      method: 'POST',
      key: keys.globex,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'load', arguments: {} } }),
    });
    expect(other.status).toBe(404);

    // A client that sends no Accept takes any answer (RFC 9110): it gets JSON; one that names other types is refused.
    const listed = (accept?: string) =>
      stack.request('/v1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'mcp-session-id': sessionId, ...(accept ? { accept } : {}) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
      });
    const anyAnswer = await listed();
    expect(anyAnswer.status).toBe(200);
    expect(JSON.stringify(await anyAnswer.json())).toContain('delegate');
    expect((await listed('text/html')).status).toBe(406);
  });

  it('sends a notice as an MCP logging notification on the GET stream the SDK client keeps open, and still with the next tool result', async () => {
    const { client } = await connect();
    const logged: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      if (notification.params.logger === 'errand' && typeof notification.params.data === 'string') logged.push(notification.params.data);
    });
    const taskId = startedTask((await callErrandTool(client, 'delegate', { instructions: 'take a moment before the http notification', async: true })).texts[0] ?? '');
    const deadline = Date.now() + 30_000;
    while (!logged.some((text) => text.includes(`Background task ${taskId} completed`)) && Date.now() < deadline) await new Promise((resolveWait) => setTimeout(resolveWait, 200));
    const notified = logged.filter((text) => text.includes(`Background task ${taskId} completed`));
    expect(notified).toHaveLength(1);
    expect(notified[0]).toContain('done: take a moment before the http notification');
    const next = await callErrandTool(client, 'list_subagent_models');
    expect(next.texts.slice(1)).toEqual(notified);
  });

  it('refuses a message without a session, and a GET stream without one; DELETE ends the session', async () => {
    const orphan = await stack.request('/v1/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(orphan.status).toBe(400);
    expect(await orphan.text()).toContain('Mcp-Session-Id');
    // GET is the notice stream of a session: without one it is refused, naming the header.
    const stream = await stack.request('/v1/mcp', { headers: { accept: 'text/event-stream' } });
    expect(stream.status).toBe(400);
    expect(await stream.text()).toContain('Mcp-Session-Id');

    const { transport } = await connect();
    const sessionId = transport.sessionId ?? '';
    // Another tenant's session has no stream for this key.
    const foreign = await stack.request('/v1/mcp', { key: keys.globex, headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId } });
    expect(foreign.status).toBe(404);
    await transport.terminateSession();
    const description = await stack.client.workflow.getHandle(sessionId).result();
    expect(description).toMatchObject({ status: 'cancelled' });
    const after = await postMcp(sessionId, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'load', arguments: {} } });
    expect(after.status).toBe(404);
    // tools/list holds nothing of the session: it is answered without Temporal, ended session or not.
    const listed = await postMcp(sessionId, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(await listed.json())).toContain('"delegate"');
  });

  it('runs a retried request (same JSON-RPC id and arguments) as the same call: one child; a new id is a new call', async () => {
    const { transport } = await connect();
    const sessionId = transport.sessionId ?? '';
    const request = { jsonrpc: '2.0', id: 41, method: 'tools/call', params: { name: 'delegate', arguments: { instructions: 'take a moment, once only' } } };
    const first = await toolText(await postMcp(sessionId, request));
    const again = await toolText(await postMcp(sessionId, request));
    expect(first).toContain('done: take a moment, once only');
    expect(again).toBe(first);
    const children = await stack.client.workflow.count(`ErrandParent = '${sessionId}'`);
    expect(children.count).toBe(1);
    // The same arguments under another request id are another call.
    expect(await toolText(await postMcp(sessionId, { ...request, id: 43 }))).toContain('done: take a moment, once only');
    expect((await stack.client.workflow.count(`ErrandParent = '${sessionId}'`)).count).toBe(2);
  });

  it('answers a call past the longest wait with "still running"; the same request again waits for the same task', async () => {
    const { transport } = await connect();
    const sessionId = transport.sessionId ?? '';
    const request = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'delegate', arguments: { instructions: 'slow work in the foreground' } } };
    const first = await toolText(await postMcp(sessionId, request));
    expect(first).toMatch(/^delegate is still running after 8 s, the longest this server waits for one answer\./);
    expect(first).toContain('Send the same request again (the same request id and arguments)');
    const again = await toolText(await postMcp(sessionId, request));
    expect(again).toBe(first);
    const children = await stack.client.workflow.count(`ErrandParent = '${sessionId}'`);
    expect(children.count).toBe(1);
  }, 60_000);

  it('keeps a notice until an answer that carried it is acknowledged: an answer nobody got leaves it for the next call', async () => {
    const { client, transport } = await connect();
    const sessionId = transport.sessionId ?? '';
    const taskId = startedTask((await callErrandTool(client, 'delegate', { instructions: 'take a moment, then be noticed twice', async: true })).texts[0] ?? '');
    const handle = stack.client.workflow.getHandle(sessionId);
    await until(() => handle.query(pendingNoticesQuery), (notices) => notices.length > 0, 'the task\'s notice', 30_000);
    // A call whose answer never reached the client (sent straight to the session, so nothing acknowledges it).
    const lost = await handle.executeUpdate(callToolUpdate, { args: [{ name: 'list_subagent_models', arguments: {} }] });
    expect(lost.notices).toHaveLength(1);
    expect(lost.noticesUpTo).toBe(1);
    // The client's next call gets the notice again; the API acknowledges that answer, so the one after has none.
    const next = await callErrandTool(client, 'list_subagent_models');
    expect(next.texts.slice(1)).toEqual([expect.stringContaining(`Background task ${taskId} completed`)]);
    const after = await callErrandTool(client, 'list_subagent_models');
    expect(after.texts).toHaveLength(1);
    expect(await handle.query(pendingNoticesQuery)).toEqual([]);
  });

  it('sends progress while a foreground delegate runs to a client that asked for it: the answer comes as an event stream', async () => {
    const { client } = await connect();
    const progress: { progress: number; message?: string }[] = [];
    // The slow subagent outlasts the API's longest wait here (8 s): progress comes every 5 s until the call answers "still running".
    const answer = (await client.callTool({ name: 'delegate', arguments: { instructions: 'slow and followed' } }, undefined, { onprogress: (update) => progress.push(update), resetTimeoutOnProgress: true })) as { content: Array<{ text?: string }>; isError?: boolean };
    expect(answer.isError ?? false).toBe(false);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]?.message).toMatch(/~task-\d+ running: 0 turns/);
    // Without a progress token the same call is answered as JSON, as before.
    const plain = await postMcp(sessions.at(-1), { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_subagent_models', arguments: {} } });
    expect(plain.headers.get('content-type')).toMatch(/application\/json/);
  }, 60_000);

  it('refuses an initialize past the tenant\'s MCP session cap with a 429 (ERRAND_API_MAX_MCP_SESSIONS)', async () => {
    const initialize = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cap-test', version: '1.0.0' } } };
    // Ten at once: the cap holds for a burst, whose starts visibility has not listed yet when the next is counted.
    const answers = await Promise.all(Array.from({ length: 10 }, () => postMcp(undefined, initialize, capKey)));
    for (const answer of answers) if (answer.status === 200) sessions.push(answer.headers.get('mcp-session-id') ?? '');
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429, 429]);
    const past = await postMcp(undefined, initialize, capKey);
    expect(past.status).toBe(429);
    expect(past.headers.get('retry-after')).toBe('30');
    expect(await past.text()).toContain('ERRAND_API_MAX_MCP_SESSIONS=8');
    // Another tenant's sessions do not count.
    expect((await postMcp(undefined, initialize)).status).toBe(200);
  });
});

import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelSignal } from '../../src/contracts/subagent-messages';
import { startedTask } from '../support/mcp-errand-client';
import { keys, startApiStack, type ApiStack } from './api-harness';

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
  stack = await startApiStack({ extraEnv: { ERRAND_API_MAX_MCP_SESSIONS: '8' } });
});
afterAll(async () => {
  expect(stack.model.rejectedCalls).toHaveLength(0);
  for (const client of clients) await client.close().catch(() => undefined);
  for (const id of sessions) await stack.client.workflow.getHandle(id).signal(cancelSignal, { reason: 'test over' }).catch(() => undefined);
  await stack?.stop();
});

async function connectModern(key: string = keys.acme): Promise<Client> {
  const recordingFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    sent.push({ method: headers.get('mcp-method') ?? '', headers });
    return fetch(url, init);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`${stack.url}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } }, fetch: recordingFetch });
  const client = new Client({ name: 'errand-stateless-test-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
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
    expect(tools.map((tool) => tool.name)).toEqual(['load', 'delegate', 'send_message', 'list_subagent_models']);
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
});

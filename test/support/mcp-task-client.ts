import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, type TaskEnabledSession } from '@modelcontextprotocol/ext-tasks/client';

/**
 * An MCP Tasks requester for tests: the official Tasks package (`@modelcontextprotocol/ext-tasks`) over the MCP
 * TypeScript SDK's second-generation client at 2026-07-28. The SDK's codecs refuse task results, so the
 * package takes a raw request path from its host (`rawDispatch`): here, one POST per request with the
 * revision's headers, its answer read as JSON or as an event stream.
 */

const protocolVersion = '2026-07-28';
const clientInfo = { name: 'errand-tasks-test-client', version: '1.0.0' };
const clientCapabilities = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

/** The JSON-RPC answer of a response body (JSON, or the last `data:` line of an event stream that answers). */
async function answerOf(response: Response): Promise<{ result?: unknown; error?: { code: number; message: string; data?: unknown } }> {
  const text = await response.text();
  if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) return JSON.parse(text) as never;
  const answers = text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice(5)) as { id?: unknown; result?: unknown; error?: unknown })
    .filter((message) => message.id !== undefined);
  return answers.at(-1) as never;
}

/** A task session against `url` with a bearer key; `urls` alternate per request when there are several (any API process answers). */
export async function connectTaskSession(urls: string[], key: string): Promise<{ client: Client; session: TaskEnabledSession; close(): Promise<void> }> {
  let next = 0;
  const pick = () => urls[next++ % urls.length] ?? '';
  const fetchAny = (_url: string | URL, init?: RequestInit) => fetch(`${pick()}/v1/mcp`, init);
  const transport = new StreamableHTTPClientTransport(new URL(`${urls[0]}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } }, fetch: fetchAny });
  const client = new Client(clientInfo, { versionNegotiation: { mode: { pin: protocolVersion } }, capabilities: clientCapabilities });
  await client.connect(transport);
  let requestIds = 0;
  const rawDispatch = async (request: unknown) => {
    const message = request as { method: string; params?: { name?: string; taskId?: string } };
    const name = message.params?.taskId ?? message.params?.name;
    const response = await fetch(`${pick()}/v1/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': protocolVersion,
        'mcp-method': message.method,
        ...(name !== undefined ? { 'mcp-name': name } : {}),
      },
      // The package hands over method and params; the host frames the JSON-RPC request.
      body: JSON.stringify({ jsonrpc: '2.0', id: (requestIds += 1), ...(request as object) }),
    });
    const answer = await answerOf(response);
    if (answer.error) return { kind: 'error' as const, error: answer.error as never };
    return { kind: 'result' as const, result: answer.result as never };
  };
  const session = createTaskSessionFromClient(client as never, { endpointId: 'errand-test', rawDispatch, v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities } });
  return { client, session, close: async () => { await session.close(); await client.close(); } };
}

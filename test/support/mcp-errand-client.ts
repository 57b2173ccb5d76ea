import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';

/** Helpers for tests that run `errand mcp` as a real process under the MCP TypeScript SDK's client. */

export const errandBin = resolve(__dirname, '..', '..', 'bin', 'errand.js');
const resultSchema = z.object({ content: z.array(z.object({ type: z.literal('text'), text: z.string() })), isError: z.boolean().optional() }).loose();

/** A connected client, the session id `errand mcp` reported, and its stderr so far. */
export interface ErrandMcpConnection {
  client: Client;
  sessionId: string;
  stderr(): string;
}

/** Spawns `errand mcp` (with `args`) under an SDK client over stdio; the caller closes the client (which ends the process). */
export async function connectErrandMcp(env: Record<string, string>, cwd: string, args: string[] = []): Promise<ErrandMcpConnection> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [errandBin, 'mcp', ...args], env, cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'errand-test-client', version: '1.0.0' });
  await client.connect(transport);
  const sessionId = /errand session (errand-[0-9a-f]{16})/.exec(client.getInstructions() ?? '')?.[1];
  if (!sessionId) {
    await client.close();
    throw new Error(`errand mcp gave no session id in its instructions; stderr: ${stderr}`);
  }
  return { client, sessionId, stderr: () => stderr };
}

/** Calls a tool; returns the text items (the result first, then one per notice) and whether it is an error. */
export async function callErrandTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<{ texts: string[]; isError: boolean }> {
  const result = resultSchema.parse(await client.callTool({ name, arguments: args }));
  return { texts: result.content.map((item) => item.text), isError: result.isError === true };
}

/** Calls list_subagent_models until a result carries a notice that matches; returns that notice. */
export async function nextNotice(client: Client, matches: (notice: string) => boolean, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { texts } = await callErrandTool(client, 'list_subagent_models');
    const notice = texts.slice(1).find(matches);
    if (notice !== undefined) return notice;
    if (Date.now() > deadline) throw new Error(`no matching notice arrived within ${timeoutMs} ms`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 300));
  }
}

/** The task id of a background start ("Started task-1 in the background…"). */
export function startedTask(text: string): string {
  const id = /^Started (\S+) in the background/.exec(text)?.[1];
  if (!id) throw new Error(`not a background start: ${text}`);
  return id;
}

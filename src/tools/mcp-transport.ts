import type { Readable } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from './mcp-config';

/**
 * The transport to one MCP server: streamable HTTP, or a stdio process started with only the environment
 * its config names (`envFrom` values read from `env`, then its own `env`). A stdio server's stderr is
 * passed to `onStderr` as it arrives: its tail says why a server failed to start or died.
 */
export function createMcpTransport(config: McpServerConfig, env: NodeJS.ProcessEnv, onStderr: (text: string) => void): Transport {
  if (config.type === 'streamable_http') {
    return new StreamableHTTPClientTransport(new URL(config.url), config.headers ? { requestInit: { headers: config.headers } } : {});
  }
  const passed: Record<string, string> = {};
  for (const key of config.envFrom ?? []) {
    const value = env[key];
    if (value !== undefined) passed[key] = value;
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    // The SDK adds a safe default environment (PATH, HOME, ...) under these.
    env: { ...passed, ...config.env },
    ...(config.cwd ? { cwd: config.cwd } : {}),
    stderr: 'pipe',
  });
  (transport.stderr as Readable | null)?.on('data', (chunk: Buffer) => onStderr(chunk.toString('utf8')));
  return transport;
}

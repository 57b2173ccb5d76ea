import type { Readable } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerConfig } from './mcp-config';

/**
 * How a stdio server's process is started: a program and arguments that wrap the server's own (the
 * sandbox, a PID namespace), and its working directory. Used for recipe-declared servers.
 */
export type StdioLaunch = (command: string, args: readonly string[], env: Record<string, string>, cwd: string | undefined) => { command: string; args: string[]; cwd?: string };

/**
 * The transport to one MCP server: streamable HTTP, or a stdio process started with only the environment
 * its config names (`envFrom` values read from `env`, then its own `env`). A stdio server's stderr is
 * passed to `onStderr` as it arrives: its tail says why a server failed to start or died.
 */
export function createMcpTransport(config: McpServerConfig, env: NodeJS.ProcessEnv, onStderr: (text: string) => void, launch?: StdioLaunch): Transport {
  if (config.type === 'streamable_http') {
    return new StreamableHTTPClientTransport(new URL(config.url), config.headers ? { requestInit: { headers: config.headers } } : {});
  }
  const passed: Record<string, string> = {};
  for (const key of config.envFrom ?? []) {
    const value = env[key];
    if (value !== undefined) passed[key] = value;
  }
  // The SDK adds a safe default environment (PATH, HOME, ...) under these.
  const serverEnv = { ...passed, ...config.env };
  const started = launch ? launch(config.command, config.args ?? [], serverEnv, config.cwd) : { command: config.command, args: config.args ?? [], ...(config.cwd ? { cwd: config.cwd } : {}) };
  const transport = new StdioClientTransport({
    command: started.command,
    args: started.args,
    env: serverEnv,
    ...(started.cwd ? { cwd: started.cwd } : {}),
    stderr: 'pipe',
  });
  (transport.stderr as Readable | null)?.on('data', (chunk: Buffer) => onStderr(chunk.toString('utf8')));
  return transport;
}

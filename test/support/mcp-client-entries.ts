import { parse as parseToml } from 'smol-toml';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/**
 * docs/mcp.md's client entries read the way each client reads them (goose's YAML, Codex's TOML, Cursor's
 * JSON, Claude Code's and the MCP Inspector's command lines), down to what the client then does: start a
 * command with arguments and an environment (stdio), or send requests to a URL with headers (HTTP).
 */

/** What a client does with an entry. */
export type McpClientEntry = { transport: 'stdio'; command: string; args: string[]; env: Record<string, string> } | { transport: 'http'; url: string; headers: Record<string, string> };

const stringMap = z.record(z.string(), z.string());

/** goose's `extensions.<name>` of ~/.config/goose/config.yaml (`type: stdio` or `streamable_http`). */
export function gooseEntry(text: string, name: string): McpClientEntry {
  const extension = z
    .object({ extensions: z.record(z.string(), z.looseObject({ enabled: z.boolean(), type: z.enum(['stdio', 'streamable_http']), name: z.string(), timeout: z.number().optional(), cmd: z.string().optional(), args: z.array(z.string()).optional(), envs: stringMap.optional(), uri: z.string().optional(), headers: stringMap.optional() })) })
    .parse(parseYaml(text)).extensions[name];
  if (!extension) throw new Error(`no goose extension "${name}"`);
  if (extension.type === 'stdio') return { transport: 'stdio', command: required(extension.cmd, 'cmd'), args: extension.args ?? [], env: extension.envs ?? {} };
  return { transport: 'http', url: required(extension.uri, 'uri'), headers: extension.headers ?? {} };
}

/** Codex's `[mcp_servers.<name>]` of ~/.codex/config.toml; `bearer_token_env_var` is read from `env`. */
export function codexEntry(text: string, name: string, env: NodeJS.ProcessEnv): McpClientEntry {
  const server = z
    .object({ mcp_servers: z.record(z.string(), z.strictObject({ command: z.string().optional(), args: z.array(z.string()).optional(), env: stringMap.optional(), url: z.string().optional(), bearer_token_env_var: z.string().optional(), tool_timeout_sec: z.number().optional() })) })
    .parse(parseToml(text)).mcp_servers[name];
  if (!server) throw new Error(`no Codex MCP server "${name}"`);
  if (server.command !== undefined) return { transport: 'stdio', command: server.command, args: server.args ?? [], env: server.env ?? {} };
  const tokenVariable = server.bearer_token_env_var;
  const token = tokenVariable === undefined ? undefined : env[tokenVariable];
  if (tokenVariable !== undefined && !token) throw new Error(`${tokenVariable} is not set`);
  return { transport: 'http', url: required(server.url, 'url'), headers: token ? { Authorization: `Bearer ${token}` } : {} };
}

/** Cursor's `mcpServers.<name>` of ~/.cursor/mcp.json. */
export function cursorEntry(text: string, name: string): McpClientEntry {
  const server = z
    .object({ mcpServers: z.record(z.string(), z.strictObject({ command: z.string().optional(), args: z.array(z.string()).optional(), env: stringMap.optional(), url: z.string().optional(), headers: stringMap.optional() })) })
    .parse(JSON.parse(text)).mcpServers[name];
  if (!server) throw new Error(`no Cursor MCP server "${name}"`);
  if (server.command !== undefined) return { transport: 'stdio', command: server.command, args: server.args ?? [], env: server.env ?? {} };
  return { transport: 'http', url: required(server.url, 'url'), headers: server.headers ?? {} };
}

/** `claude mcp add [--transport http] [--scope s] [-e K=V]... [--header "H: V"]... <name> <url | -- command args...>`. */
export function claudeMcpAddEntry(words: readonly string[]): { name: string; entry: McpClientEntry } {
  const [program, mcp, add, ...rest] = words;
  if (program !== 'claude' || mcp !== 'mcp' || add !== 'add') throw new Error(`not a claude mcp add command: ${words.join(' ')}`);
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const positionals: string[] = [];
  let transport = 'stdio';
  let index = 0;
  for (; index < rest.length; index += 1) {
    const word = rest[index] as string;
    if (word === '--') break;
    const value = rest[index + 1];
    if (word === '--transport' || word === '-t') transport = required(value, word);
    else if (word === '--scope' || word === '-s') required(value, word);
    else if (word === '-e' || word === '--env') Object.assign(env, assignment(required(value, word)));
    else if (word === '--header' || word === '-H') Object.assign(headers, header(required(value, word)));
    else if (word.startsWith('-')) throw new Error(`claude mcp add: option ${word} is not one the docs use`);
    else {
      positionals.push(word);
      continue;
    }
    index += 1;
  }
  const [name, url] = positionals;
  if (!name) throw new Error('claude mcp add: no server name');
  if (transport === 'http') return { name, entry: { transport: 'http', url: required(url, 'url'), headers } };
  const [command, ...args] = rest.slice(index + 1);
  return { name, entry: { transport: 'stdio', command: required(command, 'command after --'), args, env } };
}

/** What `npx @modelcontextprotocol/inspector --cli ...` connects to, and the MCP method it calls. */
export interface InspectorRun {
  entry: McpClientEntry;
  method: string;
  toolName?: string;
  toolArgs: Record<string, string>;
}

/** The Inspector's CLI mode's command line (`-e`, `--transport`, `--header`, `--method`, `--tool-name`, `--tool-arg`). */
export function inspectorRun(words: readonly string[]): InspectorRun {
  const [npx, inspector, cli, ...rest] = words;
  if (npx !== 'npx' || inspector !== '@modelcontextprotocol/inspector' || cli !== '--cli') throw new Error(`not an Inspector CLI command: ${words.join(' ')}`);
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const toolArgs: Record<string, string> = {};
  let transport = 'stdio';
  let method: string | undefined;
  let toolName: string | undefined;
  let index = 0;
  for (; index < rest.length && rest[index] !== '--'; index += 2) {
    const word = rest[index] as string;
    const value = required(rest[index + 1], word);
    if (word === '-e') Object.assign(env, assignment(value));
    else if (word === '--transport') transport = value;
    else if (word === '--header') Object.assign(headers, header(value));
    else if (word === '--method') method = value;
    else if (word === '--tool-name') toolName = value;
    else if (word === '--tool-arg') Object.assign(toolArgs, assignment(value));
    else throw new Error(`Inspector: option ${word} is not one the docs use`);
  }
  const [target, ...args] = rest.slice(index + 1);
  const entry: McpClientEntry = transport === 'http' ? { transport: 'http', url: required(target, 'url'), headers } : { transport: 'stdio', command: required(target, 'command'), args, env };
  return { entry, method: required(method, '--method'), ...(toolName ? { toolName } : {}), toolArgs };
}

function assignment(text: string): Record<string, string> {
  const equals = text.indexOf('=');
  if (equals < 1) throw new Error(`expected KEY=value, got ${text}`);
  return { [text.slice(0, equals)]: text.slice(equals + 1) };
}

function header(text: string): Record<string, string> {
  const colon = text.indexOf(':');
  if (colon < 1) throw new Error(`expected "Name: value", got ${text}`);
  return { [text.slice(0, colon).trim()]: text.slice(colon + 1).trim() };
}

function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`missing ${what}`);
  return value;
}

/**
 * A command line split into words as sh does for the docs' commands: single and double quotes, `$NAME`
 * and `${NAME}` expanded from `env` (unquoted or in double quotes), a `#` word ending the line. No globbing,
 * no command substitution (the docs' client commands use neither).
 */
export function shellWords(line: string, env: NodeJS.ProcessEnv): string[] {
  const words: string[] = [];
  let current: string | undefined;
  let index = 0;
  const expand = (): string => {
    const match = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/.exec(line.slice(index));
    if (!match) {
      index += 1;
      return '$';
    }
    index += match[0].length;
    const name = (match[1] ?? match[2]) as string;
    const value = env[name];
    if (value === undefined) throw new Error(`$${name} is not set`);
    return value;
  };
  while (index < line.length) {
    const char = line[index] as string;
    if (/\s/.test(char)) {
      if (current !== undefined) words.push(current);
      current = undefined;
      index += 1;
    } else if (char === '#' && current === undefined) {
      break;
    } else if (char === "'") {
      const end = line.indexOf("'", index + 1);
      if (end < 0) throw new Error(`unclosed ' in ${line}`);
      current = (current ?? '') + line.slice(index + 1, end);
      index = end + 1;
    } else if (char === '"') {
      current = current ?? '';
      index += 1;
      while (index < line.length && line[index] !== '"') {
        if (line[index] === '$') current += expand();
        else if (line[index] === '\\' && /["\\$`]/.test(line[index + 1] ?? '')) {
          current += line[index + 1];
          index += 2;
        } else {
          current += line[index];
          index += 1;
        }
      }
      if (index >= line.length) throw new Error(`unclosed " in ${line}`);
      index += 1;
    } else if (char === '$') {
      current = (current ?? '') + expand();
    } else {
      current = (current ?? '') + char;
      index += 1;
    }
  }
  if (current !== undefined) words.push(current);
  return words;
}

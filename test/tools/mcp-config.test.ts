import { describe, expect, it } from 'vitest';
import { canonicalJson, mcpServerConfigSchema, mcpServerListSchema, recipeServerFromExtension, recipeServerName } from '../../src/tools/mcp-config';

describe('MCP server config', () => {
  it('accepts stdio and streamable_http servers and refuses bad names and duplicates', () => {
    const servers = mcpServerListSchema.parse([
      { type: 'stdio', name: 'github', command: 'github-mcp', envFrom: ['GITHUB_TOKEN'] },
      { type: 'streamable_http', name: 'search', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer x' } },
    ]);
    expect(servers[0]).toEqual({ type: 'stdio', name: 'github', command: 'github-mcp', args: [], envFrom: ['GITHUB_TOKEN'] });
    const issues = (value: unknown) => mcpServerListSchema.safeParse(value).error?.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) ?? [];
    expect(issues([{ type: 'stdio', name: 'developer', command: 'x' }])).toEqual(['0.name: "developer" is the built-in toolset; choose another name']);
    expect(issues([{ type: 'stdio', name: 'recipe-x', command: 'x' }])[0]).toContain('reserved for recipe-declared servers');
    expect(issues([{ type: 'stdio', name: 'a', command: 'x' }, { type: 'stdio', name: 'a', command: 'y' }])[0]).toContain('used twice');
    expect(issues([{ type: 'stdio', name: 'Bad__Name', command: 'x' }])[0]).toContain('expected a toolset name');
    expect(issues([{ type: 'streamable_http', name: 'a', url: 'ftp://x' }])[0]).toContain('http');
    expect(issues([{ type: 'stdio', name: 'a', command: 'x', colour: 'red' }])[0]).toContain('colour');
    expect(mcpServerConfigSchema.safeParse({ type: 'sse', name: 'a' }).success).toBe(false);
  });

  it('converts goose stdio and streamable_http extensions, passing only allowed env_keys', () => {
    const stdio = recipeServerFromExtension(
      { type: 'stdio', name: 'GitHub Tools', cmd: 'npx', args: ['-y', 'github-mcp'], envs: { MODE: 'ro' }, env_keys: ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY'], timeout: 30 },
      { allowedEnvKeys: ['GITHUB_TOKEN'] },
    );
    if (!stdio.ok) throw new Error(stdio.message);
    expect(stdio.server.declaredName).toBe('GitHub Tools');
    expect(stdio.server.config).toEqual({
      type: 'stdio',
      name: stdio.server.config.name,
      command: 'npx',
      args: ['-y', 'github-mcp'],
      env: { MODE: 'ro' },
      envFrom: ['GITHUB_TOKEN'],
      timeoutMs: 30_000,
    });
    expect(stdio.server.config.name).toMatch(/^recipe-github-tools-[0-9a-f]{8}$/);
    expect(stdio.warnings).toEqual(['extension "GitHub Tools": env_keys AWS_SECRET_ACCESS_KEY are not passed (the operator allows recipes only GITHUB_TOKEN)']);

    const http = recipeServerFromExtension({ type: 'streamable_http', name: 'search', uri: 'https://mcp.example.com/mcp', headers: { 'x-key': 'k' } });
    if (!http.ok) throw new Error(http.message);
    expect(http.server.config).toMatchObject({ type: 'streamable_http', url: 'https://mcp.example.com/mcp', headers: { 'x-key': 'k' } });

    expect(recipeServerFromExtension({ type: 'builtin', name: 'developer' })).toEqual({ ok: false, message: 'extension "developer" has type builtin, which is not an MCP server' });
    const bad = recipeServerFromExtension({ type: 'streamable_http', name: 'bad', uri: 'not a url' });
    expect(bad.ok).toBe(false);
  });

  it('names recipe servers deterministically, apart for different configs', () => {
    const a = recipeServerName('github', { type: 'stdio', command: 'a', args: [] });
    expect(recipeServerName('github', { args: [], command: 'a', type: 'stdio' })).toBe(a);
    expect(recipeServerName('github', { type: 'stdio', command: 'b', args: [] })).not.toBe(a);
    expect(recipeServerName('!!!', { type: 'stdio', command: 'a', args: [] })).toMatch(/^recipe-[0-9a-f]{8}$/);
    expect(canonicalJson({ b: 1, a: [{ d: undefined, c: 2 }] })).toBe('{"a":[{"c":2}],"b":1}');
  });
});

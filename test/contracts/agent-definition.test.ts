import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { agentFrontmatterKeys, parseAgentDocument, splitFrontmatter } from '../../src/contracts/agent-definition';
import { readAgentMcpServers } from '../../src/contracts/agent-mcp-servers';
import { readFrontmatter } from '../../src/sources/frontmatter';

const aliases = { sonnet: 'claude-sonnet-4-5' };

describe('agent files', () => {
  it('splits frontmatter and body', () => {
    expect(splitFrontmatter('---\nname: a\n---\nBody text\n')).toEqual({ frontmatter: 'name: a\n', body: 'Body text\n' });
    expect(splitFrontmatter('no frontmatter')).toBeUndefined();
  });

  it('reads Claude Code agents: comma tools, alias mapping, color quietly ignored, unknown keys warned', () => {
    const result = parseAgentDocument({ name: 'reviewer', description: 'Reviews', model: 'sonnet', tools: 'Read, Grep,Glob', color: 'red', colour: 'red' }, '\nReview carefully.\n', 'reviewer.md', aliases);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual(['reviewer.md: colour: unknown frontmatter field, ignored']);
    expect(result.agent).toEqual({ name: 'reviewer', description: 'Reviews', model: 'claude-sonnet-4-5', inheritModel: false, tools: ['Read', 'Grep', 'Glob'], instructions: 'Review carefully.' });
  });

  it('handles inherit, YAML tool lists, disallowedTools and unmapped aliases', () => {
    const inherit = parseAgentDocument(parse('name: a\nmodel: inherit\ntools: [Read, Bash]\ndisallowedTools: Write'), 'Go.', 'a.md', aliases);
    expect(inherit.agent).toMatchObject({ inheritModel: true, tools: ['Read', 'Bash'], disallowedTools: ['Write'] });
    expect(inherit.agent?.model).toBeUndefined();
    const unmapped = parseAgentDocument({ name: 'b', model: 'opus' }, 'Go.', 'b.md', aliases);
    expect(unmapped.agent?.model).toBeUndefined();
    expect(unmapped.warnings[0]).toContain('b.md: model: alias "opus" has no mapping');
    expect(parseAgentDocument({ name: 'c', model: 'gpt-5.5' }, 'Go.', 'c.md', aliases).agent?.model).toBe('gpt-5.5');
  });

  it('requires a name and names the file and field', () => {
    expect(parseAgentDocument({ description: 'x' }, 'Go.', 'x.md', aliases).errors).toEqual([
      'x.md: name: is required (expected a string (the agent name is required))',
    ]);
    expect(parseAgentDocument({ name: 'x', tools: 5 }, 'Go.', 'x.md', aliases).errors[0]).toBe(
      'x.md: tools: expected a comma-separated string or a list of tool names (got 5)',
    );
  });

  it('reads maxTurns, permissionMode, background and isolation; bad values name the file, field and valid values', () => {
    const full = parseAgentDocument({ name: 'a', maxTurns: 12, permissionMode: 'acceptEdits', background: true, isolation: 'worktree' }, 'Go.', 'a.md', aliases);
    expect(full.agent).toMatchObject({ maxTurns: 12, permissionMode: 'acceptEdits', background: true, isolation: 'worktree' });
    // Read key by key, numbers and booleans arrive as text.
    expect(parseAgentDocument({ name: 'a', maxTurns: '7', background: 'false' }, 'Go.', 'a.md', aliases).agent).toMatchObject({ maxTurns: 7 });
    expect(parseAgentDocument({ name: 'a', background: false }, 'Go.', 'a.md', aliases).agent?.background).toBeUndefined();
    const errors = (frontmatter: Record<string, unknown>) => parseAgentDocument({ name: 'a', ...frontmatter }, 'Go.', 'a.md', aliases).errors;
    expect(errors({ maxTurns: 0 })).toEqual(['a.md: maxTurns: expected a whole number from 1 to 10000 (got 0)']);
    expect(errors({ maxTurns: 2.5 })).toEqual(['a.md: maxTurns: expected a whole number from 1 to 10000 (got 2.5)']);
    expect(errors({ permissionMode: 'yolo' })).toEqual(['a.md: permissionMode: expected one of default, manual, auto, plan, acceptEdits, dontAsk, bypassPermissions (got "yolo")']);
    expect(parseAgentDocument({ name: 'a', permissionMode: 'auto' }, 'Go.', 'a.md', aliases).agent?.permissionMode).toBe('auto');
    expect(parseAgentDocument({ name: 'a', permissionMode: 'manual' }, 'Go.', 'a.md', aliases).agent?.permissionMode).toBe('manual');
    expect(errors({ background: 'sometimes' })).toEqual(['a.md: background: expected true or false (got "sometimes")']);
    expect(errors({ isolation: 'docker' })).toEqual(['a.md: isolation: expected worktree (the only isolation there is) (got "docker")']);
  });

  it('reports no Claude Code field as not supported (hooks, skills and memory are run); initialPrompt is said to be main-session only', () => {
    const result = parseAgentDocument({ name: 'a', skills: ['x'], hooks: {}, memory: 'project', effort: 'high', initialPrompt: 'hi', color: 'blue' }, 'Go.', 'a.md', aliases);
    expect(result.errors).toEqual([]);
    expect(result.warnings.filter((warning) => warning.includes(': not supported by errand: ')).map((warning) => warning.split(': not supported by errand: ')[0])).toEqual([]);
    expect(result.warnings.filter((warning) => !warning.includes(': not supported by errand: '))).toEqual([
      'a.md: initialPrompt: Claude Code sends it only when the agent runs as the main session; a delegated agent starts, in Claude Code as in errand, from the task it is given',
    ]);
    expect(result.agent?.memory).toBe('project');
    expect(result.agent?.skills).toEqual(['x']);
  });

  it('reads memory as one of user, project, local and skills as a list of skill folder names; anything else names the file and field', () => {
    const errors = (frontmatter: Record<string, unknown>) => parseAgentDocument({ name: 'a', ...frontmatter }, 'Go.', 'a.md', aliases).errors;
    for (const memory of ['user', 'project', 'local']) expect(parseAgentDocument({ name: 'a', memory }, 'Go.', 'a.md', aliases).agent?.memory).toBe(memory);
    expect(errors({ memory: 'team' })).toEqual(['a.md: memory: expected one of user, project, local (got "team")']);
    expect(parseAgentDocument({ name: 'a', skills: 'api-conventions, testing' }, 'Go.', 'a.md', aliases).agent?.skills).toEqual(['api-conventions', 'testing']);
    expect(parseAgentDocument({ name: 'a', skills: ['x', 'x'] }, 'Go.', 'a.md', aliases).agent?.skills).toEqual(['x']);
    expect(errors({ skills: ['../secrets'] })[0]).toMatch(/^a\.md: skills\[0\]: expected skill names \(the folder name under \.claude\/skills\/\)/);
    expect(errors({ skills: 3 })[0]).toMatch(/^a\.md: skills: expected a comma-separated string or a list of skill names/);
  });

  it('reads effort as one of Claude Code\'s levels; anything else names the file, field and the levels', () => {
    for (const effort of ['low', 'medium', 'high', 'xhigh', 'max']) {
      expect(parseAgentDocument({ name: 'a', effort }, 'Go.', 'a.md', aliases).agent?.effort).toBe(effort);
    }
    // Read key by key (frontmatter that is not strict YAML), a value arrives as text with spaces around it.
    expect(parseAgentDocument({ name: 'a', effort: ' high ' }, 'Go.', 'a.md', aliases).agent?.effort).toBe('high');
    expect(parseAgentDocument({ name: 'a' }, 'Go.', 'a.md', aliases).agent?.effort).toBeUndefined();
    const errors = (effort: unknown) => parseAgentDocument({ name: 'a', effort }, 'Go.', 'a.md', aliases).errors;
    expect(errors('extreme')).toEqual(['a.md: effort: expected one of low, medium, high, xhigh, max (got "extreme")']);
    expect(errors(3)).toEqual(['a.md: effort: expected one of low, medium, high, xhigh, max (got 3)']);
  });

  it('reads mcpServers as names and inline definitions (list or map), reporting what cannot be carried over', () => {
    const listed = readAgentMcpServers([
      'github',
      { jira: { command: 'npx', args: ['-y', 'jira', 3], env: { JIRA_TOKEN: '${JIRA_TOKEN}', PLAIN: 'x', RENAMED: '${OTHER}', MIXED: 'a-${B}' }, timeout: 5 } },
      { docs: { type: 'http', url: 'https://mcp.example.com', headers: { Authorization: 'Bearer ${TOKEN}', 'X-Team': 'a' } } },
      { old: { type: 'sse', url: 'https://mcp.example.com/sse' } },
    ], 'a.md');
    expect(listed.errors).toEqual([]);
    expect(listed.names).toEqual(['github']);
    expect(listed.servers).toEqual([
      { type: 'stdio', name: 'jira', cmd: 'npx', args: ['-y', 'jira', '3'], envs: { PLAIN: 'x' }, env_keys: ['JIRA_TOKEN'] },
      { type: 'streamable_http', name: 'docs', uri: 'https://mcp.example.com', headers: { 'X-Team': 'a' } },
    ]);
    expect(listed.warnings).toEqual([
      'a.md: mcpServers[1].jira: timeout: unknown server field(s), ignored',
      `a.md: mcpServers[1].jira: env.RENAMED: only KEY: \${KEY} (the worker's variable of the same name) can be passed; "\${OTHER}" is left out`,
      `a.md: mcpServers[1].jira: env.MIXED: only KEY: \${KEY} (the worker's variable of the same name) can be passed; "a-\${B}" is left out`,
      'a.md: mcpServers[2].docs: headers.Authorization: environment expansion is not supported in headers; the header is left out',
      'a.md: mcpServers[3].old: type sse is not supported (errand speaks MCP over stdio and streamable HTTP); the server is not started',
    ]);
    const mapped = readAgentMcpServers({ fs: { command: 'mcp-fs' } }, 'b.md');
    expect(mapped.servers).toEqual([{ type: 'stdio', name: 'fs', cmd: 'mcp-fs', args: [] }]);
    expect(readAgentMcpServers('github, slack', 'c.md').names).toEqual(['github', 'slack']);
    expect(readAgentMcpServers([5], 'd.md').errors).toEqual(['d.md: mcpServers[0]: expected the name of a configured MCP server or {name: definition}']);
    expect(readAgentMcpServers([{ bad: { args: ['x'] } }], 'e.md').errors).toEqual(['e.md: mcpServers[0].bad: command: is required (expected the command to run (a string))']);
    expect(parseAgentDocument({ name: 'a', mcpServers: [{ bad: 'text' }] }, 'Go.', 'a.md', aliases).errors).toEqual(['a.md: mcpServers[0].bad: expected a server definition (command and args, or type and url)']);
  });
});

describe('frontmatter as Claude Code reads it', () => {
  const read = (text: string) => readFrontmatter(text, 'x.md', agentFrontmatterKeys);

  it('reads strict YAML with the YAML parser and no warning', () => {
    expect(read('name: a\ndescription: "quoted: fine"\ntools:\n  - Read\n')).toEqual({ ok: true, value: { name: 'a', description: 'quoted: fine', tools: ['Read'] }, warnings: [] });
  });

  it('reads an unquoted ": " in a value as plain text, with a warning naming the file and key; other fields still parse as YAML', () => {
    const result = read('name: a\ndescription: Use it when: the tests fail. Examples: <example>user: "fix it"</example>\ntools: [Read, Grep]\nmaxTurns: 3\n');
    expect(result).toEqual({
      ok: true,
      value: { name: 'a', description: 'Use it when: the tests fail. Examples: <example>user: "fix it"</example>', tools: ['Read', 'Grep'], maxTurns: 3 },
      warnings: [expect.stringMatching(/^x\.md: description: not valid YAML \(.+\); read as plain text up to the next field/)],
    });
  });

  it('continues a value over indented and unindented lines, folding them as YAML folds plain text', () => {
    const result = read('name: a\ndescription: First line: more\n  second line\n\nExamples:\n<example>\nuser: "hi"\n</example>\n# a comment\nmodel: inherit\n');
    expect(result.ok && result.value).toEqual({ name: 'a', description: 'First line: more second line\nExamples: <example> user: "hi" </example>', model: 'inherit' });
  });

  it('starts a new field at a lower-case key outside an example, so unknown fields are still reported', () => {
    const result = read('name: a\ndescription: one: two\nowner: team-a\n');
    expect(result.ok && result.value).toEqual({ name: 'a', description: 'one: two', owner: 'team-a' });
  });

  it('refuses text before the first field and a field given twice, naming the file and line', () => {
    expect(read('<b>oops</b>: x\nname: a\ndescription: a: b\n')).toEqual({ ok: false, error: 'x.md (frontmatter): line 1: expected a field ("key: value") at the top level' });
    expect(read('name: a\ndescription: a: b\nname: b\n')).toEqual({ ok: false, error: 'x.md (frontmatter): line 3: name: the field is given twice; keep one' });
  });
});


import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { parseAgentDocument, splitFrontmatter } from '../../src/domain/agent-definition';

const aliases = { sonnet: 'claude-sonnet-4-5' };

describe('agent files', () => {
  it('splits frontmatter and body', () => {
    expect(splitFrontmatter('---\nname: a\n---\nBody text\n')).toEqual({ frontmatter: 'name: a\n', body: 'Body text\n' });
    expect(splitFrontmatter('no frontmatter')).toBeUndefined();
  });

  it('reads Claude Code agents: comma tools, alias mapping, unknown keys warned', () => {
    const result = parseAgentDocument({ name: 'reviewer', description: 'Reviews', model: 'sonnet', tools: 'Read, Grep,Glob', color: 'red' }, '\nReview carefully.\n', 'reviewer.md', aliases);
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual(['reviewer.md: color: unknown frontmatter field, ignored']);
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
});

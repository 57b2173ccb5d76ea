import { describe, expect, it } from 'vitest';
import { applyToolPolicy, checkToolCall, resolvePolicy, toolPolicyConfigSchema, toolPolicyNarrowingSchema, type ToolPolicyNarrowing } from '../../src/tools/tool-policy';

const operator = toolPolicyConfigSchema.parse({
  rules: {
    developer__run_command: 'ask',
    github: 'ask',
    'github__get_*': 'allow',
    'github__get_secret*': 'deny',
    'github__delete_*': 'deny',
  },
});

describe('tool policy resolution', () => {
  it('defaults to allow, and within the operator layer the most specific rule wins', () => {
    expect(resolvePolicy(undefined, [], 'developer__read_file')).toBe('allow');
    expect(resolvePolicy(operator, [], 'developer__read_file')).toBe('allow');
    expect(resolvePolicy(operator, [], 'developer__run_command')).toBe('ask');
    expect(resolvePolicy(operator, [], 'github__create_issue')).toBe('ask');
    expect(resolvePolicy(operator, [], 'github__get_issue')).toBe('allow');
    expect(resolvePolicy(operator, [], 'github__get_secret_key')).toBe('deny');
    expect(resolvePolicy(operator, [], 'github__delete_repo')).toBe('deny');
    expect(resolvePolicy(toolPolicyConfigSchema.parse({ default: 'deny', rules: { developer__read_file: 'allow' } }), [], 'developer__write_file')).toBe('deny');
    // Ties of equal specificity go to the stricter decision.
    expect(resolvePolicy(toolPolicyConfigSchema.parse({ rules: { 'a__x*': 'allow', 'a__*y': 'ask' } }), [], 'a__xy')).toBe('ask');
  });

  it('narrowings make it stricter, never wider (deny > ask > allow)', () => {
    const widen: ToolPolicyNarrowing = toolPolicyNarrowingSchema.parse({ default: 'allow', rules: { github: 'allow', github__delete_repo: 'allow', developer__run_command: 'allow' } });
    expect(resolvePolicy(operator, [widen], 'github__create_issue')).toBe('ask');
    expect(resolvePolicy(operator, [widen], 'github__delete_repo')).toBe('deny');
    expect(resolvePolicy(operator, [widen], 'developer__run_command')).toBe('ask');

    const narrow = toolPolicyNarrowingSchema.parse({ rules: { developer__write_file: 'ask', github__get_issue: 'deny' } });
    expect(resolvePolicy(operator, [narrow], 'developer__write_file')).toBe('ask');
    expect(resolvePolicy(operator, [narrow], 'github__get_issue')).toBe('deny');
    expect(resolvePolicy(operator, [narrow], 'developer__read_file')).toBe('allow');
    expect(resolvePolicy(operator, [narrow, { default: 'ask' }], 'developer__read_file')).toBe('ask');
    expect(resolvePolicy(operator, [{ default: 'deny' }, widen], 'developer__read_file')).toBe('deny');

    // Property: for every name and every narrowing, the result is at least as strict as without it.
    const rank = { allow: 0, ask: 1, deny: 2 } as const;
    const names = ['developer__read_file', 'developer__run_command', 'github__get_issue', 'github__delete_repo', 'other__x'];
    const narrowings: ToolPolicyNarrowing[] = [widen, narrow, { default: 'allow' }, { rules: { '*': 'allow' } }, { rules: { other: 'ask' } }];
    for (const name of names) {
      for (const extra of narrowings) {
        expect(rank[resolvePolicy(operator, [extra], name)]).toBeGreaterThanOrEqual(rank[resolvePolicy(operator, [], name)]);
      }
    }
  });

  it('removes denied tools from what the model is offered and lists those needing approval', () => {
    const spec = (name: string) => ({ name, description: '', inputSchema: { type: 'object' } });
    const policed = applyToolPolicy([spec('developer__read_file'), spec('developer__run_command'), spec('github__delete_repo'), spec('github__get_issue')], operator, []);
    expect(policed.offered.map((item) => item.name)).toEqual(['developer__read_file', 'developer__run_command', 'github__get_issue']);
    expect(policed.needsApproval).toEqual(['developer__run_command']);
  });

  it('checks a call again when it runs', () => {
    expect(checkToolCall(operator, [], 'developer__read_file', false)).toEqual({ run: true });
    expect(checkToolCall(operator, [], 'developer__run_command', false)).toEqual({ run: false, message: 'The tool developer__run_command needs a human approval before each call, and this call was not approved.' });
    expect(checkToolCall(operator, [], 'developer__run_command', true)).toEqual({ run: true });
    expect(checkToolCall(operator, [], 'github__delete_repo', true)).toEqual({ run: false, message: 'The tool github__delete_repo is not allowed by policy.' });
  });

  it('validates configuration', () => {
    expect(toolPolicyConfigSchema.safeParse({ rules: { developer: 'maybe' } }).success).toBe(false);
    expect(toolPolicyConfigSchema.safeParse({ rules: { 'a b': 'allow' } }).success).toBe(false);
    expect(toolPolicyNarrowingSchema.safeParse({ extra: 1 }).success).toBe(false);
  });
});

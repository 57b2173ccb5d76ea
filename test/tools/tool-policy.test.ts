import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/settings/config';
import { applyOrchestrationPolicy, checkToolCall, mayDecideApproval, parentMayApprove, resolvePolicy, toolPolicyConfigSchema } from '../../src/tools/tool-policy';

/** Who may decide an `ask`, and the orchestration tools under the same rules as every other tool. */

const everything = ['load', 'delegate', 'send_message', 'list_subagent_models', 'approve'];

describe('approvers', () => {
  it('defaults to human: the parent model gets no approve tool, and a decision from a parent does not count', () => {
    const policy = toolPolicyConfigSchema.parse({ rules: { developer__run_command: 'ask' } });
    expect(policy.approvers).toBe('human');
    expect(parentMayApprove(policy, [])).toBe(false);
    expect(parentMayApprove(undefined, [])).toBe(false);
    expect(applyOrchestrationPolicy(policy, [], everything)).toEqual({
      offered: ['load', 'delegate', 'send_message', 'list_subagent_models'],
      needsApproval: [],
      refused: ['approve'],
      parentMayApprove: false,
    });
    expect(mayDecideApproval('parent', false)).toBe(false);
    expect(mayDecideApproval('human', false)).toBe(true);
  });

  it('human-or-parent lets the parent decide, unless a rule takes approve away', () => {
    const policy = toolPolicyConfigSchema.parse({ approvers: 'human-or-parent' });
    expect(parentMayApprove(policy, [])).toBe(true);
    expect(applyOrchestrationPolicy(policy, [], everything).offered).toContain('approve');
    expect(mayDecideApproval('parent', true)).toBe(true);
    expect(parentMayApprove(toolPolicyConfigSchema.parse({ approvers: 'human-or-parent', rules: { approve: 'deny' } }), [])).toBe(false);
    // A recipe's narrowing can take it away too, never give it.
    expect(parentMayApprove(policy, [{ rules: { approve: 'ask' } }])).toBe(false);
  });

  it('is validated with a message naming what is valid', () => {
    expect(() => loadConfig({ ERRAND_TOOL_POLICY: JSON.stringify({ approvers: 'anyone' }) })).toThrow(/ERRAND_TOOL_POLICY is invalid\n.*approvers: expected "human" \(only a person decides, the default\) or "human-or-parent"/);
  });
});

describe('orchestration tools under the policy', () => {
  it('follow rules that name or match them: deny hides them, ask makes their calls wait', () => {
    const policy = toolPolicyConfigSchema.parse({ rules: { delegate: 'deny', send_message: 'ask', 'list_*': 'deny' } });
    expect(applyOrchestrationPolicy(policy, [], everything)).toEqual({
      offered: ['load', 'send_message'],
      needsApproval: ['send_message'],
      refused: ['delegate', 'list_subagent_models', 'approve'],
      parentMayApprove: false,
    });
    expect(checkToolCall(policy, [], 'delegate', false)).toEqual({ run: false, message: 'The tool delegate is not allowed by policy.' });
    expect(checkToolCall(policy, [], 'send_message', false).run).toBe(false);
    expect(checkToolCall(policy, [], 'send_message', true).run).toBe(true);
  });

  it('are not caught by a default meant for toolsets', () => {
    const policy = toolPolicyConfigSchema.parse({ default: 'deny', rules: { developer: 'allow' } });
    expect(resolvePolicy(policy, [], 'developer__read_file')).toBe('allow');
    expect(resolvePolicy(policy, [], 'github__create_issue')).toBe('deny');
    expect(resolvePolicy(policy, [], 'load')).toBe('allow');
    expect(resolvePolicy(policy, [], 'delegate')).toBe('allow');
    // A narrowing's rules reach them as well (a recipe that forbids its subagent to delegate).
    expect(applyOrchestrationPolicy(policy, [{ default: 'deny', rules: { delegate: 'deny' } }], ['load', 'delegate']).offered).toEqual(['load']);
  });
});

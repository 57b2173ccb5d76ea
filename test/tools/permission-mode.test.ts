import { describe, expect, it } from 'vitest';
import { permissionModeLayer, permissionModes, type PermissionMode } from '../../src/tools/permission-mode';
import { applyToolPolicy, checkToolCall, resolvePolicy, toolPolicyConfigSchema, toolPolicyNarrowingSchema, type ToolPolicyNarrowing } from '../../src/tools/tool-policy';

/**
 * Claude Code permission modes as tool-policy layers: what each leaves the model, against operator
 * policies with and without explicit rules.
 */

const names = ['developer__read_file', 'developer__list_directory', 'developer__search_text', 'developer__write_file', 'developer__run_command', 'github__get_issue'];

function layer(mode: PermissionMode, allowBypass = false): ToolPolicyNarrowing[] {
  const result = permissionModeLayer(mode, { toolsets: ['developer', 'github'], allowBypass, where: 'agents/a.md' });
  if (!result.ok) throw new Error(result.message);
  return result.layer ? [result.layer] : [];
}

function decisions(operator: Parameters<typeof resolvePolicy>[0], layers: ToolPolicyNarrowing[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, resolvePolicy(operator, layers, name)]));
}

const askByDefault = toolPolicyConfigSchema.parse({ default: 'ask', rules: { developer__read_file: 'allow', github__get_issue: 'ask' } });
const askWrites = toolPolicyConfigSchema.parse({ rules: { developer__write_file: 'ask', developer__run_command: 'ask' } });

describe('permission modes', () => {
  it('default is the operator policy unchanged', () => {
    expect(layer('default')).toEqual([]);
    expect(decisions(askByDefault, layer('default'))).toEqual(decisions(askByDefault, []));
  });

  it('manual is default under its newer name; auto is the operator policy with every ask decided by a person', () => {
    const manual = permissionModeLayer('manual', { toolsets: ['developer'], allowBypass: false, where: 'agents/m.md' });
    expect(manual).toEqual({ ok: true, warnings: [] });
    expect(decisions(askByDefault, layer('manual'))).toEqual(decisions(askByDefault, []));
    // errand has no classifier: auto adds no layer (the operator's decisions stand) and takes the approval from the delegating model.
    const auto = permissionModeLayer('auto', { toolsets: ['developer'], allowBypass: false, where: 'agents/a.md' });
    expect(auto).toEqual({ ok: true, approvers: 'human', warnings: [] });
    expect(decisions(askByDefault, layer('auto'))).toEqual(decisions(askByDefault, []));
  });

  it('plan leaves only the read-only developer tools, and says the MCP tools are left out', () => {
    expect(decisions(undefined, layer('plan'))).toEqual({
      developer__read_file: 'allow',
      developer__list_directory: 'allow',
      developer__search_text: 'allow',
      developer__write_file: 'deny',
      developer__run_command: 'deny',
      github__get_issue: 'deny',
    });
    // It never loosens: an operator ask on a read tool still asks.
    expect(resolvePolicy(toolPolicyConfigSchema.parse({ rules: { developer__search_text: 'ask' } }), layer('plan'), 'developer__search_text')).toBe('ask');
    const result = permissionModeLayer('plan', { toolsets: ['developer', 'github'], allowBypass: false, where: 'agents/a.md' });
    expect(result.ok && result.warnings).toEqual(['agents/a.md: permissionMode plan: only the read-only developer tools are offered; the tools of github are not (errand cannot tell which MCP tools only read)']);
    const spec = (name: string) => ({ name, description: '', inputSchema: { type: 'object' } });
    expect(applyToolPolicy(names.map(spec), undefined, layer('plan')).offered.map((item) => item.name)).toEqual(['developer__read_file', 'developer__list_directory', 'developer__search_text']);
  });

  it('acceptEdits lets file writes run without asking where the operator asks by default; an explicit operator rule stands', () => {
    expect(decisions(askByDefault, layer('acceptEdits'))).toEqual({ ...decisions(askByDefault, []), developer__write_file: 'allow' });
    expect(resolvePolicy(askWrites, layer('acceptEdits'), 'developer__write_file')).toBe('ask');
    expect(checkToolCall(askByDefault, layer('acceptEdits'), 'developer__write_file', false)).toEqual({ run: true });
  });

  it('dontAsk denies whatever would ask', () => {
    expect(decisions(askByDefault, layer('dontAsk'))).toEqual({
      developer__read_file: 'allow',
      developer__list_directory: 'deny',
      developer__search_text: 'deny',
      developer__write_file: 'deny',
      developer__run_command: 'deny',
      github__get_issue: 'deny',
    });
    expect(decisions(askWrites, layer('dontAsk'))).toMatchObject({ developer__read_file: 'allow', developer__write_file: 'deny', developer__run_command: 'deny' });
  });

  it('bypassPermissions is refused unless the operator allows it; then the default ask is lifted, explicit rules stand', () => {
    const refused = permissionModeLayer('bypassPermissions', { toolsets: ['developer'], allowBypass: false, where: 'agents/b.md' });
    expect(refused).toEqual({
      ok: false,
      message: 'agents/b.md: permissionMode bypassPermissions is not allowed here: the operator has not enabled it (ERRAND_ALLOW_BYPASS_PERMISSIONS=true). Use default, manual, auto, plan, acceptEdits or dontAsk, or ask the operator.',
    });
    expect(decisions(askByDefault, layer('bypassPermissions', true))).toEqual({
      developer__read_file: 'allow',
      developer__list_directory: 'allow',
      developer__search_text: 'allow',
      developer__write_file: 'allow',
      developer__run_command: 'allow',
      github__get_issue: 'ask',
    });
    const denied = toolPolicyConfigSchema.parse({ default: 'ask', rules: { developer__run_command: 'deny' } });
    expect(resolvePolicy(denied, layer('bypassPermissions', true), 'developer__run_command')).toBe('deny');
  });

  it('a recipe or request narrowing cannot carry the loosening keys', () => {
    expect(toolPolicyNarrowingSchema.safeParse({ allowOverDefaultAsk: ['*'] }).success).toBe(false);
    expect(toolPolicyNarrowingSchema.safeParse({ askBecomes: 'deny' }).success).toBe(false);
    expect(permissionModes).toEqual(['default', 'manual', 'auto', 'plan', 'acceptEdits', 'dontAsk', 'bypassPermissions']);
  });
});

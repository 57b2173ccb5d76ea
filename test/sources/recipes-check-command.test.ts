import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recipesCheckCommand, type RecipeCheckReport } from '../../src/sources/recipes-check-command';
import { agentText, recipeText, writeFiles } from './source-files';

function capture(): { io: { stdout: (s: string) => void; stderr: (s: string) => void }; out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { io: { stdout: (s) => (out += s), stderr: (s) => (err += s) }, out: () => out, err: () => err };
}

describe('errand recipes check', () => {
  it('checks folders recursively and prints ok or the errors; exit 1 when a file fails', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'errand-check-'));
    writeFiles(folder, {
      'good.yaml': recipeText('good', 'colour: red\n'),
      'nested/agent.md': agentText('helper', 'helps'),
      'nested/bad.yaml': 'title: Bad\ndescription: Bad\nprompt: Use {{ missing }}\n',
      'nested/render.yaml': 'title: R\ndescription: R\nprompt: "{{ x | nosuchfilter }}"\nparameters:\n  - {key: x, requirement: required}\n',
      'ignored.txt': 'not checked',
    });
    const out = capture();
    expect(await recipesCheckCommand([folder], out.io)).toBe(1);
    const text = out.out();
    expect(text).toContain(`ok   ${join(folder, 'good.yaml')} (recipe good)`);
    expect(text).toContain(`  warning: ${join(folder, 'good.yaml')}: colour: unknown field, ignored`);
    expect(text).toContain(`ok   ${join(folder, 'nested/agent.md')} (agent helper)`);
    expect(text).toContain(`FAIL ${join(folder, 'nested/bad.yaml')} (recipe bad)`);
    expect(text).toContain('template variable "missing" is not declared');
    expect(text).toContain(`FAIL ${join(folder, 'nested/render.yaml')}`);
    expect(text).toContain('4 file(s) checked, 2 failed');

    const json = capture();
    expect(await recipesCheckCommand([join(folder, 'good.yaml'), join(folder, 'nested/agent.md'), '--json'], json.io)).toBe(0);
    const reports: unknown = JSON.parse(json.out());
    expect(reports).toEqual([
      { file: join(folder, 'good.yaml'), ok: true, kind: 'recipe', name: 'good', warnings: [`${join(folder, 'good.yaml')}: colour: unknown field, ignored`], errors: [] },
      { file: join(folder, 'nested/agent.md'), ok: true, kind: 'agent', name: 'helper', warnings: [], errors: [] },
    ] satisfies RecipeCheckReport[]);
  });

  it('returns 2 for usage errors', async () => {
    const none = capture();
    expect(await recipesCheckCommand([], none.io)).toBe(2);
    expect(none.err()).toContain('usage: errand recipes check');
    const flag = capture();
    expect(await recipesCheckCommand(['--yaml', 'x'], flag.io)).toBe(2);
    expect(flag.err()).toContain('unknown option --yaml');
    const missing = capture();
    expect(await recipesCheckCommand([join(tmpdir(), 'errand-no-such-folder-xyz')], missing.io)).toBe(2);
    expect(missing.err()).toContain('cannot read');
  });
});

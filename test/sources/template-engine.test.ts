import { describe, expect, it } from 'vitest';
import { protectUnparseableExpressions, renderTemplate, templateVariables } from '../../src/sources/template-engine';

describe('templateVariables', () => {
  it('finds free variables and ignores names bound by for and set, filters and tests', () => {
    const text = [
      '{{ target | indent(2) }} {{ region | default("eu") }}',
      '{% for item in items %}{{ item.name }} {{ loop.index }}{% endfor %}',
      '{% set greeting = "hi" %}{{ greeting }}',
      '{{ size | default(3) }}',
      '{% if mode == "fast" or "x" in phases %}{% endif %}{% if flag is defined %}{% endif %}',
      '{% raw %}{{ not_a_variable }}{% endraw %} {{ recipe_dir }}',
    ].join('\n');
    const result = templateVariables(text, 'a.yaml');
    expect(result).toEqual({ ok: true, variables: ['flag', 'items', 'mode', 'phases', 'recipe_dir', 'region', 'size', 'target'] });
  });

  it('reports a syntax error naming the file', () => {
    const result = templateVariables('{% if x %}never closed', 'broken.yaml');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^broken\.yaml: template syntax error \(line 1\): /);
  });
});

describe('renderTemplate', () => {
  it('renders values, indent, default, if and raw like goose', () => {
    const text = 'key:\n  {{ body | indent(2) }}\nregion: {{ region | default("eu") }}\n{% if fast == "true" %}fast{% else %}slow{% endif %} {% raw %}{{ keep }}{% endraw %}';
    const result = renderTemplate(text, { body: 'line one\nline two', fast: 'true' }, 'a.yaml');
    expect(result).toEqual({ ok: true, text: 'key:\n  line one\n  line two\nregion: eu\nfast {{ keep }}' });
  });

  it('does not escape HTML (recipes are prompts)', () => {
    expect(renderTemplate('{{ x }}', { x: '<b>&</b>' }, 'a.yaml')).toEqual({ ok: true, text: '<b>&</b>' });
  });

  it('fails on an undefined variable, naming the file', () => {
    const result = renderTemplate('Hello {{ missing }}', {}, 'a.yaml');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toContain('a.yaml: template error');
  });

  it('passes unparseable {{ }} through literally, as goose does', () => {
    const text = 'Use {{ user name }} and {{ name }}';
    expect(protectUnparseableExpressions(text)).toBe('Use {% raw %}{{ user name }}{% endraw %} and {{ name }}');
    expect(renderTemplate(text, { name: 'n8n' }, 'a.yaml')).toEqual({ ok: true, text: 'Use {{ user name }} and n8n' });
    expect(templateVariables(text, 'a.yaml')).toEqual({ ok: true, variables: ['name'] });
  });
});

import { describe, expect, it } from 'vitest';
import { maxTemplateNesting, maxTemplateOutputChars, maxTemplateSteps, maxTemplateValueDepth } from '../../src/contracts/limits/sources';
import { renderTemplate, templateVariables } from '../../src/sources/template-engine';

const render = (text: string, values: Record<string, unknown> = {}, options = {}) => renderTemplate(text, values as never, 'r.yaml', options);
const text = (template: string, values: Record<string, unknown> = {}) => {
  const result = render(template, values);
  if (!result.ok) throw new Error(result.error);
  return result.text;
};
const failure = (template: string, values: Record<string, unknown> = {}, options = {}) => {
  const result = render(template, values, options);
  if (result.ok) throw new Error(`rendered: ${result.text}`);
  return result.error;
};

describe('template expressions', () => {
  it('prints variables, literals, dot and [ ] access into JSON values', () => {
    const cfg = { name: 'api', ports: [80, 443], nested: { 'a-b': 'dash' } };
    expect(text('{{ cfg.name }} {{ cfg["name"] }} {{ cfg.ports[1] }} {{ cfg.ports.0 }} {{ cfg.nested["a-b"] }}', { cfg })).toBe('api api 443 80 dash');
    expect(text('{{ "a\\"b" }} {{ \'x\' }} {{ 42 }} {{ 1.5 }} {{ true }} {{ none }} {{ [1, "two"] }} {{ {"k": 1} }}')).toBe('a"b x 42 1.5 true none [1, "two"] {"k": 1}');
    expect(text('{{ items[-1] }} {{ word[0] }}', { items: ['a', 'b'], word: 'hey' })).toBe('b h');
  });

  it('does arithmetic, concatenation, comparisons, in, and/or/not and conditional expressions', () => {
    expect(text('{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 7 // 2 }} {{ 7 % 3 }} {{ 2 ** 3 }} {{ 7 / 2 }} {{ -n }}', { n: 4 })).toBe('7 9 3 1 8 3.5 -4');
    expect(text('{{ "a" ~ 1 ~ true }} {{ "x" + "y" }} {{ [1] + [2] }}')).toBe('a1true xy [1, 2]');
    expect(text('{{ 1 < 2 }} {{ "b" >= "a" }} {{ x == "y" }} {{ x != "y" }}', { x: 'y' })).toBe('true true true false');
    expect(text('{{ "vis" in phases }} {{ "z" not in phases }} {{ "ell" in "hello" }} {{ "k" in obj }}', { phases: ['vis', 'basic'], obj: { k: 1 } })).toBe('true true true true');
    expect(text('{{ a and b }} {{ a or b }} {{ not a }} {{ "yes" if a else "no" }} [{{ "only" if b }}]', { a: 'x', b: '' })).toBe(' x false yes []');
  });

  it('applies filters with arguments and keyword arguments', () => {
    expect(text('{{ body | indent(2) }}|{{ body | indent(2, first=true) }}', { body: 'one\ntwo' })).toBe('one\n  two|  one\n  two');
    expect(text('{{ missing | default("eu") }} {{ empty | default("x", true) }} {{ gone | d("y") }} [{{ empty | d("z") }}]', { empty: '' })).toBe('eu x y []');
    expect(text('{{ s | upper }} {{ s | lower }} {{ "  t  " | trim }} {{ "xxhixx" | trim("x") }} {{ s | capitalize }} {{ "a b" | title }}', { s: 'MiXed' })).toBe('MIXED mixed t hi Mixed A B');
    expect(text('{{ items | join(", ") }} {{ items | length }} {{ "héllo" | length }} {{ obj | length }} {{ items | count }}', { items: ['a', 'b'], obj: { a: 1 } })).toBe('a, b 2 5 1 2');
    expect(text('{{ "a-b-c" | replace("-", "+") }} {{ "a-b-c" | replace("-", "+", 1) }}')).toBe('a+b+c a+b-c');
    expect(text('{{ obj | tojson }} {{ "q\\"" | tojson }}', { obj: { a: [1, null] } })).toBe('{"a":[1,null]} "q\\""');
    expect(text('{{ items | first }} {{ items | last }} {{ items | reverse | join }} {{ [3, 1, 2] | sort | join }} {{ [1, 1, 2] | unique | join }}', { items: ['a', 'b'] })).toBe('a b ba 123 12');
    expect(text('{{ "12" | int + 1 }} {{ "1.5" | float }} {{ (-3) | abs }} {{ 2.567 | round(1) }} {{ [1, 2] | sum }} {{ [4, 2] | min }} {{ [4, 2] | max }}')).toBe('13 1.5 3 2.6 3 2 4');
    expect(text('{{ "a b  c" | split | join(",") }} {{ "a,b" | split(",") | last }} {{ "x\\ny" | lines | length }} {{ "one two" | wordcount }}')).toBe('a,b,c b 2 2');
    expect(text('{{ "<b>" | escape }} {{ "<b>" | safe }} {{ 5 | string ~ "!" }} {{ "" | bool }}')).toBe('&lt;b&gt; <b> 5! false');
    expect(text('{% for k, v in obj | items %}{{ k }}={{ v }};{% endfor %}', { obj: { a: 1, b: 2 } })).toBe('a=1;b=2;');
    expect(text('{{ people | join(", ", attribute="name") }}', { people: [{ name: 'Ann' }, { name: 'Bo' }] })).toBe('Ann, Bo');
  });

  it('applies tests, negated or with arguments', () => {
    expect(text('{{ x is defined }} {{ y is defined }} {{ y is undefined }} {{ x is not none }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(2) }}', { x: 1 })).toBe('true false true true true true false');
    expect(text('{{ s is string }} {{ n is number }} {{ o is mapping }} {{ l is sequence }} {{ s is startingwith("ab") }} {{ s is eq "abc" }}', { s: 'abc', n: 1, o: {}, l: [] })).toBe('true true true true true true');
  });
});

describe('template statements', () => {
  it('renders if / elif / else the way goose recipes use them', () => {
    const template = '{% if kind == "a" %}A{% elif kind == "b" or kind == "all" %}B{% else %}other{% endif %}';
    expect([text(template, { kind: 'a' }), text(template, { kind: 'all' }), text(template, { kind: 'z' })]).toEqual(['A', 'B', 'other']);
    expect(text('{% if project_context %}ctx{% endif %}.', { project_context: '' })).toBe('.');
  });

  it('loops over lists, objects and strings with loop variables, else and an if filter', () => {
    expect(text('{% for x in xs %}{{ loop.index }}/{{ loop.length }}:{{ x }}{% if not loop.last %},{% endif %}{% endfor %}', { xs: ['a', 'b', 'c'] })).toBe('1/3:a,2/3:b,3/3:c');
    expect(text('{% for x in xs %}{{ loop.index0 }}{{ loop.revindex }}{{ loop.first }}{% endfor %}', { xs: [1, 2] })).toBe('02true11false');
    expect(text('{% for x in [] %}x{% else %}empty{% endfor %}')).toBe('empty');
    expect(text('{% for x in xs if x > 1 %}{{ x }}{% endfor %}', { xs: [1, 2, 3] })).toBe('23');
    expect(text('{% for k in obj %}{{ k }}{% endfor %} {% for c in "ab" %}{{ c }}.{% endfor %}', { obj: { p: 1, q: 2 } })).toBe('pq a.b.');
    expect(text('{% for i in range(3) %}{{ i }}{% endfor %} {% for i in range(1, 7, 2) %}{{ i }}{% endfor %}')).toBe('012 135');
    expect(text('{% for row in rows %}{% for cell in row %}{{ cell }}{% endfor %};{% endfor %}', { rows: [[1, 2], [3]] })).toBe('12;3;');
  });

  it('sets variables, scoped to a loop turn inside a loop', () => {
    expect(text('{% set greeting = "hi " ~ name %}{{ greeting }}', { name: 'Ann' })).toBe('hi Ann');
    expect(text('{% set a, b = [1, 2] %}{{ a }}{{ b }}')).toBe('12');
    expect(text('{% set x = "out" %}{% for i in [1] %}{% set x = "in" %}{{ x }}{% endfor %}{{ x }}')).toBe('inout');
  });

  it('keeps raw blocks, drops comments and honours whitespace control', () => {
    expect(text('{% raw %}{{ not_a_variable }}{% if %}{% endraw %}')).toBe('{{ not_a_variable }}{% if %}');
    expect(text('a{# a comment {{ x }} #}b')).toBe('ab');
    expect(text('a  {{- " b " -}}  c\n{%- if true %} d {% endif -%}\n e')).toBe('a b c d e');
    expect(text('x {%- raw -%}  {{ y }}  {%- endraw -%} z')).toBe('x{{ y }}z');
  });

  it('passes {{ … }} that does not parse through as text, as goose does', () => {
    expect(text('Use {{ $json.field }} and {{ user name }} and {{ n }}', { n: 1 })).toBe('Use {{ $json.field }} and {{ user name }} and 1');
  });
});

describe('template errors', () => {
  it('refuses undefined values (goose strict mode), naming the file and what was missing', () => {
    expect(failure('Hello {{ missing }}')).toBe('r.yaml: template error: variable "missing" is undefined (goose\'s strict mode: every value a template uses must exist)');
    expect(failure('{{ cfg.nope }}', { cfg: {} })).toContain('variable "cfg".nope is undefined');
    expect(failure('{% if cfg.nope %}x{% endif %}', { cfg: {} })).toContain('is undefined');
    expect(render('{{ cfg.nope }}|{{ cfg.nope | upper }}', { cfg: {} }, { undefinedBehavior: 'lenient' })).toEqual({ ok: true, text: '|' });
  });

  it('names the line of a syntax error and what is supported', () => {
    expect(failure('line one\n{% if x %}never closed')).toBe('r.yaml: template syntax error (line 2): {% if %} is never closed with {% endif %}');
    expect(failure('{% macro m() %}{% endmacro %}')).toBe('r.yaml: template syntax error (line 1): {% macro %} is not supported in recipe templates (supported: if / elif / else, for, set, raw)');
    expect(failure('{% include "x.yaml" %}')).toContain('{% include %} is not supported');
    expect(failure('{% endif %}')).toContain('{% endif %} without a matching opening tag');
    expect(failure('{{ x | nosuch }}', { x: 1 })).toContain('unknown filter "nosuch"');
    expect(failure('{{ 1 / 0 }}')).toContain('division by zero');
    expect(failure('{{ x', {})).toContain('"{{" is never closed with "}}"');
  });

  it('reaches no function, constructor or prototype', () => {
    for (const attempt of ['{{ range.constructor("return process")() }}', '{{ cycler.__init__.__globals__ }}', '{{ joiner().constructor }}', '{{ x.constructor.constructor("return 1")() }}', '{{ x["__proto__"] }}', '{{ x.prototype }}', '{{ x | join | attr("constructor") }}', '{{ "".constructor }}', '{{ x.toString() }}', '{{ loop.cycle("a") }}']) {
      const rendered = render(attempt, { x: { a: 1 } });
      expect(rendered.ok, attempt).toBe(false);
      const checked = templateVariables(attempt, 'r.yaml');
      const refusedByCheck = !checked.ok || checked.variables.some((name) => name !== 'x');
      expect(refusedByCheck, attempt).toBe(true);
    }
    expect(failure('{{ x.constructor }}', { x: {} })).toBe('r.yaml: template error: reading "constructor" is not allowed: templates read the recipe\'s parameter values and nothing else');
    expect(failure('{{ range.constructor("return process")() }}')).toContain('cannot be called: templates can call only range()');
    const checked = templateVariables('{{ range.constructor("return process")() }}', 'r.yaml');
    expect(checked.ok).toBe(false);
    if (!checked.ok) {
      expect(checked.error).toMatch(/^r\.yaml: template error: line 1: /);
      expect(checked.error).toContain('only range() can be called in a template; this template calls "constructor" of a value');
      expect(checked.error).toContain('reading "constructor" is not allowed');
    }
  });

  it('finds free variables, not names bound by for or set, and refuses unknown filters before rendering', () => {
    expect(templateVariables('{% for a in items %}{{ a.b }}{{ loop.index }}{% endfor %}{% set s = t %}{{ s }}{{ recipe_dir }}{{ q | default(r) }}', 'r.yaml')).toEqual({ ok: true, variables: ['items', 'q', 'r', 'recipe_dir', 't'] });
    expect(templateVariables('{{ x | nosuch }}', 'r.yaml')).toMatchObject({ ok: false, error: expect.stringContaining('unknown filter "nosuch"') });
  });
});

describe('template limits', () => {
  it('ends a nested loop at the step limit with an error naming the file', () => {
    const error = failure('{% for a in range(1000) %}{% for b in range(1000) %}{{ b }}{% endfor %}{% endfor %}');
    expect(error).toBe(`r.yaml: template limit: rendering stopped after ${maxTemplateSteps} steps (the limit for one template); is a loop too large?`);
    expect(failure('{% for a in range(1000000000) %}{% endfor %}')).toContain('template limit');
  });

  it('ends a template whose output grows past the output limit', () => {
    expect(failure('{% for a in range(100) %}{{ s }}{% endfor %}', { s: 'x'.repeat(1000) }, { maxOutputChars: 50_000 })).toBe('r.yaml: template limit: rendering stopped: the output passed 50000 characters (the limit for one template)');
    const doubling = Array.from({ length: 30 }, (_item, index) => `{% set s${index + 1} = s${index} ~ s${index} %}`).join('');
    expect(failure(`{% set s0 = "ab" %}${doubling}{{ s30 }}`)).toContain('template limit');
  });

  it('refuses nesting deeper than the limit instead of overflowing the stack', () => {
    const parentheses = (inner: string) => `${'('.repeat(maxTemplateNesting + 5)}${inner}${')'.repeat(maxTemplateNesting + 5)}`;
    expect(failure(`{% if ${parentheses('true')} %}x{% endif %}`)).toContain(`nested more than ${maxTemplateNesting} levels deep`);
    // In {{ }}, an expression too deep to parse passes through as text, like any unparseable {{ }} in goose.
    expect(text(`{{ ${parentheses('1')} }}`)).toBe(`{{ ${parentheses('1')} }}`);
    // A chain builds a tree as deep as it is long: it counts too.
    expect(failure(`{% if ${Array.from({ length: 200 }, () => 'x').join(' or ')} %}y{% endif %}`, { x: '' })).toContain(`nested more than ${maxTemplateNesting} levels deep`);
    expect(failure(`{{ x${' | upper'.repeat(200)} }}{% if x${'.a'.repeat(200)} %}{% endif %}`, { x: 'a' })).toContain(`nested more than ${maxTemplateNesting} levels deep`);
    const blocks = `${'{% if true %}'.repeat(maxTemplateNesting + 1)}x${'{% endif %}'.repeat(maxTemplateNesting + 1)}`;
    expect(failure(blocks)).toContain(`blocks nested more than ${maxTemplateNesting} levels deep`);
  });

  it('reads a file of the largest size with many tags in one pass (no rescans of the text)', () => {
    const unparseable = Array.from({ length: 20_000 }, (_item, index) => `{{ user ${index} }}`).join('\n');
    const plain = '{{ x }} '.repeat(60_000);
    const rendered = render(`${unparseable}\n${plain}`, { x: 'v' }, { maxSteps: 1_000_000 });
    expect(rendered.ok).toBe(true);
    if (rendered.ok) {
      expect(rendered.text.startsWith('{{ user 0 }}\n{{ user 1 }}')).toBe(true);
      expect(rendered.text.endsWith('v '.repeat(3))).toBe(true);
    }
  });
  it('measures every value when it is built: a shared item counts each time it appears', () => {
    const sizeLimit = `r.yaml: template limit: a value passed ${maxTemplateOutputChars} characters (the limit for one template)`;
    // Forty doublings of one shared list: 2^40 items, refused as soon as the value passes the limit.
    expect(failure(`{% set a = [1] %}${'{% set a = [a, a] %}'.repeat(40)}{% if a == a %}x{% endif %}`)).toBe(sizeLimit);
    expect(failure(`{% set a = {"k": 1} %}${'{% set a = {"l": a, "r": a} %}'.repeat(40)}`)).toBe(sizeLimit);
    expect(failure(`{% set l = [s] %}${'{% set l = l + l %}'.repeat(14)}{{ l }}`, { s: 'x'.repeat(1 << 20) })).toBe(sizeLimit);
    // A value from outside is measured too, and nesting is bounded like size.
    expect(failure('{{ 1 }}', { big: ['x'.repeat(maxTemplateOutputChars)] })).toBe(sizeLimit);
    expect(failure(`{% set a = [1] %}${'{% set a = [a] %}'.repeat(maxTemplateValueDepth)}`)).toBe(`r.yaml: template limit: a value is nested more than ${maxTemplateValueDepth} levels deep (the limit for one template)`);
    // Values well inside the limits behave as before.
    expect(text(`{% set a = [1] %}${'{% set a = [a, a] %}'.repeat(3)}{{ a }} {{ a == a }} {{ a | length }}`)).toBe('[[[[1], [1]], [[1], [1]]], [[[1], [1]], [[1], [1]]]] true 2');
  });

  it('charges comparisons, in, unique, printing and joining per item and character, and stops them at the limit', () => {
    const steps = `r.yaml: template limit: rendering stopped after ${maxTemplateSteps} steps (the limit for one template); is a loop too large?`;
    const wide = { l: Array.from({ length: 100_000 }, (_item, index) => index), m: Array.from({ length: 100_000 }, (_item, index) => index) };
    expect(failure('{% for i in range(10) %}{% if l == m %}{% endif %}{% endfor %}', wide)).toBe(steps);
    expect(failure('{% for i in range(10) %}{% if -1 in l %}{% endif %}{% endfor %}', wide)).toBe(steps);
    expect(failure('{{ l | unique | length }}', { l: Array.from({ length: 1000 }, (_item, index) => index) })).toBe(steps);
    expect(failure('{% for i in range(1000) %}{% if s is lower %}{% endif %}{% endfor %}', { s: 'x'.repeat(1 << 20) })).toBe(steps);
    // A long separator, indent or replacement stops before the text is built whole.
    const stringLimit = `r.yaml: template limit: a string passed ${maxTemplateOutputChars} characters (the limit for one template)`;
    expect(failure('{{ l | join(s) }}', { l: Array.from({ length: 1000 }, () => 1), s: 'x'.repeat(1 << 20) })).toBe(stringLimit);
    expect(failure('{{ s | indent(s) }}', { s: `${'\n'.repeat(100)}${'x'.repeat(1 << 20)}` })).toBe(stringLimit);
    expect(failure('{{ s | replace("a", t) }}', { s: 'a'.repeat(1000), t: 'x'.repeat(1 << 20) })).toBe(stringLimit);
    expect(failure('{{ s ~ s ~ s }}', { s: 'a'.repeat(1 << 20) })).toBe(stringLimit);
    // tojson's indent grows with depth: 5,000 numbers 61 levels deep are 3 MB indented.
    expect(failure(`{% set a = range(5000) %}${'{% set a = [a] %}'.repeat(60)}{{ a | tojson(10) }}`)).toBe(stringLimit);
  });

  it('writes tojson as JSON.stringify does, with and without an indent', () => {
    const value = { a: [1, { b: 'x"y', c: null }, [], {}], d: true, e: 1.5, f: 'text' };
    for (const indent of ['', '(2)', '(0)', '(20)']) {
      const spaces = indent === '' ? undefined : Math.min(10, Number(indent.slice(1, -1)));
      expect(text(`{{ v | tojson${indent} }}`, { v: value })).toBe(JSON.stringify(value, null, spaces));
    }
  });
});

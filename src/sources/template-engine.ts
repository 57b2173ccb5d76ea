import nunjucks from 'nunjucks';

/**
 * Recipe templates, rendered with nunjucks (jinja-compatible) so goose recipes written for MiniJinja work:
 * `{{ x }}`, `indent` and `default` filters, `{% if %}`, `{% raw %}`, and `recipe_dir`.
 *
 * Not for workflow code: nunjucks is plain JavaScript and does no I/O with a null loader, but rendering
 * belongs in activities and resolution, and the workflow only ever sees rendered text in its input.
 *
 * Like goose, the whole file is the template: `{{ recipe_dir }}` in a sub-recipe path or an extension
 * argument is rendered too, and the rendered text is parsed as YAML again.
 */

/**
 * nunjucks exports its parser at runtime but @types/nunjucks does not declare it; check its shape once
 * instead of casting.
 */
function loadParser(): (source: string) => unknown {
  const parser: unknown = Reflect.get(nunjucks, 'parser');
  const parse: unknown = typeof parser === 'object' && parser !== null ? Reflect.get(parser, 'parse') : undefined;
  if (typeof parse !== 'function') throw new Error('nunjucks.parser.parse is missing: unsupported nunjucks version');
  return (source: string): unknown => Reflect.apply(parse, parser, [source, [], {}]);
}
const parseTemplate = loadParser();

// autoescape off: recipes are prompts, not HTML. throwOnUndefined mirrors goose's strict undefined mode.
const environment = new nunjucks.Environment(null, { autoescape: false, throwOnUndefined: true });

/** Names nunjucks provides itself; using them is not a template variable. */
const builtInNames = new Set(['range', 'cycler', 'joiner', 'loop', 'caller', 'super', 'true', 'false', 'none', 'True', 'False', 'None']);

/**
 * goose wraps `{{ … }}` expressions that do not parse (e.g. `{{ $json.field }}` in an n8n example) in
 * `{% raw %}` so they pass through literally; we do the same, so such recipes keep working.
 */
export function protectUnparseableExpressions(text: string): string {
  const replacements = new Map<string, string>();
  for (const match of text.matchAll(/\{\{(.*?)\}\}/g)) {
    const inner = match[1] ?? '';
    if (/^\s*[A-Za-z_][A-Za-z0-9_]*\s*$/.test(inner)) continue;
    const trimmed = inner.trim();
    if (trimmed.startsWith("'") || trimmed.startsWith('"')) continue;
    try {
      parseTemplate(`{{${inner}}}`);
    } catch {
      replacements.set(match[0], `{% raw %}${match[0]}{% endraw %}`);
    }
  }
  let result = text;
  for (const [from, to] of replacements) result = result.split(from).join(to);
  return result;
}

/** Template variables found, or the syntax error (naming the file). */
export type TemplateVariablesResult = { ok: true; variables: string[] } | { ok: false; error: string };

/**
 * The free variables of a template: names read by `{{ }}` and `{% %}` that are not bound inside the
 * template by `{% for %}`, `{% set %}` or `{% macro %}`, found by walking the nunjucks syntax tree.
 */
export function templateVariables(text: string, file: string): TemplateVariablesResult {
  let root: unknown;
  try {
    root = parseTemplate(protectUnparseableExpressions(text));
  } catch (error) {
    return { ok: false, error: `${file}: template syntax error: ${templateErrorMessage(error)}` };
  }
  const globallyBound = new Set<string>();
  collectSetTargets(root, globallyBound);
  const free = new Set<string>();
  walk(root, new Set(globallyBound), free);
  return { ok: true, variables: [...free].sort() };
}

/** Rendered text, or the rendering error (naming the file). */
export type RenderResult = { ok: true; text: string } | { ok: false; error: string };

/** Renders a template with string values (goose passes every parameter as a string). */
export function renderTemplate(text: string, values: Readonly<Record<string, string>>, file: string): RenderResult {
  try {
    return { ok: true, text: environment.renderString(protectUnparseableExpressions(text), { ...values }) };
  } catch (error) {
    return { ok: false, error: `${file}: template error: ${templateErrorMessage(error)}` };
  }
}

function templateErrorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // nunjucks prefixes "(unknown path)" and a newline; keep the informative part on one line.
  return message.replace(/\(unknown path\)\s*/g, '').replace(/\s*\n\s*/g, ' ').trim();
}

interface SyntaxNode {
  typename: string;
  fields: string[];
  [field: string]: unknown;
}

function isNode(value: unknown): value is SyntaxNode {
  return typeof value === 'object' && value !== null && typeof (value as { typename?: unknown }).typename === 'string' && Array.isArray((value as { fields?: unknown }).fields);
}

function symbolName(value: unknown): string | undefined {
  return isNode(value) && value.typename === 'Symbol' && typeof value.value === 'string' ? value.value : undefined;
}

function namesOf(target: unknown): string[] {
  const name = symbolName(target);
  if (name !== undefined) return [name];
  if (isNode(target) && Array.isArray(target.children)) return target.children.flatMap((child) => namesOf(child));
  return [];
}

// A `{% set %}` at any level binds for the rest of the template in practice; treating it as bound
// everywhere is a slight over-approximation that never reports a false "undeclared variable".
function collectSetTargets(node: unknown, bound: Set<string>): void {
  if (Array.isArray(node)) {
    for (const child of node) collectSetTargets(child, bound);
    return;
  }
  if (!isNode(node)) return;
  if (node.typename === 'Set' && Array.isArray(node.targets)) for (const target of node.targets) for (const name of namesOf(target)) bound.add(name);
  if (node.typename === 'Macro') for (const name of namesOf(node.name)) bound.add(name);
  for (const field of node.fields) collectSetTargets(node[field], bound);
}

function walk(node: unknown, bound: ReadonlySet<string>, free: Set<string>): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, bound, free);
    return;
  }
  if (!isNode(node)) return;
  switch (node.typename) {
    case 'Symbol': {
      const name = symbolName(node);
      if (name !== undefined && !bound.has(name) && !builtInNames.has(name)) free.add(name);
      return;
    }
    case 'Filter':
    case 'FilterAsync':
      // `name` is the filter's name, not a variable; the filtered value is the first argument.
      walk(node.args, bound, free);
      return;
    case 'Is':
      // `x is defined`: the right side names a test.
      walk(node.left, bound, free);
      return;
    case 'Pair':
      // Keys of `{a: 1}` and keyword arguments `f(a=1)` are names, not reads.
      if (symbolName(node.key) === undefined) walk(node.key, bound, free);
      walk(node.value, bound, free);
      return;
    case 'For':
    case 'AsyncEach':
    case 'AsyncAll': {
      walk(node.arr, bound, free);
      const inner = new Set(bound);
      for (const name of namesOf(node.name)) inner.add(name);
      inner.add('loop');
      walk(node.body, inner, free);
      walk(node.else_, bound, free);
      return;
    }
    case 'Macro':
    case 'Caller': {
      const inner = new Set(bound);
      const args = node.args;
      if (isNode(args) && Array.isArray(args.children)) {
        for (const argument of args.children) {
          const name = symbolName(argument);
          if (name !== undefined) inner.add(name);
          else if (isNode(argument) && argument.typename === 'KeywordArgs' && Array.isArray(argument.children)) {
            for (const pair of argument.children) {
              if (!isNode(pair)) continue;
              const key = symbolName(pair.key);
              if (key !== undefined) inner.add(key);
              walk(pair.value, bound, free);
            }
          }
        }
      }
      walk(node.body, inner, free);
      return;
    }
    case 'Set':
      walk(node.value, bound, free);
      walk(node.body, bound, free);
      return;
    default:
      for (const field of node.fields) walk(node[field], bound, free);
  }
}

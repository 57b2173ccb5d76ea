import { isPair, isScalar, parseDocument, visit, type YAMLParseError, type Scalar } from 'yaml';
import { isPlainObjectValue, type TemplateValue } from '../domain/template-values';
import { parseTemplateText, renderParsed } from './template-engine';
import { type TemplateRenderOptions } from '../domain/template-render';

/**
 * Renders a whole recipe file as goose does (the file is the template: `{{ recipe_dir }}` in a sub-recipe
 * path or an extension argument works), but with parameter values kept as data. What each `{{ … }}`
 * prints goes into the text as an opaque placeholder; the text is parsed as YAML/JSON; only then is each
 * placeholder, which can only sit inside a string, replaced by the printed text. So a value can never add
 * a key, a block or a list item: the structure comes from the recipe's own text (statements such as
 * `{% if %}` choose among the author's text, never a value's).
 *
 * One goose habit is kept: inside a YAML block scalar (`|` or `>`), goose's re-parse removes the block's
 * indentation from the lines of a pasted value (which is why recipes write `{{ body | indent(2) }}`), so
 * the same indentation is removed here from each later line of the value that has it.
 */

/** The rendered document (plain JSON), or the error naming the file. */
export type RecipeRenderResult = { ok: true; document: unknown } | { ok: false; error: string };

/**
 * A placeholder stem that does not occur in `text`, so every occurrence after rendering is one of ours:
 * the base followed by one more `x` than the longest run of `x` after any occurrence of the base (one pass;
 * adding an `x` and searching again would be quadratic for a file holding the base and a long run of `x`).
 */
function placeholderStem(text: string): string {
  const base = 'errandtemplatevalue';
  let longest = -1;
  for (let at = text.indexOf(base); at >= 0; at = text.indexOf(base, at + base.length)) {
    let run = 0;
    while (text.charCodeAt(at + base.length + run) === 120) run += 1;
    longest = Math.max(longest, run);
  }
  return base + 'x'.repeat(longest + 1);
}

/** Indentation of a block scalar's content, from its source (`|` header line, then the first content line). */
function blockIndent(text: string, node: Scalar): number {
  const range = node.range;
  if (!range) return 0;
  const source = text.slice(range[0], range[1]);
  const lines = source.split('\n').slice(1);
  const first = lines.find((line) => line.trim() !== '');
  return first === undefined ? 0 : (/^ */.exec(first)?.[0].length ?? 0);
}

function dedentLaterLines(value: string, indent: number): string {
  if (indent === 0 || !value.includes('\n')) return value;
  const prefix = ' '.repeat(indent);
  return value
    .split('\n')
    .map((line, index) => (index > 0 && line.startsWith(prefix) ? line.slice(indent) : line))
    .join('\n');
}

/** Renders `content` with `values` and parses it; `file` names the file in errors, `path` picks JSON. */
export function renderRecipeDocument(content: string, values: Readonly<Record<string, TemplateValue>>, file: string, path: string, options: TemplateRenderOptions = {}): RecipeRenderResult {
  const parsed = parseTemplateText(content, file);
  if (!parsed.ok) return parsed;
  const stem = placeholderStem(content);
  const printed: string[] = [];
  const rendered = renderParsed(parsed.nodes, values, file, {
    ...options,
    emit: (text) => {
      printed.push(text);
      return `${stem}${printed.length - 1}q`;
    },
  });
  if (!rendered.ok) return rendered;
  const pattern = new RegExp(`${stem}(\\d+)q`, 'g');
  const substitute = (text: string, indent: number) => text.replace(pattern, (_match, index: string) => dedentLaterLines(printed[Number(index)] ?? '', indent));
  if (path.toLowerCase().endsWith('.json')) return substituteJson(rendered.text, file, pattern, substitute);
  const document = parseDocument(rendered.text, { prettyErrors: true, uniqueKeys: true });
  const error = document.errors[0];
  if (error) return { ok: false, error: `${yamlErrorMessage(error, file)} (after rendering the template)` };
  let keyProblem: string | undefined;
  visit(document, {
    Scalar(key, node) {
      if (typeof node.value !== 'string' || !node.value.includes(stem)) return;
      if (key === 'key') {
        keyProblem = `${file}: a template expression is used in a key ("${node.value.replace(pattern, '{{ … }}')}"); keys are the recipe's structure and cannot come from a template`;
        return visit.BREAK;
      }
      const indent = node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED' ? blockIndent(rendered.text, node) : 0;
      node.value = substitute(node.value, indent);
      return undefined;
    },
    Pair(_key, pair) {
      // A complex key (a map or list used as a key) could hide a placeholder from the scalar visitor.
      if (isPair(pair) && !isScalar(pair.key) && pair.key !== null && String(pair.key).includes(stem)) {
        keyProblem = `${file}: a template expression is used in a key; keys cannot come from a template`;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (keyProblem) return { ok: false, error: keyProblem };
  return { ok: true, document: document.toJS({ maxAliasCount: 100 }) as unknown };
}

function yamlErrorMessage(error: YAMLParseError, file: string): string {
  const position = error.linePos?.[0];
  const where = position ? ` (line ${position.line}, column ${position.col})` : '';
  return `${file}${where}: not valid YAML: ${error.message.split('\n')[0] ?? error.message}`;
}

function substituteJson(text: string, file: string, pattern: RegExp, substitute: (text: string, indent: number) => string): RecipeRenderResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `${file}: not valid JSON after rendering the template: ${error instanceof Error ? error.message : String(error)}` };
  }
  let keyProblem: string | undefined;
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return substitute(node, 0);
    if (Array.isArray(node)) return node.map(walk);
    if (isPlainObjectValue(node)) {
      const result: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(node)) {
        pattern.lastIndex = 0;
        if (pattern.test(key)) keyProblem ??= `${file}: a template expression is used in the key "${key}"; keys cannot come from a template`;
        // defineProperty: a `__proto__` key stays a plain key and never sets the object's prototype.
        Object.defineProperty(result, key, { value: walk(item), enumerable: true, writable: true, configurable: true });
      }
      return result;
    }
    return node;
  };
  const document = walk(value);
  return keyProblem ? { ok: false, error: keyProblem } : { ok: true, document };
}

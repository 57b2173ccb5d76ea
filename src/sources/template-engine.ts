import { TemplateSyntaxError } from '../domain/template-lexer';
import { parseTemplate, protectUnparseableExpressions as protect, type TemplateNode } from '../domain/template-parser';
import { renderNodes, TemplateLimitError, type TemplateRenderOptions } from '../domain/template-render';
import { analyzeTemplate } from '../domain/template-variables';
import { TemplateRuntimeError, type TemplateValue } from '../domain/template-values';

/**
 * Recipe templates, with errand's own engine for the Jinja subset goose recipes use (goose renders with
 * MiniJinja): `{{ x }}` with `.`/`[ ]` access and filters (`default`, `indent`, …), `{% if %}`,
 * `{% for %}`, `{% set %}`, `{% raw %}`, comments, whitespace control and `recipe_dir`. The engine
 * (src/domain/template-*.ts) is pure code over JSON values: a template cannot reach a function, a
 * prototype or the host language, and rendering is bounded by steps and output size.
 *
 * Like goose, the whole file is the template; see recipe-render.ts for how parameter values are kept as
 * data when a recipe file is rendered.
 */

/** `{{ … }}` that do not parse are wrapped in `{% raw %}` and pass through as text, as goose does. */
export function protectUnparseableExpressions(text: string): string {
  return protect(text);
}

/** Template variables found, or the template's errors (naming the file). */
export type TemplateVariablesResult = { ok: true; variables: string[] } | { ok: false; error: string };

/** A parsed template, or its syntax error naming the file and line. */
export type ParsedTemplate = { ok: true; nodes: TemplateNode[] } | { ok: false; error: string };

/** Parses a template, naming the file in the error. */
export function parseTemplateText(text: string, file: string): ParsedTemplate {
  try {
    return { ok: true, nodes: parseTemplate(text) };
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return { ok: false, error: `${file}: template syntax error (line ${error.line}): ${error.message}` };
    throw error;
  }
}

/**
 * The free variables of a template: names read by `{{ }}` and `{% %}` that are not bound inside the
 * template by `{% for %}` or `{% set %}`. A template that calls anything but `range()`, reads a property
 * such as `constructor`, or uses an unknown filter or test is refused here, before it ever renders.
 */
export function templateVariables(text: string, file: string): TemplateVariablesResult {
  const parsed = parseTemplateText(text, file);
  if (!parsed.ok) return parsed;
  const analysis = analyzeTemplate(parsed.nodes);
  if (analysis.problems.length > 0) return { ok: false, error: `${file}: template error: ${analysis.problems.join('; ')}` };
  return { ok: true, variables: analysis.variables };
}

/** Rendered text, or the rendering error (naming the file). */
export type RenderResult = { ok: true; text: string } | { ok: false; error: string };

/** Turns an engine error into the message for people, naming the file; rethrows anything else. */
export function templateErrorMessage(error: unknown, file: string): string {
  if (error instanceof TemplateLimitError) return `${file}: template limit: ${error.message}`;
  if (error instanceof TemplateRuntimeError) return `${file}: template error: ${error.message}`;
  if (error instanceof TemplateSyntaxError) return `${file}: template syntax error (line ${error.line}): ${error.message}`;
  throw error;
}

/** Renders parsed nodes; errors name the file. */
export function renderParsed(nodes: readonly TemplateNode[], values: Readonly<Record<string, TemplateValue>>, file: string, options: TemplateRenderOptions = {}): RenderResult {
  try {
    return { ok: true, text: renderNodes(nodes, values, options) };
  } catch (error) {
    return { ok: false, error: templateErrorMessage(error, file) };
  }
}

/** Renders a template to text (for fragments such as a sub-recipe path or value); errors name the file. */
export function renderTemplate(text: string, values: Readonly<Record<string, TemplateValue>>, file: string, options: TemplateRenderOptions = {}): RenderResult {
  const parsed = parseTemplateText(text, file);
  if (!parsed.ok) return parsed;
  return renderParsed(parsed.nodes, values, file, options);
}

import { maxTemplateNesting } from '../contracts/limits/sources';
import { ExpressionReader, parseExpression, type Expression } from './template-expression';
import { lexTemplate, protectUnparseable, TemplateSyntaxError, type TemplatePiece } from './template-lexer';

/**
 * The statement level of errand's recipe template engine: text, `{{ … }}` outputs, `{% if %}` /
 * `{% elif %}` / `{% else %}`, `{% for %}` (with `loop`, `else` and an `if` filter) and `{% set %}`.
 * Everything else Jinja has (macros, includes, blocks, …) is refused with a message that says what is
 * supported: recipe templates stay a small language whose every step the renderer counts.
 */

/** A node of a parsed template. */
export type TemplateNode =
  | { kind: 'text'; text: string }
  | { kind: 'output'; expression: Expression; line: number }
  | { kind: 'if'; branches: { test: Expression; body: TemplateNode[] }[]; otherwise: TemplateNode[]; line: number }
  | { kind: 'for'; targets: string[]; iterable: Expression; filter?: Expression; body: TemplateNode[]; otherwise: TemplateNode[]; line: number }
  | { kind: 'set'; targets: string[]; value: Expression; line: number };

const supported = 'supported: if / elif / else, for, set, raw';

type Stop = { keyword: string; reader: ExpressionReader; line: number };

class StatementParser {
  private position = 0;
  private depth = 0;

  constructor(private readonly pieces: TemplatePiece[]) {}

  /** Nodes up to one of the `stops` keywords (returned with it), or to the end when `stops` is empty. */
  block(stops: string[], opener?: { keyword: string; line: number }): { nodes: TemplateNode[]; stop?: Stop } {
    this.depth += 1;
    if (this.depth > maxTemplateNesting) throw new TemplateSyntaxError(`blocks nested more than ${maxTemplateNesting} levels deep`, opener?.line ?? 1);
    try {
      const nodes: TemplateNode[] = [];
      while (this.position < this.pieces.length) {
        const piece = this.pieces[this.position] as TemplatePiece;
        this.position += 1;
        if (piece.kind === 'text') nodes.push({ kind: 'text', text: piece.text });
        else if (piece.kind === 'output') nodes.push({ kind: 'output', expression: parseExpression(piece.source, piece.line), line: piece.line });
        else {
          const reader = new ExpressionReader(piece.source, piece.line);
          const keyword = reader.atEnd() ? '' : reader.name();
          if (stops.includes(keyword)) return { nodes, stop: { keyword, reader, line: piece.line } };
          nodes.push(this.statement(keyword, reader, piece.line));
        }
      }
      if (opener) throw new TemplateSyntaxError(`{% ${opener.keyword} %} is never closed with {% ${stops.at(-1) ?? ''} %}`, opener.line);
      return { nodes };
    } finally {
      this.depth -= 1;
    }
  }

  private statement(keyword: string, reader: ExpressionReader, line: number): TemplateNode {
    switch (keyword) {
      case 'if':
        return this.ifStatement(reader, line);
      case 'for':
        return this.forStatement(reader, line);
      case 'set': {
        const targets = this.targets(reader);
        if (reader.atEnd()) throw reader.error(`a {% set %} block (set … endset) is not supported; write {% set name = value %} (${supported})`);
        reader.expect('=');
        const value = reader.expression();
        reader.expectEnd();
        return { kind: 'set', targets, value, line };
      }
      case 'elif':
      case 'else':
      case 'endif':
      case 'endfor':
        throw reader.error(`{% ${keyword} %} without a matching opening tag`);
      case '':
        throw reader.error(`an empty {% %} tag (${supported})`);
      default:
        throw reader.error(`{% ${keyword} %} is not supported in recipe templates (${supported})`);
    }
  }

  private targets(reader: ExpressionReader): string[] {
    const targets = [reader.name()];
    while (reader.accept(',')) targets.push(reader.name());
    return targets;
  }

  private ifStatement(reader: ExpressionReader, line: number): TemplateNode {
    const branches: { test: Expression; body: TemplateNode[] }[] = [];
    let test = reader.expression();
    reader.expectEnd();
    for (;;) {
      const { nodes, stop } = this.block(['elif', 'else', 'endif'], { keyword: 'if', line });
      branches.push({ test, body: nodes });
      if (!stop) throw new TemplateSyntaxError('{% if %} is never closed with {% endif %}', line);
      if (stop.keyword === 'elif') {
        test = stop.reader.expression();
        stop.reader.expectEnd();
        continue;
      }
      stop.reader.expectEnd();
      if (stop.keyword === 'endif') return { kind: 'if', branches, otherwise: [], line };
      const rest = this.block(['endif'], { keyword: 'if', line });
      rest.stop?.reader.expectEnd();
      return { kind: 'if', branches, otherwise: rest.nodes, line };
    }
  }

  private forStatement(reader: ExpressionReader, line: number): TemplateNode {
    const targets = this.targets(reader);
    reader.expect('in');
    const iterable = reader.expression(false);
    const filter = reader.accept('if') ? reader.expression(false) : undefined;
    if (reader.accept('recursive')) throw reader.error(`recursive loops are not supported in recipe templates (${supported})`);
    reader.expectEnd();
    const { nodes, stop } = this.block(['else', 'endfor'], { keyword: 'for', line });
    stop?.reader.expectEnd();
    let otherwise: TemplateNode[] = [];
    if (stop?.keyword === 'else') {
      const rest = this.block(['endfor'], { keyword: 'for', line });
      rest.stop?.reader.expectEnd();
      otherwise = rest.nodes;
    }
    return { kind: 'for', targets, iterable, ...(filter ? { filter } : {}), body: nodes, otherwise, line };
  }
}

/** True when `source` parses as an expression (goose's test for passing `{{ … }}` through as text). */
export function expressionParses(source: string): boolean {
  try {
    parseExpression(source, 1);
    return true;
  } catch (error) {
    if (error instanceof TemplateSyntaxError) return false;
    throw error;
  }
}

/** `{{ … }}` that do not parse wrapped in `{% raw %}`, as goose does (see {@link protectUnparseable}). */
export function protectUnparseableExpressions(text: string): string {
  return protectUnparseable(text, expressionParses);
}

/** Parses a whole template (after passing unparseable `{{ … }}` through), or throws {@link TemplateSyntaxError}. */
export function parseTemplate(text: string): TemplateNode[] {
  const parser = new StatementParser(lexTemplate(protectUnparseableExpressions(text)));
  return parser.block([]).nodes;
}

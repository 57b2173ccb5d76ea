import { maxTemplateNesting } from '../contracts/limits/sources';
import { TemplateSyntaxError } from './template-lexer';

/**
 * Expressions of errand's recipe template engine (the inside of `{{ … }}` and of `{% if … %}`), parsed
 * into a small syntax tree with Jinja's grammar and precedence: literals, names, `.name` and `[ ]` access,
 * calls, filters (`|`), tests (`is`), arithmetic, `~`, comparisons, `in`, `and` / `or` / `not`, and
 * `a if b else c`. Parsing accepts calls and any attribute name, as MiniJinja does, so that an attempt to
 * reach code is a clear error when it is checked or rendered, never text passed through.
 */

/** A literal value of the template language (JSON values). */
export type Literal = string | number | boolean | null;

/** A node of an expression. */
export type Expression =
  | { kind: 'literal'; value: Literal }
  | { kind: 'name'; name: string }
  | { kind: 'attribute'; object: Expression; name: string }
  | { kind: 'item'; object: Expression; index: Expression }
  | { kind: 'call'; callee: Expression; args: Expression[]; kwargs: Record<string, Expression> }
  | { kind: 'filter'; value: Expression; name: string; args: Expression[]; kwargs: Record<string, Expression> }
  | { kind: 'test'; value: Expression; name: string; args: Expression[]; negated: boolean }
  | { kind: 'unary'; operator: '-' | '+' | 'not'; value: Expression }
  | { kind: 'binary'; operator: string; left: Expression; right: Expression }
  | { kind: 'condition'; test: Expression; then: Expression; otherwise?: Expression }
  | { kind: 'list'; items: Expression[] }
  | { kind: 'dict'; entries: { key: Expression; value: Expression }[] };

type Token = { type: 'name' | 'number' | 'string' | 'op' | 'end'; text: string; value?: Literal };

const operators = ['==', '!=', '<=', '>=', '//', '**', '<', '>', '+', '-', '*', '/', '%', '~', '|', '.', ',', ':', '(', ')', '[', ']', '{', '}', '='];

function unescape(body: string, line: number): string {
  return body.replace(/\\(u[0-9a-fA-F]{4}|.)/gs, (_match, code: string) => {
    if (code.startsWith('u') && code.length === 5) return String.fromCharCode(parseInt(code.slice(1), 16));
    const known: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", '0': '\0' };
    const value = known[code];
    if (value === undefined) throw new TemplateSyntaxError(`unknown escape \\${code} in a string`, line);
    return value;
  });
}

const spacePattern = /\s+/y;
const namePattern = /[A-Za-z_][A-Za-z0-9_]*/y;
const numberPattern = /\d+(\.\d+)?([eE][+-]?\d+)?/y;
const doubleQuoted = /"((?:[^"\\]|\\.)*)"/sy;
const singleQuoted = /'((?:[^'\\]|\\.)*)'/sy;

/** Reads `pattern` (sticky) at `index`, or null. Sticky patterns read in place: no copy of the rest. */
function readAt(pattern: RegExp, source: string, index: number): RegExpExecArray | null {
  pattern.lastIndex = index;
  return pattern.exec(source);
}

function tokenize(source: string, line: number): Token[] {
  const tokens: Token[] = [];
  let index = 0;
  while (index < source.length) {
    const space = readAt(spacePattern, source, index);
    if (space) {
      index += space[0].length;
      continue;
    }
    const name = readAt(namePattern, source, index);
    if (name) {
      tokens.push({ type: 'name', text: name[0] });
      index += name[0].length;
      continue;
    }
    const number = readAt(numberPattern, source, index);
    if (number) {
      tokens.push({ type: 'number', text: number[0], value: Number(number[0]) });
      index += number[0].length;
      continue;
    }
    const quote = source[index];
    if (quote === '"' || quote === "'") {
      const string = readAt(quote === '"' ? doubleQuoted : singleQuoted, source, index);
      if (!string) throw new TemplateSyntaxError('a string is never closed', line);
      tokens.push({ type: 'string', text: string[0], value: unescape(string[1] ?? '', line) });
      index += string[0].length;
      continue;
    }
    const operator = operators.find((candidate) => source.startsWith(candidate, index));
    if (!operator) throw new TemplateSyntaxError(`unexpected character "${source[index] ?? ''}"`, line);
    tokens.push({ type: 'op', text: operator });
    index += operator.length;
  }
  tokens.push({ type: 'end', text: 'end of expression' });
  return tokens;
}

const keywordLiterals: Record<string, Literal> = { true: true, True: true, false: false, False: false, none: null, None: null };
const comparisons = new Set(['==', '!=', '<', '>', '<=', '>=']);

/** A cursor over an expression's tokens; statements use it to read `for x in …` and `set x = …`. */
export class ExpressionReader {
  private position = 0;
  private depth = 0;
  private readonly tokens: Token[];

  constructor(
    source: string,
    readonly line: number,
  ) {
    this.tokens = tokenize(source, line);
  }

  private peek(offset = 0): Token {
    return this.tokens[Math.min(this.position + offset, this.tokens.length - 1)] as Token;
  }

  private next(): Token {
    const token = this.peek();
    if (this.position < this.tokens.length - 1) this.position += 1;
    return token;
  }

  /** Consumes the operator or keyword `text` when it comes next. */
  accept(text: string): boolean {
    const token = this.peek();
    if ((token.type === 'op' || token.type === 'name') && token.text === text) {
      this.position += 1;
      return true;
    }
    return false;
  }

  /** Consumes `text` or fails naming what came instead. */
  expect(text: string): void {
    if (!this.accept(text)) throw this.error(`expected "${text}" but found "${this.peek().text}"`);
  }

  /** True when every token was read. */
  atEnd(): boolean {
    return this.peek().type === 'end';
  }

  /** Fails unless every token was read. */
  expectEnd(): void {
    if (!this.atEnd()) throw this.error(`unexpected "${this.peek().text}"`);
  }

  /** A plain name (a variable to bind), or a failure. */
  name(): string {
    const token = this.next();
    if (token.type !== 'name' || token.text in keywordLiterals) throw this.error(`expected a name but found "${token.text}"`);
    return token.text;
  }

  error(message: string): TemplateSyntaxError {
    return new TemplateSyntaxError(message, this.line);
  }

  private nested<T>(read: () => T): T {
    this.depth += 1;
    if (this.depth > maxTemplateNesting) throw this.error(`expression nested more than ${maxTemplateNesting} levels deep`);
    try {
      return read();
    } finally {
      this.depth -= 1;
    }
  }

  /** A whole expression, `a if b else c` included. */
  expression(allowCondition = true): Expression {
    return this.nested(() => {
      const value = this.or();
      if (allowCondition && this.peek().type === 'name' && this.peek().text === 'if') {
        this.next();
        const test = this.or();
        const otherwise = this.accept('else') ? this.expression() : undefined;
        return { kind: 'condition', test, then: value, ...(otherwise ? { otherwise } : {}) };
      }
      return value;
    });
  }

  /**
   * Counts one more link of a chain (`a or b or …`, `a.b.c…`, `x | f | g…`): a chain builds a tree as deep
   * as it is long, which the renderer walks recursively, so it counts against the nesting limit.
   */
  private link(chain: number): number {
    if (this.depth + chain > maxTemplateNesting) throw this.error(`expression nested more than ${maxTemplateNesting} levels deep`);
    return chain + 1;
  }

  private or(): Expression {
    let left = this.and();
    let chain = 0;
    while (this.accept('or')) {
      chain = this.link(chain);
      left = { kind: 'binary', operator: 'or', left, right: this.and() };
    }
    return left;
  }

  private and(): Expression {
    let left = this.not();
    let chain = 0;
    while (this.accept('and')) {
      chain = this.link(chain);
      left = { kind: 'binary', operator: 'and', left, right: this.not() };
    }
    return left;
  }

  private not(): Expression {
    if (this.accept('not')) return this.nested(() => ({ kind: 'unary', operator: 'not', value: this.not() }));
    return this.compare();
  }

  private compare(): Expression {
    let left = this.concat();
    let chain = 0;
    for (;;) {
      chain = this.link(chain);
      const token = this.peek();
      if (token.type === 'op' && comparisons.has(token.text)) {
        this.next();
        left = { kind: 'binary', operator: token.text, left, right: this.concat() };
      } else if (token.type === 'name' && token.text === 'in') {
        this.next();
        left = { kind: 'binary', operator: 'in', left, right: this.concat() };
      } else if (token.type === 'name' && token.text === 'not' && this.peek(1).text === 'in') {
        this.next();
        this.next();
        left = { kind: 'binary', operator: 'not in', left, right: this.concat() };
      } else return left;
    }
  }

  private binaryLevel(operands: () => Expression, ops: string[]): Expression {
    let left = operands();
    let chain = 0;
    for (;;) {
      chain = this.link(chain);
      const token = this.peek();
      if (token.type !== 'op' || !ops.includes(token.text)) return left;
      this.next();
      left = { kind: 'binary', operator: token.text, left, right: operands() };
    }
  }

  private concat(): Expression {
    return this.binaryLevel(() => this.sum(), ['~']);
  }

  private sum(): Expression {
    return this.binaryLevel(() => this.product(), ['+', '-']);
  }

  private product(): Expression {
    return this.binaryLevel(() => this.power(), ['*', '/', '//', '%']);
  }

  private power(): Expression {
    return this.binaryLevel(() => this.unary(), ['**']);
  }

  private unary(): Expression {
    const token = this.peek();
    if (token.type === 'op' && (token.text === '-' || token.text === '+')) {
      this.next();
      return this.nested(() => ({ kind: 'unary', operator: token.text as '-' | '+', value: this.unary() }));
    }
    return this.filters(this.postfix(this.primary()));
  }

  private filters(start: Expression): Expression {
    let value = start;
    let chain = 0;
    for (;;) {
      chain = this.link(chain);
      if (this.accept('|')) {
        const name = this.name();
        const { args, kwargs } = this.peek().text === '(' ? this.callArguments() : { args: [], kwargs: {} };
        value = { kind: 'filter', value, name, args, kwargs };
      } else if (this.accept('is')) {
        const negated = this.accept('not');
        // Test names include none, true and false, which are literals elsewhere.
        const nameToken = this.next();
        if (nameToken.type !== 'name') throw this.error(`expected the name of a test after "is" but found "${nameToken.text}"`);
        const name = nameToken.text;
        let args: Expression[] = [];
        if (this.peek().text === '(') args = this.callArguments().args;
        else if (['number', 'string'].includes(this.peek().type) || (this.peek().type === 'name' && !['and', 'or', 'else', 'if', 'not', 'in', 'is'].includes(this.peek().text))) args = [this.postfix(this.primary())];
        value = { kind: 'test', value, name, args, negated };
      } else return value;
    }
  }

  private callArguments(): { args: Expression[]; kwargs: Record<string, Expression> } {
    this.expect('(');
    const args: Expression[] = [];
    const kwargs: Record<string, Expression> = {};
    while (!this.accept(')')) {
      if (this.peek().type === 'name' && this.peek(1).text === '=') {
        const key = this.name();
        this.expect('=');
        kwargs[key] = this.expression();
      } else args.push(this.expression());
      if (!this.accept(',')) {
        this.expect(')');
        break;
      }
    }
    return { args, kwargs };
  }

  private postfix(start: Expression): Expression {
    let value = start;
    let chain = 0;
    for (;;) {
      chain = this.link(chain);
      if (this.accept('.')) {
        const token = this.next();
        if (token.type !== 'name' && token.type !== 'number') throw this.error(`expected a name after "." but found "${token.text}"`);
        value = token.type === 'number' ? { kind: 'item', object: value, index: { kind: 'literal', value: Number(token.text) } } : { kind: 'attribute', object: value, name: token.text };
      } else if (this.peek().text === '[' && this.peek().type === 'op') {
        this.next();
        const index = this.expression();
        this.expect(']');
        value = { kind: 'item', object: value, index };
      } else if (this.peek().text === '(' && this.peek().type === 'op') {
        const { args, kwargs } = this.callArguments();
        value = { kind: 'call', callee: value, args, kwargs };
      } else return value;
    }
  }

  private primary(): Expression {
    return this.nested(() => {
      const token = this.next();
      if (token.type === 'number' || token.type === 'string') return { kind: 'literal', value: token.value ?? null };
      if (token.type === 'name') {
        if (token.text in keywordLiterals) return { kind: 'literal', value: keywordLiterals[token.text] ?? null };
        return { kind: 'name', name: token.text };
      }
      if (token.text === '(') {
        const first = this.expression();
        if (this.accept(')')) return first;
        const items = [first];
        while (this.accept(',')) if (this.peek().text !== ')') items.push(this.expression());
        this.expect(')');
        return { kind: 'list', items };
      }
      if (token.text === '[') {
        const items: Expression[] = [];
        while (!this.accept(']')) {
          items.push(this.expression());
          if (!this.accept(',')) {
            this.expect(']');
            break;
          }
        }
        return { kind: 'list', items };
      }
      if (token.text === '{') {
        const entries: { key: Expression; value: Expression }[] = [];
        while (!this.accept('}')) {
          const key = this.expression();
          this.expect(':');
          entries.push({ key, value: this.expression() });
          if (!this.accept(',')) {
            this.expect('}');
            break;
          }
        }
        return { kind: 'dict', entries };
      }
      throw this.error(token.type === 'end' ? 'the expression ends too early' : `unexpected "${token.text}"`);
    });
  }
}

/** Parses a whole expression (the inside of `{{ … }}`). */
export function parseExpression(source: string, line: number): Expression {
  const reader = new ExpressionReader(source, line);
  const expression = reader.expression();
  reader.expectEnd();
  return expression;
}

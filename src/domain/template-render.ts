import { maxTemplateOutputChars, maxTemplateSteps, maxTemplateValueDepth } from '../contracts/limits/sources';
import { type Expression } from './template-expression';
import { applyFilter, applyTest } from './template-filters';
import { type TemplateNode } from './template-parser';
import {
  charsPerStep,
  equalValues,
  forbiddenKeyReason,
  isPlainObjectValue,
  isUndefined,
  kindOf,
  lookup,
  printValue,
  stringLimitMessage,
  TemplateLimitError,
  TemplateRuntimeError,
  truthy,
  undefinedValue,
  ValueSizes,
  type Charge,
  type RuntimeValue,
  type TemplateValue,
} from './template-values';

export { TemplateLimitError } from './template-values';

/**
 * Renders a parsed recipe template. Every expression, filter, loop turn and piece of output is counted
 * against a step limit and an output limit, so no template (a nested loop, a huge `range`) can hold the
 * worker for long or fill its memory: it ends with a {@link TemplateLimitError} instead. Every list and
 * object is measured when it is built (a shared item counts each time it appears), so no value stands for
 * more text than the output limit, and walks over values (printing, comparing, `in`, `unique`, joining)
 * are charged per node and character as they go. Only JSON values are ever in reach (see
 * template-values.ts); the one callable is `range()`.
 */

/** Options of {@link renderNodes}. */
export interface TemplateRenderOptions {
  /** `strict` (goose's mode, the default): using an undefined value is an error; `lenient`: it is empty. */
  undefinedBehavior?: 'strict' | 'lenient';
  /** Maps each printed `{{ … }}` to what goes into the output (e.g. a placeholder); default: itself. */
  emit?: (printed: string) => string;
  /** Step limit (default {@link maxTemplateSteps}). */
  maxSteps?: number;
  /** Output limit in characters (default {@link maxTemplateOutputChars}). */
  maxOutputChars?: number;
}

type Frame = Map<string, TemplateValue>;

class Renderer {
  private steps = 0;
  private outputChars = 0;
  private readonly output: string[] = [];
  private readonly frames: Frame[] = [new Map()];
  private readonly strict: boolean;
  private readonly maxSteps: number;
  private readonly maxOutputChars: number;
  private readonly sizes: ValueSizes;
  private readonly chargeStep: Charge = (units) => this.charge(units);

  constructor(
    private readonly values: Readonly<Record<string, TemplateValue>>,
    private readonly options: TemplateRenderOptions,
  ) {
    this.strict = options.undefinedBehavior !== 'lenient';
    this.maxSteps = options.maxSteps ?? maxTemplateSteps;
    this.maxOutputChars = options.maxOutputChars ?? maxTemplateOutputChars;
    this.sizes = new ValueSizes(this.maxOutputChars, maxTemplateValueDepth);
    for (const value of Object.values(values)) this.sizes.measure(value);
  }

  /** `value`, once within the size limit: a string by its length, a list or object by {@link ValueSizes}. */
  private bounded<T extends RuntimeValue>(value: T): T {
    if (typeof value === 'string') {
      if (value.length > this.maxOutputChars) throw new TemplateLimitError(stringLimitMessage(this.maxOutputChars));
    } else if (typeof value === 'object' && value !== null && !isUndefined(value)) this.sizes.measure(value);
    return value;
  }

  charge(units: number): void {
    this.steps += units;
    if (this.steps > this.maxSteps) throw new TemplateLimitError(`rendering stopped after ${this.maxSteps} steps (the limit for one template); is a loop too large?`);
  }

  private outputLimitMessage(): string {
    return `rendering stopped: the output passed ${this.maxOutputChars} characters (the limit for one template)`;
  }

  private write(text: string, counted = text.length): void {
    this.outputChars += counted;
    if (this.outputChars > this.maxOutputChars) throw new TemplateLimitError(this.outputLimitMessage());
    this.charge(1 + Math.floor(counted / 4096));
    this.output.push(text);
  }

  render(nodes: readonly TemplateNode[]): string {
    this.nodes(nodes);
    return this.output.join('');
  }

  private nodes(nodes: readonly TemplateNode[]): void {
    for (const node of nodes) this.node(node);
  }

  private node(node: TemplateNode): void {
    this.charge(1);
    switch (node.kind) {
      case 'text':
        this.write(node.text);
        return;
      case 'output': {
        const printed = this.print(this.evaluate(node.expression), node.expression);
        this.write(this.options.emit ? this.options.emit(printed) : printed, printed.length);
        return;
      }
      case 'if': {
        const branch = node.branches.find((candidate) => this.test(this.evaluate(candidate.test), candidate.test));
        this.nodes(branch ? branch.body : node.otherwise);
        return;
      }
      case 'set':
        this.assign(node.targets, this.defined(this.evaluate(node.value), node.value));
        return;
      case 'for':
        this.loop(node);
        return;
    }
  }

  private loop(node: Extract<TemplateNode, { kind: 'for' }>): void {
    const iterable = this.evaluate(node.iterable);
    let items: readonly TemplateValue[];
    if (isUndefined(iterable)) {
      if (this.strict) throw new TemplateRuntimeError(`cannot loop over ${iterable.what}: it is undefined`);
      items = [];
    } else if (Array.isArray(iterable)) items = iterable;
    else if (typeof iterable === 'string') {
      this.charge(iterable.length / charsPerStep);
      items = [...iterable];
    } else if (isPlainObjectValue(iterable)) items = Object.keys(iterable);
    else throw new TemplateRuntimeError(`cannot loop over ${kindOf(iterable)}`);
    if (node.filter) {
      const filter = node.filter;
      items = items.filter((item) => this.scoped(() => {
        this.assign(node.targets, item);
        return this.test(this.evaluate(filter), filter);
      }));
    }
    if (items.length === 0) {
      this.nodes(node.otherwise);
      return;
    }
    const length = items.length;
    items.forEach((item, index) => {
      // Each turn counts, even with an empty body: a loop over a long string is that many turns.
      this.charge(1);
      this.scoped(() => {
        const loop: Record<string, TemplateValue> = { index: index + 1, index0: index, revindex: length - index, revindex0: length - index - 1, first: index === 0, last: index === length - 1, length };
        if (index > 0) loop.previtem = items[index - 1] as TemplateValue;
        if (index < length - 1) loop.nextitem = items[index + 1] as TemplateValue;
        this.current().set('loop', loop);
        this.assign(node.targets, item);
        this.nodes(node.body);
      });
    });
  }

  private scoped<T>(body: () => T): T {
    this.frames.push(new Map());
    try {
      return body();
    } finally {
      this.frames.pop();
    }
  }

  private current(): Frame {
    return this.frames[this.frames.length - 1] as Frame;
  }

  private assign(targets: readonly string[], value: TemplateValue): void {
    if (targets.length === 1) {
      this.current().set(targets[0] as string, value);
      return;
    }
    if (!Array.isArray(value) || value.length !== targets.length) throw new TemplateRuntimeError(`cannot unpack ${kindOf(value)} into ${targets.join(', ')}`);
    targets.forEach((target, index) => this.current().set(target, value[index] as TemplateValue));
  }

  private describe(expression: Expression): string {
    if (expression.kind === 'name') return `variable "${expression.name}"`;
    if (expression.kind === 'attribute') return `${this.describe(expression.object)}.${expression.name}`;
    return 'a value';
  }

  private defined(value: RuntimeValue, expression: Expression): TemplateValue {
    if (!isUndefined(value)) return value;
    if (this.strict) throw new TemplateRuntimeError(`${value.what} is undefined (goose's strict mode: every value a template uses must exist)`);
    return expression.kind === 'literal' ? null : '';
  }

  private print(value: RuntimeValue, expression: Expression): string {
    return printValue(this.defined(value, expression), { maxChars: this.maxOutputChars - this.outputChars, charge: this.chargeStep, limitMessage: this.outputLimitMessage() });
  }

  private test(value: RuntimeValue, expression: Expression): boolean {
    return truthy(this.defined(value, expression));
  }

  private evaluate(expression: Expression): RuntimeValue {
    this.charge(1);
    switch (expression.kind) {
      case 'literal':
        return expression.value;
      case 'name':
        return this.variable(expression.name);
      case 'attribute':
        return lookup(this.defined(this.evaluate(expression.object), expression.object), expression.name, this.describe(expression));
      case 'item': {
        const key = this.defined(this.evaluate(expression.index), expression.index);
        if (typeof key !== 'string' && typeof key !== 'number') throw new TemplateRuntimeError(`cannot use ${kindOf(key)} as a key or index`);
        return lookup(this.defined(this.evaluate(expression.object), expression.object), key, `${this.describe(expression.object)}[${JSON.stringify(key)}]`);
      }
      case 'call':
        return this.call(expression);
      case 'filter': {
        const value = this.evaluate(expression.value);
        const args = expression.args.map((arg) => this.defined(this.evaluate(arg), arg));
        const kwargs: Record<string, TemplateValue> = {};
        for (const [key, arg] of Object.entries(expression.kwargs)) kwargs[key] = this.defined(this.evaluate(arg), arg);
        const input = expression.name === 'default' || expression.name === 'd' || this.strict || !isUndefined(value) ? value : '';
        return this.bounded(applyFilter(expression.name, { value: input, args, kwargs, charge: this.chargeStep, maxChars: this.maxOutputChars }));
      }
      case 'test':
        return applyTest(expression.name, this.evaluate(expression.value), expression.args.map((arg) => this.defined(this.evaluate(arg), arg)), this.chargeStep) !== expression.negated;
      case 'unary': {
        if (expression.operator === 'not') return !this.test(this.evaluate(expression.value), expression.value);
        const value = this.defined(this.evaluate(expression.value), expression.value);
        if (typeof value !== 'number') throw new TemplateRuntimeError(`"${expression.operator}" needs a number, not ${kindOf(value)}`);
        return expression.operator === '-' ? -value : value;
      }
      case 'binary':
        return this.binary(expression);
      case 'condition':
        return this.test(this.evaluate(expression.test), expression.test) ? this.evaluate(expression.then) : expression.otherwise ? this.evaluate(expression.otherwise) : '';
      case 'list':
        return this.bounded(expression.items.map((item) => this.defined(this.evaluate(item), item)));
      case 'dict': {
        const result: Record<string, TemplateValue> = {};
        for (const entry of expression.entries) {
          const key = this.defined(this.evaluate(entry.key), entry.key);
          if (typeof key !== 'string' && typeof key !== 'number') throw new TemplateRuntimeError(`an object key must be a string, not ${kindOf(key)}`);
          const reason = forbiddenKeyReason(String(key));
          if (reason) throw new TemplateRuntimeError(reason);
          result[String(key)] = this.defined(this.evaluate(entry.value), entry.value);
        }
        return this.bounded(result);
      }
    }
  }

  private variable(name: string): RuntimeValue {
    for (let index = this.frames.length - 1; index >= 0; index -= 1) {
      const frame = this.frames[index] as Frame;
      if (frame.has(name)) return frame.get(name) as TemplateValue;
    }
    return Object.hasOwn(this.values, name) ? (this.values[name] as TemplateValue) : undefinedValue(`variable "${name}"`);
  }

  private call(expression: Extract<Expression, { kind: 'call' }>): TemplateValue {
    if (expression.callee.kind !== 'name' || expression.callee.name !== 'range') {
      throw new TemplateRuntimeError(`${callDescription(expression.callee)} cannot be called: templates can call only range()`);
    }
    const args = expression.args.map((arg) => this.defined(this.evaluate(arg), arg));
    if (args.length < 1 || args.length > 3 || args.some((arg) => typeof arg !== 'number' || !Number.isInteger(arg))) throw new TemplateRuntimeError('range() takes one to three whole numbers: range(stop), range(start, stop[, step])');
    const [start, stop, step] = (args.length === 1 ? [0, args[0], 1] : [args[0], args[1], args[2] ?? 1]) as number[];
    if (step === 0) throw new TemplateRuntimeError('range() step must not be 0');
    const count = Math.max(0, Math.ceil(((stop as number) - (start as number)) / (step as number)));
    this.charge(count);
    return this.bounded(Array.from({ length: count }, (_item, index) => (start as number) + index * (step as number)));
  }

  private binary(expression: Extract<Expression, { kind: 'binary' }>): RuntimeValue {
    const { operator } = expression;
    if (operator === 'and' || operator === 'or') {
      const left = this.evaluate(expression.left);
      const leftTrue = this.test(left, expression.left);
      if (operator === 'and' ? !leftTrue : leftTrue) return left;
      return this.evaluate(expression.right);
    }
    const left = this.defined(this.evaluate(expression.left), expression.left);
    const right = this.defined(this.evaluate(expression.right), expression.right);
    switch (operator) {
      case '==':
        return equalValues(left, right, this.chargeStep);
      case '!=':
        return !equalValues(left, right, this.chargeStep);
      case 'in':
      case 'not in':
        return contains(right, left, this.chargeStep) === (operator === 'in');
      case '~': {
        // Each side printed within what is left of the limit, so neither is built past it.
        const limitMessage = stringLimitMessage(this.maxOutputChars);
        const first = printValue(left, { maxChars: this.maxOutputChars, charge: this.chargeStep, limitMessage });
        return this.bounded(first + printValue(right, { maxChars: this.maxOutputChars - first.length, charge: this.chargeStep, limitMessage }));
      }
      case '+':
        if (typeof left === 'string' && typeof right === 'string') return this.binary({ ...expression, operator: '~' });
        if (Array.isArray(left) && Array.isArray(right)) {
          this.charge(left.length + right.length);
          return this.bounded([...left, ...right]);
        }
    }
    if (['<', '>', '<=', '>='].includes(operator)) {
      if (!((typeof left === 'number' && typeof right === 'number') || (typeof left === 'string' && typeof right === 'string'))) throw new TemplateRuntimeError(`cannot compare ${kindOf(left)} with ${kindOf(right)}`);
      return operator === '<' ? left < right : operator === '>' ? left > right : operator === '<=' ? left <= right : left >= right;
    }
    if (typeof left !== 'number' || typeof right !== 'number') throw new TemplateRuntimeError(`"${operator}" needs two numbers, not ${kindOf(left)} and ${kindOf(right)}`);
    if ((operator === '/' || operator === '//' || operator === '%') && right === 0) throw new TemplateRuntimeError('division by zero');
    switch (operator) {
      case '+':
        return left + right;
      case '-':
        return left - right;
      case '*':
        return left * right;
      case '/':
        return left / right;
      case '//':
        return Math.floor(left / right);
      case '%':
        return left - right * Math.floor(left / right);
      default:
        return left ** right;
    }
  }
}

function callDescription(callee: Expression): string {
  if (callee.kind === 'name') return `"${callee.name}"`;
  if (callee.kind === 'attribute') return `"${callee.name}"`;
  return 'a value';
}

function contains(container: TemplateValue, item: TemplateValue, charge: Charge): boolean {
  if (typeof container === 'string') {
    charge(container.length / charsPerStep);
    return typeof item === 'string' && container.includes(item);
  }
  if (Array.isArray(container)) return container.some((entry) => equalValues(entry as TemplateValue, item, charge));
  if (isPlainObjectValue(container)) return typeof item === 'string' && Object.hasOwn(container, item);
  throw new TemplateRuntimeError(`"in" needs a string, a list or an object on its right, not ${kindOf(container)}`);
}

/** Renders `nodes` with `values`; throws TemplateRuntimeError, TemplateLimitError. */
export function renderNodes(nodes: readonly TemplateNode[], values: Readonly<Record<string, TemplateValue>>, options: TemplateRenderOptions = {}): string {
  return new Renderer(values, options).render(nodes);
}

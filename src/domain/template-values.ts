/**
 * The values a recipe template works on: JSON values only (strings, numbers, booleans, null, arrays and
 * plain objects), plus a marker for "undefined". A template reads own data properties of those values
 * and nothing else: no prototype, constructor or function is ever reachable, because no lookup here goes
 * through JavaScript's property access on anything but a plain object's own keys or an array's indices.
 */

/** A JSON value as templates see it. */
export type TemplateValue = string | number | boolean | null | readonly TemplateValue[] | { readonly [key: string]: TemplateValue };

/** A value that does not exist (a missing variable, key or index), with what was looked up. */
export interface UndefinedValue {
  readonly undefinedMarker: true;
  readonly what: string;
}

/** A template value or undefined. */
export type RuntimeValue = TemplateValue | UndefinedValue;

/** A runtime failure of a template (undefined value, wrong type, forbidden access). */
export class TemplateRuntimeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateRuntimeError';
  }
}

/** Names never read as properties: they lead to prototypes and constructors in JavaScript. */
const forbiddenKeys = new Set(['__proto__', 'constructor', 'prototype']);

/** Why reading `key` is refused, or undefined when it may be read. */
export function forbiddenKeyReason(key: string): string | undefined {
  if (forbiddenKeys.has(key) || key.startsWith('__')) return `reading "${key}" is not allowed: templates read the recipe's parameter values and nothing else`;
  return undefined;
}

/** Undefined markers made here: only these count as undefined (a JSON object can never pass for one). */
const undefinedMarkers = new WeakSet<object>();

/** Creates the undefined marker. */
export function undefinedValue(what: string): UndefinedValue {
  const value: UndefinedValue = Object.freeze({ undefinedMarker: true, what });
  undefinedMarkers.add(value);
  return value;
}

/** True for the undefined marker. */
export function isUndefined(value: RuntimeValue): value is UndefinedValue {
  return typeof value === 'object' && value !== null && undefinedMarkers.has(value);
}

/** True for a plain object of data (a JSON object): never an array, never the undefined marker. */
export function isPlainObjectValue(value: unknown): value is { readonly [key: string]: TemplateValue } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || undefinedMarkers.has(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Reads `key` of `value`: an own key of a plain object, an index of an array or string; else undefined. */
export function lookup(value: TemplateValue, key: string | number, what: string): RuntimeValue {
  if (typeof key === 'string') {
    const reason = forbiddenKeyReason(key);
    if (reason) throw new TemplateRuntimeError(reason);
  }
  if (Array.isArray(value) || typeof value === 'string') {
    const index = typeof key === 'number' ? key : /^-?\d+$/.test(key) ? Number(key) : Number.NaN;
    if (!Number.isInteger(index)) return undefinedValue(what);
    const length = value.length;
    const at = index < 0 ? length + index : index;
    if (at < 0 || at >= length) return undefinedValue(what);
    return typeof value === 'string' ? (value[at] as string) : (value[at] as TemplateValue);
  }
  if (isPlainObjectValue(value)) {
    const name = String(key);
    return Object.hasOwn(value, name) ? (value[name] as TemplateValue) : undefinedValue(what);
  }
  return undefinedValue(what);
}

/** Rendering went past a limit: steps, output, a value's size or nesting, or time. */
export class TemplateLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateLimitError';
  }
}

/** Counts work against the render's step limit; throws {@link TemplateLimitError} past it. */
export type Charge = (units: number) => void;

/** Characters of string work (printing, comparing, searching, copying) that cost one step. */
export const charsPerStep = 256;

/** How much text a value stands for when printed (its size) and how deeply it nests. */
export interface ValueMeasure {
  readonly size: number;
  readonly depth: number;
}

/**
 * The size of every list and object a render builds, worked out once per object, so a list whose items
 * are one shared list (`{% set a = [a, a] %}`, forty times) is known at once to stand for 2^40 items: a
 * shared item counts each time it appears. The size is about the value's printed length (strings count
 * their quotes, lists and objects their brackets and separators) and never less than the number of its
 * nodes, so a value within the limit is also within reach of every walk over it (printing, comparing).
 */
export class ValueSizes {
  private readonly known = new WeakMap<object, ValueMeasure>();

  constructor(
    private readonly maxSize: number,
    private readonly maxDepth: number,
  ) {}

  /** Measures `value`, or throws {@link TemplateLimitError} when it is over the size or nesting limit. */
  measure(value: TemplateValue, level = 0): ValueMeasure {
    if (typeof value === 'string') return this.within({ size: value.length + 2, depth: 0 });
    if (typeof value === 'number') return { size: String(value).length, depth: 0 };
    if (typeof value === 'boolean') return { size: 5, depth: 0 };
    if (value === null) return { size: 4, depth: 0 };
    const known = this.known.get(value);
    if (known) return known;
    if (level >= this.maxDepth) throw new TemplateLimitError(`a value is nested more than ${this.maxDepth} levels deep (the limit for one template)`);
    let size = 2;
    let depth = 0;
    const add = (item: TemplateValue, extra: number) => {
      const measure = this.measure(item, level + 1);
      size += measure.size + extra;
      depth = Math.max(depth, measure.depth);
      this.within({ size, depth: 0 });
    };
    if (Array.isArray(value)) for (const item of value) add(item as TemplateValue, 2);
    else for (const [key, item] of Object.entries(value as Record<string, TemplateValue>)) add(item, key.length + 4);
    // The level guards the walk over a value from outside (a parameter); the depth, values built of
    // values already measured.
    if (depth + 1 > this.maxDepth) throw new TemplateLimitError(`a value is nested more than ${this.maxDepth} levels deep (the limit for one template)`);
    const measure = this.within({ size, depth: depth + 1 });
    this.known.set(value, measure);
    return measure;
  }

  /** `value` itself, once measured (see {@link measure}). */
  checked<T extends TemplateValue>(value: T): T {
    this.measure(value);
    return value;
  }

  private within(measure: ValueMeasure): ValueMeasure {
    if (measure.size > this.maxSize) throw new TemplateLimitError(`a value passed ${this.maxSize} characters (the limit for one template)`);
    return measure;
  }
}

/**
 * Text built piece by piece up to a limit: each piece is counted (and charged) before it is kept, so
 * printing or joining stops at the limit instead of building every copy first.
 */
export class TextSink {
  private readonly parts: string[] = [];
  private length = 0;

  constructor(
    private readonly limit: number,
    private readonly charge: Charge,
    private readonly limitMessage = stringLimitMessage(limit),
  ) {}

  /** Adds `text`, or throws {@link TemplateLimitError} when the whole would pass the limit. */
  add(text: string): void {
    this.length += text.length;
    if (this.length > this.limit) throw new TemplateLimitError(this.limitMessage);
    this.charge(text.length / charsPerStep);
    this.parts.push(text);
  }

  /** The text so far. */
  text(): string {
    return this.parts.join('');
  }
}

/** What a string too long for the limit is told. */
export function stringLimitMessage(limit: number): string {
  return `a string passed ${limit} characters (the limit for one template)`;
}

/** Prints `value` into `sink`; items of lists and objects as MiniJinja does (strings quoted). */
function printInto(value: TemplateValue, sink: TextSink, charge: Charge, nested: boolean): void {
  charge(1);
  if (value === null) sink.add('none');
  else if (typeof value === 'string') sink.add(nested ? JSON.stringify(value) : value);
  else if (typeof value === 'number' || typeof value === 'boolean') sink.add(String(value));
  else if (Array.isArray(value)) {
    sink.add('[');
    value.forEach((item, index) => {
      if (index > 0) sink.add(', ');
      printInto(item as TemplateValue, sink, charge, true);
    });
    sink.add(']');
  } else {
    sink.add('{');
    Object.entries(value as Record<string, TemplateValue>).forEach(([key, item], index) => {
      sink.add(`${index > 0 ? ', ' : ''}${JSON.stringify(key)}: `);
      printInto(item, sink, charge, true);
    });
    sink.add('}');
  }
}

/** What printing may use: the characters left, the step counter, and what passing the limit is called. */
export interface PrintBudget {
  readonly maxChars: number;
  readonly charge: Charge;
  readonly limitMessage?: string;
}

/** A value as text, the way `{{ value }}` prints it; stops with {@link TemplateLimitError} past the budget. */
export function printValue(value: TemplateValue, budget: PrintBudget): string {
  if (typeof value === 'string') {
    budget.charge(value.length / charsPerStep);
    if (value.length > budget.maxChars) throw new TemplateLimitError(budget.limitMessage ?? stringLimitMessage(budget.maxChars));
    return value;
  }
  const sink = new TextSink(budget.maxChars, budget.charge, budget.limitMessage);
  printInto(value, sink, budget.charge, false);
  return sink.text();
}

/** Jinja truthiness of a defined value. */
export function truthy(value: TemplateValue): boolean {
  if (value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObjectValue(value)) return Object.keys(value).length > 0;
  return true;
}

/**
 * Deep equality of JSON values, charged per node and per {@link charsPerStep} characters compared, so a
 * comparison stops at the step limit however large the values are.
 */
export function equalValues(left: TemplateValue, right: TemplateValue, charge: Charge): boolean {
  charge(1);
  if (typeof left === 'string' && typeof right === 'string') {
    charge(Math.min(left.length, right.length) / charsPerStep);
    return left === right;
  }
  if (left === right) return true;
  if (Array.isArray(left) && Array.isArray(right)) return left.length === right.length && left.every((item, index) => equalValues(item as TemplateValue, right[index] as TemplateValue, charge));
  if (isPlainObjectValue(left) && isPlainObjectValue(right)) {
    const keys = Object.keys(left);
    charge(keys.length);
    return keys.length === Object.keys(right).length && keys.every((key) => Object.hasOwn(right, key) && equalValues(left[key] as TemplateValue, right[key] as TemplateValue, charge));
  }
  return false;
}

/** The kind of a value, for error messages. */
export function kindOf(value: RuntimeValue): string {
  if (isUndefined(value)) return 'undefined';
  if (value === null) return 'none';
  if (Array.isArray(value)) return 'a list';
  if (isPlainObjectValue(value)) return 'an object';
  return `a ${typeof value}`;
}

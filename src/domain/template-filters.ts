import { charsPerStep, equalValues, isPlainObjectValue, isUndefined, kindOf, printValue, stringLimitMessage, TemplateLimitError, TextSink, truthy, TemplateRuntimeError, type Charge, type RuntimeValue, type TemplateValue } from './template-values';

/**
 * Filters (`{{ x | name(args) }}`) and tests (`{% if x is name %}`) of errand's recipe templates: the ones
 * goose recipes use (`default`, `indent`, …) and the common Jinja ones, each a pure function of JSON values.
 * `charge` counts work proportional to what a filter reads and builds, against the render's step limit;
 * text a filter builds stops at `maxChars` (a filter that multiplies its input, such as `indent`, `replace`
 * or `join`, checks the length of its result before building it).
 */

/** What a filter gets: its input (undefined only for `default`), arguments, the step counter and the text limit. */
export interface FilterCall {
  value: RuntimeValue;
  args: TemplateValue[];
  kwargs: Record<string, TemplateValue>;
  charge: Charge;
  /** The most characters a string may have. */
  maxChars: number;
}

type Filter = (call: FilterCall) => TemplateValue;

function argument(call: FilterCall, index: number, name: string): TemplateValue | undefined {
  return Object.hasOwn(call.kwargs, name) ? call.kwargs[name] : call.args[index];
}

function defined(call: FilterCall, filter: string): TemplateValue {
  if (isUndefined(call.value)) throw new TemplateRuntimeError(`${call.value.what} is undefined (filter ${filter})`);
  return call.value;
}

function text(call: FilterCall, filter: string): string {
  const value = defined(call, filter);
  return typeof value === 'string' ? value : printValue(value, call);
}

function list(call: FilterCall, filter: string): readonly TemplateValue[] {
  const value = defined(call, filter);
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return [...value];
  if (isPlainObjectValue(value)) {
    const keys = Object.keys(value);
    call.charge(keys.length);
    return keys;
  }
  throw new TemplateRuntimeError(`filter ${filter} needs a list, a string or an object, not ${kindOf(value)}`);
}

function integer(value: TemplateValue | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  const number = typeof value === 'string' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) throw new TemplateRuntimeError(`${what} must be a number, not ${kindOf(value)}`);
  return Math.trunc(number);
}

function number(call: FilterCall, filter: string): number {
  const value = defined(call, filter);
  const result = typeof value === 'string' ? Number(value.trim()) : typeof value === 'boolean' ? Number(value) : value;
  if (typeof result !== 'number' || !Number.isFinite(result)) throw new TemplateRuntimeError(`filter ${filter} needs a number, not ${kindOf(value)}`);
  return result;
}

function sized(call: FilterCall, result: string): string {
  call.charge(result.length / charsPerStep);
  return within(call, result.length, result);
}

/** `result`, or a {@link TemplateLimitError} when `length` passes the text limit (checked before building). */
function within<T>(call: FilterCall, length: number, result: T | (() => T)): T {
  if (length > call.maxChars) throw new TemplateLimitError(stringLimitMessage(call.maxChars));
  return typeof result === 'function' ? (result as () => T)() : result;
}

/** Charges a copy or walk of `count` items, and a sort's n·log n comparisons. */
function walked<T>(call: FilterCall, items: readonly T[], sorting = false): readonly T[] {
  call.charge(items.length * (sorting ? Math.max(1, Math.log2(items.length)) : 1));
  return items;
}

/**
 * `value` as JSON, the way `JSON.stringify(value, null, indent)` writes it, into a sink that stops at the
 * text limit: with an indent the text grows with depth times size, so it is never built whole first.
 */
function jsonInto(value: TemplateValue, sink: TextSink, gap: string, level: number, charge: Charge): void {
  charge(1);
  if (value === null || typeof value === 'boolean' || typeof value === 'string') {
    sink.add(JSON.stringify(value));
    return;
  }
  if (typeof value === 'number') {
    sink.add(Number.isFinite(value) ? JSON.stringify(value) : 'null');
    return;
  }
  const entries: [string | undefined, TemplateValue][] = Array.isArray(value) ? value.map((item) => [undefined, item as TemplateValue]) : Object.entries(value as Record<string, TemplateValue>);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) {
    sink.add(open + close);
    return;
  }
  const inner = gap === '' ? '' : `\n${gap.repeat(level + 1)}`;
  sink.add(open);
  entries.forEach(([key, item], index) => {
    sink.add(`${index > 0 ? ',' : ''}${inner}${key === undefined ? '' : `${JSON.stringify(key)}:${gap === '' ? '' : ' '}`}`);
    jsonInto(item, sink, gap, level + 1, charge);
  });
  sink.add(`${gap === '' ? '' : `\n${gap.repeat(level)}`}${close}`);
}

function compareForSort(left: TemplateValue, right: TemplateValue): number {
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  if (typeof left === 'string' && typeof right === 'string') return left < right ? -1 : left > right ? 1 : 0;
  throw new TemplateRuntimeError(`cannot sort ${kindOf(left)} and ${kindOf(right)} together`);
}

const filters: Record<string, Filter> = {
  default(call) {
    const fallback = argument(call, 0, 'default_value') ?? '';
    if (isUndefined(call.value)) return fallback;
    return argument(call, 1, 'boolean') === true && !truthy(call.value) ? fallback : call.value;
  },
  indent(call) {
    const width = argument(call, 0, 'width');
    const pad = typeof width === 'string' ? width : ' '.repeat(Math.max(0, Math.min(integer(width, 4, 'indent width'), 1000)));
    const value = text(call, 'indent');
    const lines = walked(call, value.split('\n'));
    const first = argument(call, 1, 'first') === true;
    const blank = argument(call, 2, 'blank') === true;
    return within(call, value.length + lines.length * pad.length, () => sized(call, lines.map((line, index) => ((index > 0 || first) && (blank || line.trim() !== '') ? pad + line : line)).join('\n')));
  },
  upper: (call) => sized(call, text(call, 'upper').toUpperCase()),
  lower: (call) => sized(call, text(call, 'lower').toLowerCase()),
  capitalize: (call) => {
    const value = text(call, 'capitalize');
    return sized(call, value.charAt(0).toUpperCase() + value.slice(1).toLowerCase());
  },
  title: (call) => sized(call, text(call, 'title').replace(/[A-Za-z0-9]+/g, (word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())),
  trim(call) {
    const chars = argument(call, 0, 'chars');
    const value = text(call, 'trim');
    if (typeof chars !== 'string') return sized(call, value.trim());
    const set = new Set(chars);
    let start = 0;
    let end = value.length;
    while (start < end && set.has(value.charAt(start))) start += 1;
    while (end > start && set.has(value.charAt(end - 1))) end -= 1;
    return sized(call, value.slice(start, end));
  },
  replace(call) {
    const from = argument(call, 0, 'old');
    const to = argument(call, 1, 'new');
    if (typeof from !== 'string' || typeof to !== 'string') throw new TemplateRuntimeError('filter replace needs two strings: replace("old", "new")');
    const count = argument(call, 2, 'count');
    const value = text(call, 'replace');
    const parts = walked(call, value.split(from));
    const limit = count === undefined || from === '' ? parts.length : Math.max(0, integer(count, 0, 'replace count'));
    const replaced = Math.min(limit, parts.length - 1);
    // The result's length is known before it is built: each replacement changes it by the difference.
    within(call, value.length + replaced * (to.length - from.length), undefined);
    if (count === undefined || from === '') return sized(call, parts.join(to));
    return sized(call, parts.slice(0, limit + 1).join(to) + (parts.length > limit + 1 ? from + parts.slice(limit + 1).join(from) : ''));
  },
  join(call) {
    const separator = argument(call, 0, 'd') ?? '';
    const attribute = argument(call, 1, 'attribute');
    const items = walked(call, list(call, 'join')).map((item) => (typeof attribute === 'string' && isPlainObjectValue(item) && Object.hasOwn(item, attribute) ? (item[attribute] as TemplateValue) : item));
    const between = typeof separator === 'string' ? separator : printValue(separator, call);
    // Built piece by piece: a long separator between many items stops at the limit, not after.
    const sink = new TextSink(call.maxChars, call.charge);
    items.forEach((item, index) => {
      if (index > 0) sink.add(between);
      sink.add(typeof item === 'string' ? item : printValue(item, call));
    });
    return sink.text();
  },
  length: (call) => {
    const value = defined(call, 'length');
    return typeof value === 'string' ? [...value].length : list(call, 'length').length;
  },
  tojson(call) {
    const indent = argument(call, 0, 'indent');
    const spaces = indent === undefined || indent === null ? 0 : Math.max(0, Math.min(integer(indent, 2, 'tojson indent'), 10));
    const sink = new TextSink(call.maxChars, call.charge);
    jsonInto(defined(call, 'tojson'), sink, ' '.repeat(spaces), 0, call.charge);
    return sink.text();
  },
  string: (call) => text(call, 'string'),
  int: (call) => Math.trunc(number(call, 'int')),
  float: (call) => number(call, 'float'),
  abs: (call) => Math.abs(number(call, 'abs')),
  round(call) {
    const factor = 10 ** Math.max(0, Math.min(integer(argument(call, 0, 'precision'), 0, 'round precision'), 15));
    return Math.round(number(call, 'round') * factor) / factor;
  },
  bool: (call) => truthy(defined(call, 'bool')),
  first: (call) => list(call, 'first')[0] ?? null,
  last: (call) => list(call, 'last').at(-1) ?? null,
  list: (call) => [...walked(call, list(call, 'list'))],
  reverse: (call) => {
    const value = defined(call, 'reverse');
    return typeof value === 'string' ? [...value].reverse().join('') : [...walked(call, list(call, 'reverse'))].reverse();
  },
  sort(call) {
    const items = [...walked(call, list(call, 'sort'), true)];
    items.sort(compareForSort);
    return argument(call, 0, 'reverse') === true ? items.reverse() : items;
  },
  unique(call) {
    const result: TemplateValue[] = [];
    for (const item of list(call, 'unique')) {
      if (!result.some((seen) => equalValues(seen, item, call.charge))) result.push(item);
    }
    return result;
  },
  min: (call) => [...walked(call, list(call, 'min'), true)].sort(compareForSort)[0] ?? null,
  max: (call) => [...walked(call, list(call, 'max'), true)].sort(compareForSort).at(-1) ?? null,
  sum: (call) => walked(call, list(call, 'sum')).reduce<number>((total, item) => total + (typeof item === 'number' ? item : 0), 0),
  items(call) {
    const value = defined(call, 'items');
    if (!isPlainObjectValue(value)) throw new TemplateRuntimeError(`filter items needs an object, not ${kindOf(value)}`);
    return walked(call, Object.entries(value)).map(([key, item]) => [key, item]);
  },
  lines: (call) => [...walked(call, text(call, 'lines').split(/\r?\n/))],
  split(call) {
    const separator = argument(call, 0, 'split');
    const value = text(call, 'split');
    const parts = typeof separator === 'string' && separator !== '' ? value.split(separator) : value.trim().split(/\s+/).filter((part) => part !== '');
    call.charge(parts.length);
    return parts;
  },
  wordcount: (call) => (text(call, 'wordcount').match(/\w+/g) ?? []).length,
  safe: (call) => defined(call, 'safe'),
  escape: (call) => sized(call, text(call, 'escape').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;')),
};
filters.d = filters.default as Filter;
filters.count = filters.length as Filter;
filters.e = filters.escape as Filter;

/** Filters that pass their input on without reading it. */
const passThrough = new Set(['default', 'd', 'safe']);

/** Applies filter `name`, or fails naming it and the filters there are. */
export function applyFilter(name: string, call: FilterCall): TemplateValue {
  const filter = Object.hasOwn(filters, name) ? filters[name] : undefined;
  if (!filter) throw new TemplateRuntimeError(`unknown filter "${name}"; filters: ${filterNames().join(', ')}`);
  // Every other filter reads its input at least once (copies, searches, case changes): charged by length.
  if (typeof call.value === 'string' && !passThrough.has(name)) call.charge(call.value.length / charsPerStep);
  return filter(call);
}

/** Names of the filters templates may use. */
export function filterNames(): string[] {
  return Object.keys(filters).sort();
}

type Test = (value: RuntimeValue, args: TemplateValue[], charge: Charge) => boolean;

const numberTest = (check: (value: number) => boolean): Test => (value) => typeof value === 'number' && check(value);

const tests: Record<string, Test> = {
  defined: (value) => !isUndefined(value),
  undefined: (value) => isUndefined(value),
  none: (value) => value === null,
  true: (value) => value === true,
  false: (value) => value === false,
  boolean: (value) => typeof value === 'boolean',
  string: (value) => typeof value === 'string',
  number: (value) => typeof value === 'number',
  integer: numberTest(Number.isInteger),
  float: numberTest((value) => !Number.isInteger(value)),
  odd: numberTest((value) => Math.abs(value % 2) === 1),
  even: numberTest((value) => value % 2 === 0),
  divisibleby: (value, args) => typeof value === 'number' && typeof args[0] === 'number' && args[0] !== 0 && value % args[0] === 0,
  mapping: (value) => isPlainObjectValue(value),
  sequence: (value) => Array.isArray(value) || typeof value === 'string',
  iterable: (value) => Array.isArray(value) || typeof value === 'string' || isPlainObjectValue(value),
  eq: (value, args, charge) => !isUndefined(value) && args[0] !== undefined && equalValues(value, args[0], charge),
  ne: (value, args, charge) => isUndefined(value) || args[0] === undefined || !equalValues(value, args[0], charge),
  startingwith: (value, args) => typeof value === 'string' && typeof args[0] === 'string' && value.startsWith(args[0]),
  endingwith: (value, args) => typeof value === 'string' && typeof args[0] === 'string' && value.endsWith(args[0]),
  lower: (value) => typeof value === 'string' && value === value.toLowerCase(),
  upper: (value) => typeof value === 'string' && value === value.toUpperCase(),
};
tests.equalto = tests.eq as Test;

/** Names of the tests templates may use. */
export function testNames(): string[] {
  return Object.keys(tests).sort();
}

/** Applies test `name`, or fails naming it and the tests there are. */
export function applyTest(name: string, value: RuntimeValue, args: TemplateValue[], charge: Charge): boolean {
  const test = Object.hasOwn(tests, name) ? tests[name] : undefined;
  if (!test) throw new TemplateRuntimeError(`unknown test "${name}"; tests: ${testNames().join(', ')}`);
  // String tests read the string (case, prefixes): charged by length like filters.
  if (typeof value === 'string') charge(value.length / charsPerStep);
  return test(value, args, charge);
}

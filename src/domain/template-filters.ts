import { equalValues, isPlainObjectValue, isUndefined, kindOf, printValue, truthy, TemplateRuntimeError, type RuntimeValue, type TemplateValue } from './template-values';

/**
 * Filters (`{{ x | name(args) }}`) and tests (`{% if x is name %}`) of errand's recipe templates: the ones
 * goose recipes use (`default`, `indent`, …) and the common Jinja ones, each a pure function of JSON values.
 * `charge` counts work proportional to the size of what a filter builds, against the render's step limit.
 */

/** What a filter gets: its input (undefined only for `default`), arguments, and the step counter. */
export interface FilterCall {
  value: RuntimeValue;
  args: TemplateValue[];
  kwargs: Record<string, TemplateValue>;
  charge: (units: number) => void;
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
  return typeof value === 'string' ? value : printValue(value);
}

function list(call: FilterCall, filter: string): readonly TemplateValue[] {
  const value = defined(call, filter);
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return [...value];
  if (isPlainObjectValue(value)) return Object.keys(value);
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
  call.charge(Math.ceil(result.length / 256));
  return result;
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
    const lines = text(call, 'indent').split('\n');
    const first = argument(call, 1, 'first') === true;
    const blank = argument(call, 2, 'blank') === true;
    return sized(call, lines.map((line, index) => ((index > 0 || first) && (blank || line.trim() !== '') ? pad + line : line)).join('\n'));
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
    let start = 0;
    let end = value.length;
    while (start < end && chars.includes(value.charAt(start))) start += 1;
    while (end > start && chars.includes(value.charAt(end - 1))) end -= 1;
    return sized(call, value.slice(start, end));
  },
  replace(call) {
    const from = argument(call, 0, 'old');
    const to = argument(call, 1, 'new');
    if (typeof from !== 'string' || typeof to !== 'string') throw new TemplateRuntimeError('filter replace needs two strings: replace("old", "new")');
    const count = argument(call, 2, 'count');
    const parts = text(call, 'replace').split(from);
    call.charge(parts.length);
    if (count === undefined || from === '') return sized(call, parts.join(to));
    const limit = integer(count, 0, 'replace count');
    return sized(call, parts.slice(0, limit + 1).join(to) + (parts.length > limit + 1 ? from + parts.slice(limit + 1).join(from) : ''));
  },
  join(call) {
    const separator = argument(call, 0, 'd') ?? '';
    const attribute = argument(call, 1, 'attribute');
    const items = list(call, 'join').map((item) => (typeof attribute === 'string' && isPlainObjectValue(item) && Object.hasOwn(item, attribute) ? (item[attribute] as TemplateValue) : item));
    call.charge(items.length);
    return sized(call, items.map((item) => (typeof item === 'string' ? item : printValue(item))).join(typeof separator === 'string' ? separator : printValue(separator)));
  },
  length: (call) => {
    const value = defined(call, 'length');
    return typeof value === 'string' ? [...value].length : list(call, 'length').length;
  },
  tojson(call) {
    const indent = argument(call, 0, 'indent');
    return sized(call, JSON.stringify(defined(call, 'tojson'), null, indent === undefined || indent === null ? undefined : integer(indent, 2, 'tojson indent')));
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
  list: (call) => [...list(call, 'list')],
  reverse: (call) => {
    const value = defined(call, 'reverse');
    return typeof value === 'string' ? [...value].reverse().join('') : [...list(call, 'reverse')].reverse();
  },
  sort(call) {
    const items = [...list(call, 'sort')];
    call.charge(items.length);
    items.sort(compareForSort);
    return argument(call, 0, 'reverse') === true ? items.reverse() : items;
  },
  unique(call) {
    const result: TemplateValue[] = [];
    for (const item of list(call, 'unique')) {
      call.charge(result.length + 1);
      if (!result.some((seen) => equalValues(seen, item))) result.push(item);
    }
    return result;
  },
  min: (call) => [...list(call, 'min')].sort(compareForSort)[0] ?? null,
  max: (call) => [...list(call, 'max')].sort(compareForSort).at(-1) ?? null,
  sum: (call) => list(call, 'sum').reduce<number>((total, item) => total + (typeof item === 'number' ? item : 0), 0),
  items(call) {
    const value = defined(call, 'items');
    if (!isPlainObjectValue(value)) throw new TemplateRuntimeError(`filter items needs an object, not ${kindOf(value)}`);
    return Object.entries(value).map(([key, item]) => [key, item]);
  },
  lines: (call) => text(call, 'lines').split(/\r?\n/),
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

/** Applies filter `name`, or fails naming it and the filters there are. */
export function applyFilter(name: string, call: FilterCall): TemplateValue {
  const filter = Object.hasOwn(filters, name) ? filters[name] : undefined;
  if (!filter) throw new TemplateRuntimeError(`unknown filter "${name}"; filters: ${filterNames().join(', ')}`);
  return filter(call);
}

/** Names of the filters templates may use. */
export function filterNames(): string[] {
  return Object.keys(filters).sort();
}

type Test = (value: RuntimeValue, args: TemplateValue[]) => boolean;

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
  eq: (value, args) => !isUndefined(value) && args[0] !== undefined && equalValues(value, args[0]),
  ne: (value, args) => isUndefined(value) || args[0] === undefined || !equalValues(value, args[0]),
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
export function applyTest(name: string, value: RuntimeValue, args: TemplateValue[]): boolean {
  const test = Object.hasOwn(tests, name) ? tests[name] : undefined;
  if (!test) throw new TemplateRuntimeError(`unknown test "${name}"; tests: ${testNames().join(', ')}`);
  return test(value, args);
}

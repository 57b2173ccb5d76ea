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

/** The text of a value inside a list or object when printed (strings quoted, as MiniJinja does). */
function representation(value: TemplateValue): string {
  return typeof value === 'string' ? JSON.stringify(value) : printValue(value);
}

/** A value as text, the way `{{ value }}` prints it. */
export function printValue(value: TemplateValue): string {
  if (value === null) return 'none';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(representation).join(', ')}]`;
  return `{${Object.entries(value as Record<string, TemplateValue>)
    .map(([key, item]) => `${JSON.stringify(key)}: ${representation(item)}`)
    .join(', ')}}`;
}

/** Jinja truthiness of a defined value. */
export function truthy(value: TemplateValue): boolean {
  if (value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isPlainObjectValue(value)) return Object.keys(value).length > 0;
  return true;
}

/** Deep equality of JSON values. */
export function equalValues(left: TemplateValue, right: TemplateValue): boolean {
  if (left === right) return true;
  if (Array.isArray(left) && Array.isArray(right)) return left.length === right.length && left.every((item, index) => equalValues(item as TemplateValue, right[index] as TemplateValue));
  if (isPlainObjectValue(left) && isPlainObjectValue(right)) {
    const keys = Object.keys(left);
    return keys.length === Object.keys(right).length && keys.every((key) => Object.hasOwn(right, key) && equalValues(left[key] as TemplateValue, right[key] as TemplateValue));
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

import type { JsonObject, JsonValue } from '../contracts/json';

/**
 * Guards for JSON that arrives from outside (model tool-call arguments, HTTP bodies). They check the
 * structure instead of casting, so a non-JSON value (a Date, a function, NaN) never reaches a durable
 * boundary.
 */

/** True when `value` is a JSON value: null, boolean, finite number, string, array or plain object of those. */
export function isJsonValue(value: unknown): value is JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  if (typeof value === 'object') {
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) return false;
    return Object.values(value).every(isJsonValue);
  }
  return false;
}

/** True when `value` is a JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && isJsonValue(value);
}

/** Parses JSON text; `undefined` when it is not valid JSON. */
export function tryParseJson(text: string): JsonValue | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    return isJsonValue(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** A deep copy of a JSON-compatible value, so a recorded request cannot change when the caller mutates its own. */
export function deepCopy<T>(value: T): T {
  // structuredClone keeps the static type (JSON round-tripping would need a cast); values here are JSON
  // by contract, so the copy is exact.
  return structuredClone(value);
}

import type { ErrandAttributeValues } from './delegation-facts';
import { searchAttributeNames } from '../contracts/wire-names';

/**
 * Payloads as canonical proto JSON, written and read the way the SDK's default payload converter does
 * (`binary/null` for undefined, `json/plain` for everything errand sends), without loading the SDK: its
 * converter module brings `@temporalio/common` and Temporal's protobuf definitions, which the API's Lambda
 * bundle leaves out (decision 0026). A workflow sees byte for byte the input the SDK would have sent
 * (test/api/temporal-gateway.test.ts compares the two paths against the dev server).
 */

/** A payload as canonical proto JSON: metadata values and data in base64. */
export interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const fromBase64 = (text: string): string => Buffer.from(text, 'base64').toString('utf8');

/** `value` as the SDK's default converter writes it. */
export function toJsonPayload(value: unknown): JsonPayload {
  if (value === undefined) return { metadata: { encoding: base64('binary/null') }, data: '' };
  if (value instanceof Uint8Array) return { metadata: { encoding: base64('binary/plain') }, data: Buffer.from(value).toString('base64') };
  return { metadata: { encoding: base64('json/plain') }, data: base64(JSON.stringify(value)) };
}

/** A payload the SDK made (bytes), as canonical proto JSON. */
export function payloadBytesJson(payload: { metadata?: Record<string, Uint8Array | null | undefined> | null; data?: Uint8Array | null }): JsonPayload {
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload.metadata ?? {})) if (value) metadata[key] = Buffer.from(value).toString('base64');
  return { metadata, data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64') };
}

/** A Header message of payloads (the trace header of start-options.ts): empty when there are none. */
export function headerJson(fields: Record<string, Parameters<typeof payloadBytesJson>[0]>): { fields?: Record<string, JsonPayload> } {
  const entries = Object.entries(fields);
  return entries.length === 0 ? {} : { fields: Object.fromEntries(entries.map(([name, payload]) => [name, payloadBytesJson(payload)])) };
}

/** A Payloads message of the values. */
export function toJsonPayloads(values: readonly unknown[]): { payloads: JsonPayload[] } {
  return { payloads: values.map(toJsonPayload) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One payload's value; a payload of an encoding errand never writes is an error naming it. */
export function fromJsonPayload(payload: unknown): unknown {
  if (!isRecord(payload) || !isRecord(payload.metadata)) throw new Error('a payload without metadata');
  const encoding = typeof payload.metadata.encoding === 'string' ? fromBase64(payload.metadata.encoding) : '';
  const data = typeof payload.data === 'string' ? payload.data : '';
  if (encoding === 'binary/null') return undefined;
  if (encoding === 'json/plain') return JSON.parse(fromBase64(data)) as unknown;
  if (encoding === 'binary/plain') return new Uint8Array(Buffer.from(data, 'base64'));
  throw new Error(`a payload with encoding "${encoding}", which errand does not write`);
}

/** The values of a Payloads message (`{payloads: [...]}`; absent: none). */
export function fromJsonPayloads(payloads: unknown): unknown[] {
  const list = isRecord(payloads) && Array.isArray(payloads.payloads) ? payloads.payloads : [];
  return list.map(fromJsonPayload);
}

/** The search-attribute types errand uses, as the SDK writes them into a payload's `type` metadata. */
const metadataTypes = { KEYWORD: 'Keyword', INT: 'Int', DOUBLE: 'Double' } as const;

/** A typed search attribute (the SDK's `SearchAttributePair`, of the types errand uses). */
export interface TypedAttribute {
  key: { name: string; type: string };
  value: unknown;
}

/** Search attributes as the SDK's `encodeUnifiedSearchAttributes` writes typed pairs: json/plain with the type in metadata. */
export function searchAttributesJson(pairs: readonly TypedAttribute[]): Record<string, JsonPayload> {
  const fields: Record<string, JsonPayload> = {};
  for (const { key, value } of pairs) {
    const type = metadataTypes[key.type as keyof typeof metadataTypes];
    if (type === undefined) throw new Error(`search attribute ${key.name} has type ${key.type}; errand writes only ${Object.keys(metadataTypes).join(', ')}`);
    const payload = toJsonPayload(value);
    fields[key.name] = value === null ? payload : { metadata: { ...payload.metadata, type: base64(type) }, data: payload.data };
  }
  return fields;
}

/** errand's search attribute values out of a raw `indexedFields` (a value of the wrong type is left out, as the SDK does). */
export function errandAttributesOf(fields: unknown): ErrandAttributeValues {
  const read = (name: string): unknown => {
    if (!isRecord(fields) || fields[name] === undefined) return undefined;
    try {
      const value = fromJsonPayload(fields[name]);
      // A pre-1.18 server wraps a single value in an array.
      return Array.isArray(value) && value.length === 1 ? (value[0] as unknown) : value;
    } catch {
      return undefined;
    }
  };
  return errandAttributesFrom(read);
}

/** The TypeScript SDK's status names (`status.name` of a describe), from the enum names of the JSON. */
export function executionStatusName(value: unknown): string {
  const name = typeof value === 'string' ? value.replace(/^WORKFLOW_EXECUTION_STATUS_/, '') : 'UNKNOWN';
  return name === 'CANCELED' ? 'CANCELLED' : name;
}

/** An RFC 3339 time as the SDK reads a protobuf timestamp: whole milliseconds, the rest cut off. */
export function protoTimestamp(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(value);
  if (!match) return undefined;
  const date = new Date(`${match[1]}.${(match[2] ?? '').padEnd(3, '0').slice(0, 3)}${match[3]}`);
  return Number.isNaN(date.getTime()) || date.getTime() <= 0 ? undefined : date;
}

/** errand's search attribute values, each read by `read` (undefined when absent or unreadable; a value of the wrong type is left out). */
export function errandAttributesFrom(read: (name: string) => unknown): ErrandAttributeValues {
  const keyword = (name: string) => {
    const value = read(name);
    return typeof value === 'string' ? value : undefined;
  };
  const turns = read(searchAttributeNames.turns);
  return {
    kind: keyword(searchAttributeNames.kind),
    source: keyword(searchAttributeNames.source),
    parent: keyword(searchAttributeNames.parent),
    status: keyword(searchAttributeNames.status),
    tenant: keyword(searchAttributeNames.tenant),
    model: keyword(searchAttributeNames.model),
    turns: typeof turns === 'number' && Number.isInteger(turns) ? turns : undefined,
  };
}

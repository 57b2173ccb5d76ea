import { z } from 'zod';
import type { JsonObject, JsonValue } from '../contracts/json';

const jsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]),
);
const jsonObjectSchema = z.record(z.string(), jsonValueSchema);

/**
 * The JSON Schema of a tool's zod argument schema, as the plain JSON object a ToolSpec carries.
 * `$schema` is dropped (providers do not need it, some reject it), and so are the safe-integer bounds zod
 * adds to every integer, which are noise in the model's context.
 */
export function toolInputSchema(schema: z.ZodType): JsonObject {
  const generated = jsonObjectSchema.parse(JSON.parse(JSON.stringify(z.toJSONSchema(schema))));
  delete generated['$schema'];
  return stripSafeIntegerBounds(generated);
}

function stripSafeIntegerBounds(node: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'maximum' && value === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && value === Number.MIN_SAFE_INTEGER)) continue;
    out[key] = stripValue(value);
  }
  return out;
}

function stripValue(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(stripValue);
  if (value !== null && typeof value === 'object') return stripSafeIntegerBounds(value);
  return value;
}

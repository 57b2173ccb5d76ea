import Ajv, { type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import { z } from 'zod';
import type { JsonObject, JsonValue } from '../contracts/json';
import { maxOutputSchemaChars } from '../contracts/limits/sources';

/**
 * Output schemas: a recipe's `response.json_schema` and the `output_schema` of `delegate` / the API /
 * `errand delegate --output-schema`. The schema becomes the input schema of the subagent's
 * `final_output` tool, whose validated arguments are the result's structured part, so it must be a
 * valid JSON Schema (draft-07, 2019-09 or 2020-12, by its `$schema`; draft-07 when it names none) and
 * describe an object (tool arguments are always an object).
 */

const jsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]),
);
const jsonObjectSchema = z.record(z.string(), jsonValueSchema);

/** A checked output schema, or the problems found, each naming `field`. */
export type OutputSchemaCheck = { ok: true; schema: JsonObject } | { ok: false; errors: string[] };

/** Drafts we validate against, by the start of their `$schema` URI. */
const drafts = [
  { uri: 'https://json-schema.org/draft/2020-12/schema', create: () => new Ajv2020({ strict: false, allErrors: true }) },
  { uri: 'https://json-schema.org/draft/2019-09/schema', create: () => new Ajv2019({ strict: false, allErrors: true }) },
  { uri: 'http://json-schema.org/draft-07/schema', create: () => new Ajv({ strict: false, allErrors: true }) },
] as const;

function validatorFor(schema: JsonObject): { ajv: Ajv } | { error: string } {
  const declared = schema.$schema;
  if (declared === undefined) return { ajv: drafts[2].create() };
  if (typeof declared !== 'string') return { error: '$schema: expected a URI string' };
  const draft = drafts.find((candidate) => declared.replace(/#$/, '') === candidate.uri || declared.replace(/#$/, '') === candidate.uri.replace('https://', 'http://'));
  if (draft === undefined) return { error: `$schema: "${declared}" is not a draft errand validates; use ${drafts.map((candidate) => candidate.uri).join(', ')} (or leave $schema out for draft-07)` };
  return { ajv: draft.create() };
}

/** One line per path (the first problem there: the others of an `anyOf` repeat it), with allowed values. */
function describe(errors: readonly ErrorObject[] | null | undefined): string[] {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const error of errors ?? []) {
    const path = error.instancePath === '' ? '(top level)' : error.instancePath.slice(1).replace(/\//g, '.');
    if (seen.has(path)) continue;
    seen.add(path);
    const allowed = z.array(z.unknown()).safeParse(error.params.allowedValues);
    lines.push(`${path}: ${error.message ?? 'is invalid'}${allowed.success ? ` (${allowed.data.map((item) => JSON.stringify(item)).join(', ')})` : ''}`);
  }
  return lines;
}

/**
 * Checks an output schema given as `field` (`output_schema`, `response.json_schema`): JSON, at most
 * {@link maxOutputSchemaChars}, valid against its draft's meta-schema, compilable (references resolve),
 * and describing an object.
 */
export function checkOutputSchema(value: unknown, field: string): OutputSchemaCheck {
  const parsed = jsonObjectSchema.safeParse(value);
  if (!parsed.success) return { ok: false, errors: [`${field}: expected a JSON Schema object (a map such as {"type": "object", "properties": {…}})`] };
  const schema = parsed.data;
  const size = JSON.stringify(schema).length;
  if (size > maxOutputSchemaChars) return { ok: false, errors: [`${field}: the schema is ${size} characters of JSON; at most ${maxOutputSchemaChars} are accepted`] };
  if (schema.type !== 'object') {
    return {
      ok: false,
      errors: [`${field}.type: expected "object" (the structured result is the argument object of the final_output tool)${schema.type === undefined ? ', got none' : ` (got ${JSON.stringify(schema.type)})`}`],
    };
  }
  const chosen = validatorFor(schema);
  if ('error' in chosen) return { ok: false, errors: [`${field}.${chosen.error}`] };
  const valid = chosen.ajv.validateSchema(schema);
  if (valid !== true) return { ok: false, errors: describe(chosen.ajv.errors).map((problem) => `${field}: not a valid JSON Schema: ${problem}`) };
  try {
    chosen.ajv.compile(schema);
  } catch (error) {
    return { ok: false, errors: [`${field}: the schema cannot be used: ${error instanceof Error ? error.message : String(error)}`] };
  }
  return { ok: true, schema };
}

/**
 * A validator for values against a checked output schema, for the side that receives `final_output`
 * calls: it returns the problems (empty when the value is valid), each naming the path.
 */
export function outputValidator(schema: JsonObject): (value: unknown) => string[] {
  const chosen = validatorFor(schema);
  if ('error' in chosen) throw new Error(`output schema: ${chosen.error}`);
  const validate: ValidateFunction = chosen.ajv.compile(schema satisfies AnySchemaObject);
  return (value) => (validate(value) ? [] : describe(validate.errors));
}

import { z } from 'zod';

/**
 * zod schemas for goose-format recipes (SEMANTICS §1). Pure: safe to import from workflow code.
 *
 * Objects are `looseObject`s so unknown keys are kept (goose ignores them; we keep them in the snapshot
 * and report them as warnings via {@link unknownRecipeKeys}). Scalars that goose stores as strings
 * (parameter defaults, sub-recipe values, version) accept YAML numbers and booleans too and are
 * normalised to strings, because hand-written YAML says `default: 80` and `version: 1.0` often.
 */

/** A YAML scalar read as the string goose would store. */
const scalarString = z
  .union([z.string(), z.number(), z.boolean()], { error: 'expected a string (or a number or boolean)' })
  .transform((value) => String(value));

/** Parameter input types goose knows. */
export const parameterInputTypes = ['string', 'number', 'boolean', 'date', 'file', 'select', 'object', 'array'] as const;
/** Parameter requirements goose knows. */
export const parameterRequirements = ['required', 'optional', 'user_prompt'] as const;

/** One declared recipe parameter. */
export const recipeParameterSchema = z.looseObject({
  key: z.string({ error: 'expected a string' }).min(1, { error: 'expected a non-empty string' }),
  input_type: z.enum(parameterInputTypes, { error: `expected one of ${parameterInputTypes.join(', ')}` }).default('string'),
  requirement: z.enum(parameterRequirements, { error: `expected one of ${parameterRequirements.join(', ')}` }),
  description: z.string({ error: 'expected a string' }).default(''),
  // `object` and `array` parameters take JSON: a default may be JSON text or written as YAML, kept as JSON text.
  default: z
    .union([scalarString, z.array(z.unknown()), z.record(z.string(), z.unknown())], { error: 'expected a string (or a number or boolean; a JSON value for object and array parameters)' })
    .transform((value) => (typeof value === 'string' ? value : JSON.stringify(value)))
    .optional(),
  options: z.array(scalarString, { error: 'expected a list of strings' }).optional(),
});
/** A declared recipe parameter after parsing. */
export type RecipeParameter = z.output<typeof recipeParameterSchema>;

const stringList = z.array(z.string(), { error: 'expected a list of strings' });
const stringMap = z.record(z.string(), scalarString, { error: 'expected a map of names to strings' });
const common = {
  name: z.string({ error: 'expected a string' }),
  description: z.string({ error: 'expected a string' }).optional(),
  display_name: z.string({ error: 'expected a string' }).optional(),
  timeout: z.number({ error: 'expected a number of seconds' }).int().nonnegative().optional(),
  bundled: z.boolean({ error: 'expected true or false' }).nullable().optional(),
  available_tools: stringList.optional(),
};

/** Recipe extensions, typed by `type` as in goose's ExtensionConfig. */
export const recipeExtensionSchema = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('builtin'), ...common }),
    z.looseObject({ type: z.literal('platform'), ...common }),
    z.looseObject({
      type: z.literal('stdio'),
      ...common,
      cmd: z.string({ error: 'expected the command to run (a string)' }),
      args: stringList.default([]),
      envs: stringMap.optional(),
      env_keys: stringList.optional(),
      cwd: z.string({ error: 'expected a string' }).optional(),
    }),
    z.looseObject({
      type: z.literal('streamable_http'),
      ...common,
      uri: z.string({ error: 'expected a URL (a string)' }),
      envs: stringMap.optional(),
      env_keys: stringList.optional(),
      headers: stringMap.optional(),
    }),
    z.looseObject({
      type: z.literal('frontend'),
      ...common,
      tools: z.array(z.unknown(), { error: 'expected a list of tool definitions' }).default([]),
      instructions: z.string({ error: 'expected a string' }).optional(),
    }),
    z.looseObject({
      type: z.literal('inline_python'),
      ...common,
      code: z.string({ error: 'expected Python source (a string)' }),
      dependencies: stringList.nullable().optional(),
    }),
  ],
  { error: 'expected an extension whose type is one of builtin, platform, stdio, streamable_http, frontend, inline_python' },
);
/** A recipe extension after parsing. */
export type RecipeExtension = z.output<typeof recipeExtensionSchema>;

/** A sub-recipe declared by a recipe. */
export const subRecipeSchema = z.looseObject({
  name: z.string({ error: 'expected a string' }).min(1, { error: 'expected a non-empty string' }),
  path: z.string({ error: 'expected a path relative to the recipe (a string)' }),
  values: stringMap.optional(),
  description: z.string({ error: 'expected a string' }).optional(),
  sequential_when_repeated: z.boolean({ error: 'expected true or false' }).optional(),
});
/** A sub-recipe declaration after parsing. */
export type SubRecipe = z.output<typeof subRecipeSchema>;

/**
 * One success check of `retry`: goose knows only shell checks (`type: shell`, also spelt `Shell`), each a
 * command whose exit status 0 means the check passed.
 */
export const retryCheckSchema = z.looseObject({
  type: z.enum(['shell', 'Shell'], { error: 'expected shell (the only check type goose knows)' }).transform((): 'shell' => 'shell'),
  command: z.string({ error: 'expected the shell command to run (a string)' }).min(1, { error: 'expected a non-empty command' }),
});

/** The whole recipe (the inner object of a desktop-saved `{recipe: {...}}` file). */
export const recipeSchema = z.looseObject({
  version: scalarString.default('1.0.0'),
  title: z.string({ error: 'expected a string (the recipe title is required)' }),
  description: z.string({ error: 'expected a string (the recipe description is required)' }),
  instructions: z.string({ error: 'expected a string' }).nullable().optional(),
  prompt: z.string({ error: 'expected a string' }).nullable().optional(),
  parameters: z.array(recipeParameterSchema, { error: 'expected a list of parameters' }).nullable().optional(),
  settings: z
    .looseObject({
      goose_provider: z.string({ error: 'expected a string' }).nullable().optional(),
      goose_model: z.string({ error: 'expected a string' }).nullable().optional(),
      temperature: z.number({ error: 'expected a number' }).nullable().optional(),
      max_turns: z.number({ error: 'expected a whole number ≥ 1' }).int().positive().nullable().optional(),
      /** errand's own setting: output-token limit of each model call. */
      max_output_tokens: z.number({ error: 'expected a whole number ≥ 1' }).int().positive().nullable().optional(),
      /** errand's own setting: the reasoning effort of each model call (one the chosen model's entry lists). */
      reasoning_effort: z.string({ error: 'expected an effort name such as "high"' }).min(1, { error: 'expected an effort name such as "high"' }).nullable().optional(),
      /** errand's own setting: wall-clock seconds a run of this recipe may take (a cap, decision 0027). */
      time_budget: z.number({ error: 'expected a whole number of seconds ≥ 1' }).int({ error: 'expected a whole number of seconds ≥ 1' }).positive({ error: 'expected a whole number of seconds ≥ 1' }).nullable().optional(),
      /** errand's own setting: US dollars a run of this recipe (with its subagents) may spend (a cap, decision 0027). */
      cost_budget_usd: z.number({ error: 'expected a number of US dollars, at least 0.000001' }).min(0.000001, { error: 'expected a number of US dollars, at least 0.000001 (one micro-dollar, the unit costs are counted in)' }).nullable().optional(),
    })
    .nullable()
    .optional(),
  extensions: z.array(recipeExtensionSchema, { error: 'expected a list of extensions' }).nullable().optional(),
  sub_recipes: z.array(subRecipeSchema, { error: 'expected a list of sub-recipes' }).nullable().optional(),
  response: z
    .looseObject({
      json_schema: z.record(z.string(), z.unknown(), { error: 'expected a JSON Schema object' }).optional(),
    })
    .nullable()
    .optional(),
  retry: z
    .looseObject({
      max_retries: z.number({ error: 'expected a whole number ≥ 1 (how many more attempts after the first)' }).int().min(1, { error: 'expected a whole number ≥ 1 (goose refuses 0)' }),
      checks: z.array(retryCheckSchema, { error: 'expected a list of checks ({type: shell, command: …})' }),
      timeout_seconds: z.number({ error: 'expected a whole number of seconds ≥ 1' }).int().min(1, { error: 'expected a whole number of seconds ≥ 1' }).nullable().optional(),
      on_failure: z.string({ error: 'expected a shell command (a string)' }).nullable().optional(),
      on_failure_timeout_seconds: z.number({ error: 'expected a whole number of seconds ≥ 1' }).int().min(1, { error: 'expected a whole number of seconds ≥ 1' }).nullable().optional(),
    })
    .nullable()
    .optional(),
  activities: z.array(z.string(), { error: 'expected a list of strings' }).nullable().optional(),
  author: z
    .looseObject({
      contact: z.string({ error: 'expected a string' }).nullable().optional(),
      metadata: z.string({ error: 'expected a string' }).nullable().optional(),
    })
    .nullable()
    .optional(),
});
/** A parsed recipe (JSON-only; unknown keys kept). */
export type RecipeDefinition = z.output<typeof recipeSchema>;

/**
 * Keys present in `value` that the schema does not know, as dotted paths (`extensions[2].colour`).
 * Walks objects, arrays, optionals and the extension union; free-form maps (values, envs, json_schema)
 * are not walked because any key is valid there.
 */
export function unknownRecipeKeys(value: unknown): string[] {
  const found: string[] = [];
  walkUnknownKeys(recipeSchema, value, '', found);
  return found;
}

function walkUnknownKeys(schema: z.ZodType, value: unknown, path: string, found: string[]): void {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) {
    walkUnknownKeys(schema.unwrap() as z.ZodType, value, path, found);
    return;
  }
  if (schema instanceof z.ZodArray && Array.isArray(value)) {
    value.forEach((item, index) => walkUnknownKeys(schema.element as z.ZodType, item, `${path}[${index}]`, found));
    return;
  }
  if (schema instanceof z.ZodDiscriminatedUnion && isRecord(value)) {
    const match = (schema.options as z.ZodType[]).find(
      (option) => option instanceof z.ZodObject && literalOf(option.shape.type) === value.type,
    );
    if (match) walkUnknownKeys(match, value, path, found);
    return;
  }
  if (schema instanceof z.ZodObject && isRecord(value)) {
    const shape = schema.shape as Record<string, z.ZodType>;
    for (const [key, child] of Object.entries(value)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      const childSchema = shape[key];
      if (childSchema === undefined) found.push(childPath);
      else walkUnknownKeys(childSchema, child, childPath, found);
    }
  }
}

function literalOf(schema: unknown): unknown {
  return schema instanceof z.ZodLiteral ? schema.value : undefined;
}

/** True for plain objects (not arrays, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

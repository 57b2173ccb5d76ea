import { type RecipeDefinition, type RecipeParameter } from '../contracts/recipe-schema';
import { isPlainObjectValue, type TemplateValue } from './template-values';

/** The variable every recipe template may use without declaring it: the recipe's folder. */
export const builtInRecipeDirVariable = 'recipe_dir';

/**
 * Checks declarations against the variables the template uses (found by the caller, which walks the
 * template's syntax tree). Mirrors goose's validation: every template variable is declared, every
 * declared parameter is used, optional parameters carry a default, `file` parameters have none (goose:
 * "to avoid importing sensitive user files"). Each message names the file and the parameter.
 */
export function checkParameterDeclarations(recipe: RecipeDefinition, templateVariables: readonly string[], file: string): string[] {
  const errors: string[] = [];
  const parameters = recipe.parameters ?? [];
  const declared = new Set(parameters.map((parameter) => parameter.key));
  const used = new Set(templateVariables.filter((name) => name !== builtInRecipeDirVariable));
  for (const name of [...used].sort()) {
    if (!declared.has(name)) {
      errors.push(`${file}: template variable "${name}" is not declared; add it to parameters (key: ${name}) or remove it from the template`);
    }
  }
  parameters.forEach((parameter, index) => {
    const where = `${file}: parameters[${index}] "${parameter.key}"`;
    if (parameter.key === builtInRecipeDirVariable) {
      errors.push(`${where}: recipe_dir is built in (the recipe's folder) and must not be declared`);
    } else if (!used.has(parameter.key)) {
      errors.push(`${where}: declared but never used in the recipe; use {{ ${parameter.key} }} or remove the declaration`);
    }
    if (parameter.requirement === 'optional' && parameter.default === undefined && parameter.input_type !== 'file') {
      errors.push(`${where}: optional parameters need a default value; add default: or make it required`);
    }
    if (parameter.input_type === 'file' && parameter.default !== undefined) {
      errors.push(`${where}: file parameters cannot have a default (it could import a sensitive file); remove default:`);
    }
    if ((parameter.input_type === 'object' || parameter.input_type === 'array') && parameter.default !== undefined) {
      const problem = jsonValueProblem(parameter.input_type, parameter.default);
      if (problem) errors.push(`${where}: default: ${problem}`);
    }
    if (parameter.input_type === 'select' && parameter.default !== undefined && !(parameter.options ?? []).includes(parameter.default)) {
      errors.push(`${where}: default "${parameter.default}" is not among options (${(parameter.options ?? []).join(', ')})`);
    }
  });
  return errors;
}

/** A parameter value as a model or API may pass it. */
export type ParameterInput = string | number | boolean;

/** Values ready for rendering (goose passes every value to the template as a string). */
export interface ParameterValues {
  values: Record<string, string>;
  errors: string[];
}

/**
 * Merges given values, fixed values (a sub-recipe's `values`, which win over given ones) and defaults,
 * then checks them: required values present, `select` values among `options`, numbers, booleans and
 * dates parse, no undeclared names. `file` values stay paths here; the caller reads the files.
 */
export function resolveParameterValues(
  parameters: readonly RecipeParameter[],
  given: Readonly<Record<string, ParameterInput>>,
  fixed: Readonly<Record<string, string>>,
  file: string,
): ParameterValues {
  const errors: string[] = [];
  const values: Record<string, string> = {};
  const declared = new Map(parameters.map((parameter) => [parameter.key, parameter]));
  for (const key of Object.keys(given)) {
    if (!declared.has(key)) {
      const known = parameters.map((parameter) => parameter.key);
      errors.push(`${file}: parameter "${key}" is not declared by this recipe; valid parameters: ${known.length > 0 ? known.join(', ') : '(none)'}`);
    }
  }
  for (const parameter of parameters) {
    const where = `${file}: parameter "${parameter.key}"`;
    const fixedValue = fixed[parameter.key];
    const givenValue = given[parameter.key];
    const raw = fixedValue ?? (givenValue === undefined ? parameter.default : String(givenValue));
    if (raw === undefined) {
      errors.push(`${where} (${parameter.input_type}) is required${parameter.description ? `: ${parameter.description}` : ''}`);
      continue;
    }
    const problem = checkValue(parameter, raw);
    if (problem) {
      errors.push(`${where}: ${problem}`);
      continue;
    }
    values[parameter.key] = parameter.input_type === 'boolean' ? raw.trim().toLowerCase() : raw;
  }
  return { values, errors };
}

function checkValue(parameter: RecipeParameter, raw: string): string | undefined {
  switch (parameter.input_type) {
    case 'number':
      return raw.trim() !== '' && Number.isFinite(Number(raw)) ? undefined : `expected a number, got "${raw}"`;
    case 'boolean':
      return /^(true|false)$/i.test(raw.trim()) ? undefined : `expected true or false, got "${raw}"`;
    case 'date':
      return /^\d{4}-\d{2}-\d{2}/.test(raw.trim()) && !Number.isNaN(Date.parse(raw.trim()))
        ? undefined
        : `expected a date (YYYY-MM-DD, optionally with a time), got "${raw}"`;
    case 'select': {
      const options = parameter.options ?? [];
      return options.includes(raw) ? undefined : `"${raw}" is not one of the options: ${options.join(', ')}`;
    }
    case 'file':
      return raw.trim() === '' ? 'expected a file path, got an empty value' : undefined;
    case 'object':
    case 'array':
      return jsonValueProblem(parameter.input_type, raw);
    default:
      return undefined;
  }
}

/** Parameters that must be supplied (required, or user_prompt without default: a subagent has no user to ask). */
export function requiredParameterKeys(parameters: readonly RecipeParameter[]): string[] {
  return parameters
    .filter((parameter) => parameter.default === undefined && parameter.requirement !== 'optional')
    .map((parameter) => parameter.key);
}

function parseJson(raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Why `raw` is not JSON of the parameter's shape (`object`: a JSON object; `array`: a JSON list), if it is not. */
export function jsonValueProblem(inputType: 'object' | 'array', raw: string): string | undefined {
  const example = inputType === 'object' ? '{"name": "value"}' : '["first", "second"]';
  const shown = raw.length > 80 ? `${raw.slice(0, 80)}…` : raw;
  const parsed = parseJson(raw);
  if (!parsed.ok) return `expected a JSON ${inputType === 'object' ? 'object' : 'array'} such as ${example}, got "${shown}" (${parsed.error})`;
  const fits = inputType === 'object' ? isPlainObjectValue(parsed.value) : Array.isArray(parsed.value);
  return fits ? undefined : `expected a JSON ${inputType === 'object' ? 'object' : 'array'} such as ${example}, got "${shown}"`;
}

/**
 * The values a template sees: text for every parameter (goose passes strings), except `object` and
 * `array` parameters, whose JSON is parsed so templates can use `.field` and loops. Values reach here
 * checked by {@link resolveParameterValues}; names not declared pass through as text (`recipe_dir`).
 */
export function templateValuesOf(parameters: readonly RecipeParameter[], values: Readonly<Record<string, string>>): Record<string, TemplateValue> {
  const result: Record<string, TemplateValue> = {};
  const types = new Map(parameters.map((parameter) => [parameter.key, parameter.input_type]));
  for (const [key, raw] of Object.entries(values)) {
    const type = types.get(key);
    const parsed = type === 'object' || type === 'array' ? parseJson(raw) : undefined;
    Object.defineProperty(result, key, { value: parsed?.ok ? (parsed.value as TemplateValue) : raw, enumerable: true, writable: true, configurable: true });
  }
  return result;
}

import { formatSchemaIssues } from '../contracts/schema-issues';
import { isRecord, recipeSchema, unknownRecipeKeys, type RecipeDefinition } from '../contracts/recipe-schema';

/** Outcome of reading a recipe object: the recipe when valid, plus every error and warning found. */
export interface RecipeParseResult {
  recipe?: RecipeDefinition;
  errors: string[];
  warnings: string[];
}

/**
 * Validates an already-parsed YAML/JSON document as a goose recipe. Pure (no I/O): YAML parsing
 * happens in src/sources so this stays usable from workflow code.
 *
 * A document of the form `{recipe: {...}}` (goose desktop's saved form) is read from the inner object.
 * Unknown keys are kept in the result and reported as warnings. `file` is only used in messages.
 */
export function parseRecipeDocument(document: unknown, file: string): RecipeParseResult {
  const inner = unwrapDesktopForm(document);
  if (!isRecord(inner)) {
    return { errors: [`${file}: top level: expected a recipe (a map with title, description and instructions or prompt)`], warnings: [] };
  }
  const warnings = unknownRecipeKeys(inner).map((path) => `${file}: ${path}: unknown field, ignored`);
  const parsed = recipeSchema.safeParse(inner);
  if (!parsed.success) {
    return { errors: formatSchemaIssues(file, parsed.error.issues, inner), warnings };
  }
  const recipe = parsed.data;
  warnings.push(...hiddenTagWarnings(recipe, file));
  const errors: string[] = [];
  const hasText = (text: string | null | undefined): boolean => typeof text === 'string' && text.trim() !== '';
  if (!hasText(recipe.instructions) && !hasText(recipe.prompt)) {
    errors.push(`${file}: instructions, prompt: at least one of the two is required (a non-empty string)`);
  }
  if (recipe.response && (!recipe.response.json_schema || Object.keys(recipe.response.json_schema).length === 0)) {
    errors.push(`${file}: response.json_schema: expected a non-empty JSON Schema object`);
  }
  const keys = new Set<string>();
  for (const [index, parameter] of (recipe.parameters ?? []).entries()) {
    if (keys.has(parameter.key)) {
      errors.push(`${file}: parameters[${index}].key: parameter "${parameter.key}" is declared twice; keys must be unique`);
    }
    keys.add(parameter.key);
    if (parameter.input_type === 'select' && (parameter.options ?? []).length === 0) {
      errors.push(`${file}: parameters[${index}].options: parameter "${parameter.key}" is a select and needs a non-empty options list`);
    }
  }
  const names = new Set<string>();
  for (const [index, subRecipe] of (recipe.sub_recipes ?? []).entries()) {
    if (names.has(subRecipe.name)) {
      errors.push(`${file}: sub_recipes[${index}].name: sub-recipe "${subRecipe.name}" is declared twice; names must be unique`);
    }
    names.add(subRecipe.name);
  }
  return errors.length > 0 ? { errors, warnings } : { recipe, errors, warnings };
}

/** `{recipe: {...}}` → the inner object; anything else unchanged. */
export function unwrapDesktopForm(document: unknown): unknown {
  if (isRecord(document) && isRecord(document.recipe) && document.title === undefined) return document.recipe;
  return document;
}

/** Unicode tag characters (U+E0000–U+E007F): invisible, and able to carry text a model reads but a person does not see. */
const tagCharacters = /[\u{E0000}-\u{E007F}]/u;

/** True when `text` holds Unicode tag characters. */
export function containsUnicodeTags(text: string): boolean {
  return tagCharacters.test(text);
}

/**
 * Warnings for hidden Unicode tag characters in the texts a model reads (`instructions`, `prompt`,
 * `activities`), as goose warns before it runs such a recipe.
 */
export function hiddenTagWarnings(recipe: Pick<RecipeDefinition, 'instructions' | 'prompt' | 'activities'>, file: string): string[] {
  const fields: [string, string | null | undefined][] = [
    ['instructions', recipe.instructions],
    ['prompt', recipe.prompt],
    ...(recipe.activities ?? []).map((activity, index): [string, string] => [`activities[${index}]`, activity]),
  ];
  return fields
    .filter(([, text]) => typeof text === 'string' && containsUnicodeTags(text))
    .map(([field]) => `${file}: ${field}: contains hidden Unicode tag characters (U+E0000–U+E007F), which can carry instructions a reader cannot see; check the file before running it`);
}

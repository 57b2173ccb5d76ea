import { checkParameterDeclarations } from '../domain/recipe-parameters';
import { parseRecipeDocument } from '../domain/recipe-parse';
import { type RecipeDefinition } from '../contracts/recipe-schema';
import { checkOutputSchema } from '../tools/output-schema';
import { templateVariables } from './template-engine';
import { parseYamlDocument } from './yaml-document';

/** A recipe file read and checked: the recipe when valid, with errors and warnings naming the file. */
export interface RecipeFileResult {
  recipe?: RecipeDefinition;
  /** Free template variables of the file (`recipe_dir` included when used). */
  templateVariables: string[];
  errors: string[];
  warnings: string[];
}

/**
 * Reads recipe text the way goose does: the raw file (template markup included) is parsed as YAML/JSON
 * and validated; the whole file is then scanned for template variables, which must match the declared
 * parameters. `file` names the file in messages (and picks JSON parsing for `.json`).
 */
export function readRecipeText(content: string, file: string): RecipeFileResult {
  const document = parseYamlDocument(content, file);
  if (!document.ok) return { templateVariables: [], errors: [document.error], warnings: [] };
  const parsed = parseRecipeDocument(document.value, file);
  const variables = templateVariables(content, file);
  if (!variables.ok) return { templateVariables: [], errors: [...parsed.errors, variables.error], warnings: parsed.warnings };
  if (!parsed.recipe) return { templateVariables: variables.variables, errors: parsed.errors, warnings: parsed.warnings };
  const errors = checkParameterDeclarations(parsed.recipe, variables.variables, file);
  // The structured-output schema becomes a tool's input schema: check it as a JSON Schema of an object now.
  const jsonSchema = parsed.recipe.response?.json_schema;
  if (jsonSchema !== undefined) {
    const checked = checkOutputSchema(jsonSchema, `${file}: response.json_schema`);
    if (!checked.ok) errors.push(...checked.errors);
  }
  return errors.length > 0
    ? { templateVariables: variables.variables, errors, warnings: parsed.warnings }
    : { recipe: parsed.recipe, templateVariables: variables.variables, errors, warnings: parsed.warnings };
}

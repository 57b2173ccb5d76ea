import { maxSourceFileBytes } from '../contracts/limits/sources';
import { confinePath, type PathRules } from '../tools/confine-path';
import { readConfined } from '../tools/open-confined';
import { type SourceSnapshot } from '../contracts/source';
import { builtInRecipeDirVariable, resolveParameterValues, templateValuesOf, type ParameterInput } from '../domain/recipe-parameters';
import { hiddenTagWarnings, parseRecipeDocument } from '../domain/recipe-parse';
import { type RecipeDefinition } from '../contracts/recipe-schema';
import { messageOf } from './directory-store';
import { formatBytes } from './source-store';
import { renderRecipeOffThread } from './template-thread';

/** A rendered source: text for the subagent, or every validation error. */
export type RenderedSource =
  | { ok: true; instructions?: string; prompt?: string; recipe?: RecipeDefinition; values: Record<string, string>; warnings?: string[] }
  | { ok: false; errors: string[] };

/** Options of {@link renderSource}. */
export interface RenderSourceOptions {
  /** Folder against which relative `file` parameter paths resolve (the session's working directory). */
  workingDirectory: string;
  /** The worker's path rules (denied folders), when rendering on a worker. */
  paths?: PathRules;
}

function isErrnoError(error: unknown): error is NodeJS.ErrnoException & { code: string } {
  return error instanceof Error && 'code' in error && typeof error.code === 'string';
}

/**
 * Renders a snapshot with parameter values (fixed sub-recipe values win). Like goose, the whole file is
 * rendered, so templated extension arguments and sub-recipe paths are rendered too; the values stay data
 * (recipe-render.ts): they land inside the recipe's strings and never change its structure.
 *
 * `file` parameters: the value is a path (relative to the working directory); the file's content is
 * substituted, as goose does. The file must exist, be at most 1 MiB, and be inside the working directory
 * (confined like a tool's path: a parameter must not read another tenant's files or errand's own).
 * Errors name the value given, never a server path.
 */
export async function renderSource(snapshot: SourceSnapshot, given: Readonly<Record<string, ParameterInput>>, options: RenderSourceOptions): Promise<RenderedSource> {
  const file = `${snapshot.store.description}: ${snapshot.path}`;
  if (snapshot.definition.type === 'agent') {
    const keys = Object.keys(given);
    if (keys.length > 0) return { ok: false, errors: [`${file}: agent ${snapshot.name} takes no parameters (got ${keys.join(', ')})`] };
    return { ok: true, instructions: snapshot.definition.agent.instructions, values: {} };
  }
  const resolved = resolveParameterValues(snapshot.parameters, given, snapshot.fixedValues, file);
  if (resolved.errors.length > 0) return { ok: false, errors: resolved.errors };
  const values: Record<string, string> = { ...resolved.values };
  const errors: string[] = [];
  for (const parameter of snapshot.parameters) {
    const value = values[parameter.key];
    if (parameter.input_type !== 'file' || value === undefined) continue;
    const refuse = (why: string) => errors.push(`${file}: parameter "${parameter.key}" (file): cannot read "${value}": ${why}`);
    try {
      const confined = await confinePath(options.workingDirectory, value, options.paths ?? {});
      if (!confined.ok) {
        refuse(confined.message);
        continue;
      }
      const read = await readConfined(confined, maxSourceFileBytes);
      if (read.ok) values[parameter.key] = read.content.toString('utf8');
      else if (read.reason === 'too-large') refuse(`file is ${formatBytes(read.size)}, over the ${formatBytes(maxSourceFileBytes)} limit`);
      else refuse(read.reason === 'missing' ? 'no such file' : 'not a regular file');
    } catch (error) {
      refuse(isErrnoError(error) ? error.code : messageOf(error));
    }
  }
  if (errors.length > 0) return { ok: false, errors };
  const templateValues = templateValuesOf(snapshot.parameters, { ...values, [builtInRecipeDirVariable]: snapshot.recipeDir });
  // In a rendering thread with a deadline: a template the engine's limits miss holds a thread, not the worker.
  const rendered = await renderRecipeOffThread(snapshot.content, templateValues, file, snapshot.path);
  if (!rendered.ok) return { ok: false, errors: [rendered.error] };
  const parsed = parseRecipeDocument(rendered.document, `${file} (rendered)`);
  if (!parsed.recipe) return { ok: false, errors: parsed.errors };
  const recipe = parsed.recipe;
  // Tag characters that arrive with a parameter value (the file's own are reported when it is listed).
  const tagWarnings = hiddenTagWarnings(snapshot.definition.recipe, file).length === 0 ? hiddenTagWarnings(recipe, `${file} (with the parameter values)`) : [];
  return {
    ok: true,
    ...(tagWarnings.length > 0 ? { warnings: tagWarnings } : {}),
    ...(recipe.instructions ? { instructions: recipe.instructions } : {}),
    ...(recipe.prompt ? { prompt: recipe.prompt } : {}),
    recipe,
    values: resolved.values,
  };
}

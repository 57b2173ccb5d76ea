import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { maxSourceFileBytes } from '../contracts/limits/sources';
import { builtInRecipeDirVariable, templateValuesOf } from '../domain/recipe-parameters';
import { parseRecipeDocument } from '../domain/recipe-parse';
import { type RecipeDefinition, type RecipeParameter } from '../contracts/recipe-schema';
import { readAgentText } from './agent-file';
import { messageOf } from './directory-store';
import { readRecipeText } from './recipe-file';
import { entryKindOf, fileStem, formatBytes } from './source-store';
import { renderTemplate } from './template-engine';
import { renderRecipeOffThread } from './template-thread';

/** Result of checking one file (`--json` prints an array of these). */
export interface RecipeCheckReport {
  file: string;
  ok: boolean;
  kind: 'recipe' | 'agent';
  /** Recipe: file stem; agent: frontmatter name (when readable). */
  name?: string;
  warnings: string[];
  errors: string[];
}

const usage = 'usage: errand recipes check <file or folder>... [--json]';
/** Folders never descended into when checking a folder. */
const skippedFolders = new Set(['node_modules', '.git']);

/**
 * `errand recipes check <file or folder>... [--json]`: validates recipe (.yaml/.yml/.json) and agent
 * (.md) files, folders recursively. Templates are rendered with the declared defaults (or a sample
 * value per type) to catch template errors. Exit code: 0 all ok, 1 some file failed, 2 usage error.
 */
export async function recipesCheckCommand(argv: string[], io: { stdout: (s: string) => void; stderr: (s: string) => void }): Promise<number> {
  const json = argv.includes('--json');
  const unknownFlags = argv.filter((arg) => arg.startsWith('-') && arg !== '--json');
  const targets = argv.filter((arg) => !arg.startsWith('-'));
  if (unknownFlags.length > 0 || targets.length === 0) {
    io.stderr(`${unknownFlags.length > 0 ? `unknown option ${unknownFlags.join(', ')}\n` : ''}${usage}\n`);
    return 2;
  }
  const files: string[] = [];
  for (const target of targets) {
    try {
      const info = await stat(target);
      if (info.isDirectory()) files.push(...(await collectFiles(target)));
      else files.push(target);
    } catch (error) {
      io.stderr(`${target}: cannot read: ${messageOf(error)}\n${usage}\n`);
      return 2;
    }
  }
  const reports: RecipeCheckReport[] = [];
  for (const file of files) reports.push(await checkFile(file));
  warnSameAgentNames(reports);
  if (json) io.stdout(`${JSON.stringify(reports, null, 2)}\n`);
  else {
    for (const report of reports) {
      io.stdout(`${report.ok ? 'ok  ' : 'FAIL'} ${report.file}${report.name ? ` (${report.kind} ${report.name})` : ''}\n`);
      for (const error of report.errors) io.stdout(`  error: ${error}\n`);
      for (const warning of report.warnings) io.stdout(`  warning: ${warning}\n`);
    }
    const failed = reports.filter((report) => !report.ok).length;
    io.stdout(`${reports.length} file(s) checked, ${failed} failed\n`);
  }
  return reports.every((report) => report.ok) ? 0 : 1;
}

/**
 * Agents are named by their `name`, not their file: two agent files of one name in what was checked
 * would hide one another in an agent folder (the first found wins), so the later one gets a warning.
 */
function warnSameAgentNames(reports: readonly RecipeCheckReport[]): void {
  const first = new Map<string, string>();
  for (const report of reports) {
    if (report.kind !== 'agent' || report.name === undefined) continue;
    const earlier = first.get(report.name);
    if (earlier === undefined) first.set(report.name, report.file);
    else report.warnings.push(`${report.file}: name: "${report.name}" is also the name of ${earlier}; in one agent folder the first found is used and this one is not`);
  }
}

/** Recipe and agent files under `folder`, recursively and sorted (skipping `node_modules` and `.git`). */
export async function collectFiles(folder: string): Promise<string[]> {
  const found: string[] = [];
  const entries = await readdir(folder, { withFileTypes: true });
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(folder, entry.name);
    if (entry.isDirectory()) {
      if (!skippedFolders.has(entry.name)) found.push(...(await collectFiles(full)));
    } else if (entry.isFile() && entryKindOf(entry.name)) found.push(full);
  }
  return found;
}

/** Checks one recipe or agent file, as `errand recipes check` does. */
export async function checkFile(file: string): Promise<RecipeCheckReport> {
  const kind = entryKindOf(file) ?? 'recipe';
  const report: RecipeCheckReport = { file, ok: false, kind, warnings: [], errors: [] };
  let content: string;
  try {
    const info = await stat(file);
    if (info.size > maxSourceFileBytes) {
      report.errors.push(`${file}: refused: file is ${formatBytes(info.size)}, over the ${formatBytes(maxSourceFileBytes)} limit for sources`);
      return report;
    }
    content = await readFile(file, 'utf8');
  } catch (error) {
    report.errors.push(`${file}: cannot read: ${messageOf(error)}`);
    return report;
  }
  if (kind === 'agent') {
    const result = readAgentText(content, file, {});
    if (result.agent) report.name = result.agent.name;
    report.errors.push(...result.errors);
    report.warnings.push(...result.warnings);
  } else {
    report.name = fileStem(file);
    const result = readRecipeText(content, file);
    report.errors.push(...result.errors);
    report.warnings.push(...result.warnings);
    if (result.recipe) {
      report.errors.push(...(await checkSubRecipePaths(result.recipe, file)));
      report.errors.push(...(await renderWithSamples(result.recipe, content, file)));
    }
  }
  report.ok = report.errors.length === 0;
  return report;
}

async function checkSubRecipePaths(recipe: RecipeDefinition, file: string): Promise<string[]> {
  const errors: string[] = [];
  const folder = dirname(resolve(file));
  for (const [index, subRecipe] of (recipe.sub_recipes ?? []).entries()) {
    const rendered = renderTemplate(subRecipe.path, { [builtInRecipeDirVariable]: folder }, file);
    if (!rendered.ok) {
      errors.push(`${file}: sub_recipes[${index}].path: ${rendered.error}`);
      continue;
    }
    const target = resolve(folder, rendered.text);
    try {
      if (!(await stat(target)).isFile()) throw new Error('not a file');
    } catch {
      errors.push(`${file}: sub_recipes[${index}].path: ${subRecipe.path} does not resolve to a file (looked for ${target})`);
    }
  }
  return errors;
}

/** A value that passes the type checks, for rendering without real inputs. */
function sampleValue(parameter: RecipeParameter): string {
  if (parameter.default !== undefined) return parameter.default;
  switch (parameter.input_type) {
    case 'number':
      return '1';
    case 'boolean':
      return 'true';
    case 'date':
      return '2025-01-01';
    case 'select':
      return parameter.options?.[0] ?? 'option';
    case 'file':
      return 'sample file content';
    case 'object':
      return '{}';
    case 'array':
      return '[]';
    default:
      return `sample ${parameter.key}`;
  }
}

/** Renders the file with sample values, in a rendering thread with its deadline (a file never hangs the check). */
async function renderWithSamples(recipe: RecipeDefinition, content: string, file: string): Promise<string[]> {
  const values: Record<string, string> = { [builtInRecipeDirVariable]: dirname(resolve(file)) };
  for (const parameter of recipe.parameters ?? []) values[parameter.key] = sampleValue(parameter);
  // Lenient: a sample `{}` for an object parameter has none of the fields the template reads.
  const rendered = await renderRecipeOffThread(content, templateValuesOf(recipe.parameters ?? [], values), file, file, { undefinedBehavior: 'lenient' });
  if (!rendered.ok) return [`${rendered.error} (rendering with default or sample values)`];
  return parseRecipeDocument(rendered.document, `${file} (rendered)`).errors;
}
